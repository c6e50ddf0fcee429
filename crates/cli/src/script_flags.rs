//! `run --script PATH.py [-- ARGS…]`: a person's training script as the
//! sweep request's model, its arguments as the request's alternatives.

use trainbench_app::sweep::SweepRequest;
use trainbench_core::models::script::PREFIX;
use trainbench_core::Framework;

use crate::error::{bad, CliError};

/// The flags a script takes, as `run` read them (the command line and the
/// TOML file merged).
pub struct ScriptFlags<'a> {
    pub script: Option<&'a str>,
    pub script_args: &'a [String],
    pub script_argv: &'a [String],
    /// Whether --framework was given (a script's default is pytorch).
    pub framework_given: bool,
    pub batch_size: Option<&'a str>,
}

/// Sets `req` for `--script` (the model, its arguments, the framework's
/// default); refuses the flags that only a script takes when it is absent.
pub fn apply(a: &ScriptFlags<'_>, req: &mut SweepRequest) -> Result<(), CliError> {
    let Some(path) = a.script else {
        if let Some(first) = a.script_argv.first().or(a.script_args.first()) {
            return Err(bad(
                "script_args",
                format!("script_args = {first} is not allowed: expected --script PATH.py to pass them to"),
            ));
        }
        return Ok(());
    };
    if let Some(b) = a.batch_size {
        return Err(bad(
            "batch_size",
            format!("batch_size = {b} is not allowed with --script: expected no value (the script sets its own batch: pass it in its arguments)"),
        ));
    }
    if !a.script_argv.is_empty() && !a.script_args.is_empty() {
        return Err(bad(
            "script_args",
            format!(
                "script_args = {} is not allowed with arguments after --: expected one of the two",
                a.script_args[0]
            ),
        ));
    }
    req.model = vec![format!("{PREFIX}{path}")];
    req.batch_size = vec![0];
    if !a.framework_given {
        req.framework = vec![Framework::Pytorch.to_string()];
    }
    req.script_args = if a.script_argv.is_empty() {
        a.script_args.to_vec()
    } else {
        let joined = shlex::try_join(a.script_argv.iter().map(String::as_str)).map_err(|_| {
            bad(
                "script_args",
                "script_args is not allowed: expected arguments without NUL characters".to_owned(),
            )
        })?;
        vec![joined]
    };
    Ok(())
}

/// The script's keys of a `--config` TOML file (`script`, `script_args`: an
/// array, each element one alternative); `false` for any other key. A flag given on the command line wins.
pub fn from_config(
    key: &str,
    value: &toml::Value,
    script: &mut Option<String>,
    script_args: &mut Vec<String>,
    no_argv: bool,
) -> bool {
    match key {
        "script" => {
            if script.is_none() {
                *script = Some(toml_str(value));
            }
        }
        "script_args" => {
            if script_args.is_empty() && no_argv {
                *script_args = match value.as_array() {
                    Some(list) => list.iter().map(toml_str).collect(),
                    None => vec![toml_str(value)],
                };
            }
        }
        _ => return false,
    }
    true
}

/// A TOML value as a comma-separated string (arrays join), as `run`'s
/// flags take it.
pub fn toml_str(v: &toml::Value) -> String {
    match v {
        toml::Value::Array(a) => a.iter().map(toml_str).collect::<Vec<_>>().join(","),
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

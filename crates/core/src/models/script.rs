//! A person's own training loop: `script:PATH.py`, a Python script that
//! reports its steps through the studio's `trainbench` module
//! (`trainbench.step(samples=…, loss=…)` after each optimizer step).
//!
//! The script is code: it runs only when a person asks for a run now and
//! names the file. The application reads it when it plans the run and
//! records its SHA-256 here; the worker hashes the bytes it is about to run
//! and refuses them when they differ. The script chooses its own model, data,
//! batch, precision and length; the studio times what it reports.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::SpecError;

/// How a script is named in a run's `model` field.
pub const PREFIX: &str = "script:";

/// Whether a model name (one item of a list, trimmed or not) names a
/// person's own code: a model file (`PATH.py:FUNCTION`), a training script
/// (`script:PATH.py`), or anything naming a `.py` file. What refuses to run
/// such code unasked (an agent's request, an imported run) asks this.
pub fn names_own_code(model: &str) -> bool {
    let m = model.trim();
    super::FileRef::looks_like(m) || m.contains(".py") || m.starts_with(PREFIX)
}
/// Arguments passed to one script, at most.
pub const MAX_ARGS: usize = 256;
/// Longest argument accepted.
const MAX_ARG: usize = 4096;

/// Where a script lives: a `.py` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScriptRef {
    pub path: String,
}

impl ScriptRef {
    /// `Ok(None)` for a name that is not a script; otherwise the parsed
    /// reference (the path may be relative: [`ScriptRef::require_absolute`]).
    pub fn parse(text: &str) -> Result<Option<ScriptRef>, SpecError> {
        let Some(path) = text.strip_prefix(PREFIX) else {
            return Ok(None);
        };
        super::file::check_python_path(text, path, PREFIX, "script:PATH.py")?;
        Ok(Some(ScriptRef {
            path: path.to_owned(),
        }))
    }

    /// Refuses a relative path (a stored run names the file it read).
    pub fn require_absolute(&self) -> Result<(), SpecError> {
        super::file::require_absolute(&self.path, &self.to_string(), "script:PATH.py")
    }

    /// The file's name without its folder (`train.py`), for labels.
    pub fn short(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

impl fmt::Display for ScriptRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", self.path)
    }
}

/// Checks a script's arguments: at most [`MAX_ARGS`], each one line of at
/// most 4,096 characters (they reach the script as `sys.argv`, never a shell).
pub fn check_args(args: &[String]) -> Result<(), SpecError> {
    if args.len() > MAX_ARGS {
        return Err(SpecError::new(
            "script_args",
            format!("{} arguments", args.len()),
            &format!("at most {MAX_ARGS} arguments"),
        ));
    }
    for a in args {
        if a.len() > MAX_ARG || a.chars().any(|c| c == '\n' || c == '\r' || c == '\0') {
            let shown: String = a.chars().filter(|c| !c.is_control()).take(60).collect();
            return Err(SpecError::new(
                "script_args",
                shown,
                &format!("arguments of at most {MAX_ARG} characters on one line"),
            ));
        }
    }
    Ok(())
}

/// One argument as a command line shows it: quoted in single quotes where
/// a shell would split or expand it (for reading only: arguments reach the
/// script as `sys.argv`, never through a shell).
fn shown(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=.,:/+@%".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// The arguments as a command line shows them (`--lr 1e-3 --name 'a b'`).
pub fn args_text(args: &[String]) -> String {
    args.iter().map(|a| shown(a)).collect::<Vec<_>>().join(" ")
}

/// A run's model as its row names it: `script:PATH.py` and the arguments
/// (`script:/w/train.py --lr 1e-3`), so that a sweep over arguments reads
/// apart in every table.
pub fn row_model(model: &str, args: &[String]) -> String {
    if args.is_empty() {
        model.to_owned()
    } else {
        format!("{model} {}", args_text(args))
    }
}

/// A row's script model as a label shows it: the file's name and the
/// arguments (`train.py --lr 1e-3`); `None` for other models.
pub fn short_label(row_model: &str) -> Option<String> {
    let rest = row_model.strip_prefix(PREFIX)?;
    let (path, args) = match rest.find(".py ") {
        Some(i) => (&rest[..i + 3], &rest[i + 3..]),
        None => (rest, ""),
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    Some(format!("{name}{args}"))
}

/// A script's configuration, as the worker receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScriptConfig {
    #[serde(flatten)]
    pub script: ScriptRef,
    /// The SHA-256 of the bytes the studio read when it planned the run.
    pub sha256: String,
    /// The script's arguments (`sys.argv[1:]`).
    pub args: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_references_parse_and_bad_ones_name_the_field() {
        assert_eq!(ScriptRef::parse("resnet_mini").unwrap(), None);
        assert_eq!(ScriptRef::parse("/a/m.py:build").unwrap(), None);
        let r = ScriptRef::parse("script:/home/a/my train.py")
            .unwrap()
            .unwrap();
        assert_eq!(r.path, "/home/a/my train.py");
        assert_eq!(r.short(), "my train.py");
        assert_eq!(r.to_string(), "script:/home/a/my train.py");
        assert!(r.require_absolute().is_ok());
        let rel = ScriptRef::parse("script:train.py").unwrap().unwrap();
        assert_eq!(rel.require_absolute().unwrap_err().field, "model");
        for bad in [
            "script:",
            "script:/a/train.sh",
            "script:/a/.py",
            "script:a\nb.py",
        ] {
            let e = ScriptRef::parse(bad).unwrap_err();
            assert_eq!(e.field, "model", "{bad}");
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }

    #[test]
    fn a_row_names_the_script_and_its_arguments() {
        let args = vec![
            "--lr".to_owned(),
            "1e-3".to_owned(),
            "a b".to_owned(),
            "it's".to_owned(),
        ];
        let row = row_model("script:/w/my dir/train.py", &args);
        assert_eq!(row, r"script:/w/my dir/train.py --lr 1e-3 'a b' 'it'\''s'");
        assert_eq!(
            short_label(&row).unwrap(),
            r"train.py --lr 1e-3 'a b' 'it'\''s'"
        );
        assert_eq!(short_label("script:/w/train.py").unwrap(), "train.py");
        assert_eq!(short_label("resnet_mini"), None);
    }

    #[test]
    fn script_arguments_are_bounded_lines() {
        assert!(check_args(&["--lr".into(), "1e-3".into(), "a b".into()]).is_ok());
        assert_eq!(
            check_args(&["a\nb".into()]).unwrap_err().field,
            "script_args"
        );
        let many = vec![String::from("x"); MAX_ARGS + 1];
        assert_eq!(check_args(&many).unwrap_err().field, "script_args");
    }
}

//! A person's training scripts (`script:PATH.py`), read when a sweep is
//! planned like a model file: the path made absolute, the file read (a
//! bounded, regular UTF-8 file) and hashed; and the request's argument
//! alternatives, split as a shell would split them (never run by one).
//!
//! Nothing here runs the script. It runs only in a worker of a run planned
//! now from a path the person gave.

use trainbench_core::models::script::check_args;
use trainbench_core::models::ScriptRef;

use super::model_file::{read_python, sha256_hex, ModelFiles, ReadModelFile};
use super::{Rejected, SweepRequest};

/// Reads one script named `given` (already parsed as `r`).
pub(super) fn read(given: &str, r: &ScriptRef) -> Result<ReadModelFile, Rejected> {
    let (path, bytes) = read_python(given, &r.path, "a Python training script")?;
    Ok(ReadModelFile {
        model: format!(
            "{}{}",
            trainbench_core::models::script::PREFIX,
            path.display()
        ),
        sha256: sha256_hex(&bytes),
        bytes,
    })
}

/// Reads every script the request names into `files`; on this machine only.
pub(super) fn read_scripts(
    req: &SweepRequest,
    on_host: Option<&str>,
    files: &mut ModelFiles,
    rejected: &mut Vec<Rejected>,
) {
    for given in &req.model {
        let r = match ScriptRef::parse(given) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                rejected.push(Rejected::shared("model", e.to_string()));
                continue;
            }
        };
        if let Some(host) = on_host {
            rejected.push(Rejected::shared(
                "host",
                format!(
                    "host = {host} is not allowed with the training script {given}: expected this machine (a script runs where it is read)"
                ),
            ));
            continue;
        }
        match read(given, &r) {
            Ok(f) => files.insert(given, f),
            Err(e) => rejected.push(e),
        }
    }
}

/// The request's argument alternatives, each split as a shell splits a
/// command line (quotes group, nothing expands); one empty alternative when
/// none is given. Given without a script, refused.
pub(super) fn argument_alternatives(
    req: &SweepRequest,
    rejected: &mut Vec<Rejected>,
) -> Vec<Vec<String>> {
    if req.script_args.is_empty() {
        return vec![Vec::new()];
    }
    if !req
        .model
        .iter()
        .any(|m| m.starts_with(trainbench_core::models::script::PREFIX))
    {
        rejected.push(Rejected::shared(
            "script_args",
            format!(
                "script_args = {} is not allowed: expected a training script (--script PATH.py) to pass them to",
                req.script_args[0]
            ),
        ));
        return vec![Vec::new()];
    }
    let mut out: Vec<Vec<String>> = Vec::new();
    for text in &req.script_args {
        let Some(args) = shlex::split(text) else {
            rejected.push(Rejected::shared(
                "script_args",
                format!("script_args = {text} is not allowed: expected arguments as on a command line, every quote closed"),
            ));
            continue;
        };
        if let Err(e) = check_args(&args) {
            rejected.push(Rejected::shared("script_args", e.to_string()));
        } else if out.contains(&args) {
            rejected.push(Rejected::shared(
                "script_args",
                format!("script_args = {text} is given twice: expected each alternative once"),
            ));
        } else {
            out.push(args);
        }
    }
    out
}

/// The arguments as a label shows them (` --lr 1e-3`), quoted where a
/// shell would need it, as the stored run's configuration shows them.
pub(super) fn args_label(args: &[String]) -> String {
    if args.is_empty() {
        return String::new();
    }
    format!(" {}", trainbench_core::models::script::args_text(args))
}

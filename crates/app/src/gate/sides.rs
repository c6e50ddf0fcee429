//! The two sides of a gate as sweep requests: the shared run settings with
//! what one side changes (a script, a model, variables, a framework
//! environment or release, or a revision of the shared script in git).
//!
//! A revision is read with `git show REV:./NAME` in the script's folder (git
//! started without a shell, the revision refused when it could be read as an
//! option) into the studio's own copy (`$TRAINBENCH_HOME/gate/SHA-256/NAME`),
//! which is then read, hashed and kept like any script: the code runs
//! because the person named the revision now.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use trainbench_core::gate::Side;
use trainbench_core::models::script::PREFIX;
use trainbench_core::models::ScriptRef;

use crate::error::{AppError, AppResult};
use crate::sweep::model_file::sha256_hex;
use crate::sweep::SweepRequest;

/// What one side changes of the shared run settings (at least one field for
/// one of the two sides; none: the settings as they are).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideChange {
    /// A training script (`PATH.py`), run as `run --script` runs it.
    pub script: Option<String>,
    /// A model (a catalogue name, `timm:…`, `PATH.py:FUNCTION`).
    pub model: Option<String>,
    /// Environment variables, `NAME=VALUE[;…]` or `default` (as `run --env`).
    pub env: Option<String>,
    /// A framework environment or release (`pytorch@NAME`, `jax==0.7.2`).
    pub framework: Option<String>,
    /// A git revision of the shared script (`run --script`).
    pub git_rev: Option<String>,
}

impl SideChange {
    pub fn is_empty(&self) -> bool {
        *self == SideChange::default()
    }
}

/// The flag of `side`'s `what` (`candidate_script`), as errors name it.
pub fn field(side: Side, what: &str) -> String {
    format!("{}_{what}", side.key())
}

/// `side`'s request: `base` with the side's change applied, and the side in
/// words. `copies` is the folder revisions are copied into.
pub fn side_request(
    base: &SweepRequest,
    side: Side,
    change: &SideChange,
    copies: &Path,
) -> AppResult<(SweepRequest, String)> {
    let mut req = base.clone();
    req.repeats = 1;
    let mut said = Vec::new();
    if let Some(s) = &change.script {
        req.model = vec![format!("{PREFIX}{s}")];
        req.batch_size = vec![0];
        said.push(format!("script {s}"));
    }
    if let Some(m) = &change.model {
        req.model = vec![m.clone()];
        said.push(format!("model {m}"));
    }
    if let Some(e) = &change.env {
        req.env = vec![e.clone()];
        said.push(format!("env {e}"));
    }
    if let Some(f) = &change.framework {
        req.framework = vec![f.clone()];
        said.push(format!("framework {f}"));
    }
    if let Some(rev) = &change.git_rev {
        let (copy, commit, name) = copy_at_revision(&req, side, rev, copies)?;
        req.model = vec![format!("{PREFIX}{}", copy.display())];
        said.push(format!(
            "{name} at {rev} ({})",
            &commit[..12.min(commit.len())]
        ));
    }
    if said.is_empty() {
        said.push("the shared run settings".into());
    }
    Ok((req, said.join(", ")))
}

/// The shared script of `req` at revision `rev`, copied into `copies`: the
/// copy's path, the commit and the script's file name.
fn copy_at_revision(
    req: &SweepRequest,
    side: Side,
    rev: &str,
    copies: &Path,
) -> AppResult<(PathBuf, String, String)> {
    let name = field(side, "git_rev");
    let script = match req.model.as_slice() {
        [one] => ScriptRef::parse(one).ok().flatten(),
        _ => None,
    }
    .ok_or_else(|| {
        AppError::bad(
            "git_rev",
            format!("git_rev = {rev} is not allowed without a training script: expected --script PATH.py, a file in a git repository, to read at each revision"),
        )
    })?;
    if rev.is_empty() || rev.starts_with('-') || rev.chars().any(char::is_control) {
        return Err(AppError::bad_input(
            &name,
            format!("{rev:?}"),
            "a git revision (a commit, branch or tag; not starting with -)",
        ));
    }
    let path = std::path::absolute(&script.path).unwrap_or_else(|_| PathBuf::from(&script.path));
    let (dir, file) = match (path.parent(), path.file_name()) {
        (Some(d), Some(f)) => (d.to_path_buf(), f.to_string_lossy().into_owned()),
        _ => {
            return Err(AppError::bad_input(
                "script",
                path.display(),
                "a Python file in a git repository",
            ))
        }
    };
    let git = |args: &[&str]| -> AppResult<Vec<u8>> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(args)
            .output()
            .map_err(|e| {
                AppError::bad(
                    "git_rev",
                    format!("git_rev: cannot start git ({e}): expected git installed"),
                )
            })?;
        if out.status.success() {
            return Ok(out.stdout);
        }
        let why = String::from_utf8_lossy(&out.stderr);
        Err(AppError::bad(
            &name,
            format!(
                "{name} = {rev} is not allowed: expected a revision of the git repository holding {} in which the file exists (git: {})",
                path.display(),
                trainbench_core::text::cut(why.trim().to_owned(), 300)
            ),
        ))
    };
    let commit = String::from_utf8_lossy(&git(&[
        "rev-parse",
        "--verify",
        "--end-of-options",
        &format!("{rev}^{{commit}}"),
    ])?)
    .trim()
    .to_owned();
    let bytes = git(&["show", &format!("{commit}:./{file}")])?;
    let folder = copies.join(sha256_hex(&bytes));
    let copy = folder.join(&file);
    std::fs::create_dir_all(&folder)
        .map_err(|e| AppError::Internal(format!("cannot make {}: {e}", folder.display())))?;
    trainbench_files::write_atomic("git_rev", &copy, &bytes)
        .map_err(|e| AppError::Internal(format!("cannot write {}: {e}", copy.display())))?;
    Ok((copy, commit, file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_change_sets_its_setting_and_says_it() {
        let base = SweepRequest::default();
        let dir = std::env::temp_dir();
        let change = SideChange {
            env: Some("XLA_FLAGS=--xla_cpu_multi_thread_eigen=false".into()),
            framework: Some("jax".into()),
            ..SideChange::default()
        };
        let (req, said) = side_request(&base, Side::Candidate, &change, &dir).unwrap();
        assert_eq!(
            req.env,
            vec!["XLA_FLAGS=--xla_cpu_multi_thread_eigen=false"]
        );
        assert_eq!(req.framework, vec!["jax"]);
        assert!(
            said.contains("env XLA_FLAGS") && said.contains("framework jax"),
            "{said}"
        );
        let script = SideChange {
            script: Some("b.py".into()),
            ..SideChange::default()
        };
        let (req, _) = side_request(&base, Side::Baseline, &script, &dir).unwrap();
        assert_eq!(
            (req.model, req.batch_size),
            (vec!["script:b.py".to_owned()], vec![0])
        );
        let (_, said) = side_request(&base, Side::Baseline, &SideChange::default(), &dir).unwrap();
        assert_eq!(said, "the shared run settings");
    }

    #[test]
    fn a_revision_needs_a_script_and_may_not_read_as_an_option() {
        let dir = std::env::temp_dir();
        let change = SideChange {
            git_rev: Some("HEAD".into()),
            ..SideChange::default()
        };
        let e = side_request(&SweepRequest::default(), Side::Baseline, &change, &dir).unwrap_err();
        assert_eq!(e.field(), Some("git_rev"));
        let base = SweepRequest {
            model: vec!["script:train.py".into()],
            ..SweepRequest::default()
        };
        let option = SideChange {
            git_rev: Some("--output=/tmp/x".into()),
            ..SideChange::default()
        };
        let e = side_request(&base, Side::Candidate, &option, &dir).unwrap_err();
        assert_eq!(e.field(), Some("candidate_git_rev"), "{e}");
    }
}

//! A stored run's configuration planned again on this machine
//! (`trainbench rerun ID`): its spec as stored, its framework and
//! environment, checked as a new run would be.
//!
//! A model file (or a training script) is read again from its path, never taken from the copy the
//! store keeps: a file that is gone is refused, and one whose bytes changed
//! since the run read them is refused naming the path and both SHA-256s,
//! unless the person asks to run it as it is now (`allow_changed`).

use trainbench_core::models::{script, FileRef, ScriptRef};
use trainbench_core::spec::{check_runnable, CheckedSpec, Machine, RawSpec};
use trainbench_store::Store;

use super::model_file::{self, ModelFiles};
use super::{resolve_framework, PlannedConfig, SweepPlan};
use crate::error::{AppError, AppResult};

/// What to plan again.
#[derive(Debug, Clone, Copy)]
pub struct Again {
    pub run: i64,
    pub repeats: u32,
    /// Run a model file whose bytes changed since the stored run read them.
    pub allow_changed: bool,
}

/// The framework as a sweep names it: `tch`, `pytorch`,
/// `pytorch@ENVIRONMENT` or a release (`jax==0.7.2`).
fn framework_given(framework: &str, environment: Option<&str>) -> String {
    match environment {
        Some(e) if e.contains("==") => e.to_owned(),
        Some(e) => format!("{framework}@{e}"),
        None => framework.to_owned(),
    }
}

/// The model file of `raw` read again from its path and held against the
/// SHA-256 the run stored; the plan's files and a note when it changed and
/// the person allowed it.
fn read_again(raw: &mut RawSpec, again: Again, notes: &mut Vec<String>) -> AppResult<ModelFiles> {
    let given = raw.model.clone();
    // A model file or a training script: both read again from their path.
    let (path, read) = if let Ok(Some(f)) = FileRef::parse(&given) {
        (f.path.clone(), model_file::read(&given, &f))
    } else if let Ok(Some(s)) = ScriptRef::parse(&given) {
        (s.path.clone(), super::script::read(&given, &s))
    } else {
        return Ok(ModelFiles::default());
    };
    let run = again.run;
    let stored = raw.model_sha256.clone().unwrap_or_default();
    let now = read.map_err(|r| {
        AppError::bad(
            "model",
            format!(
                "model = {given} cannot be run again: {} (run {run} trained the file with SHA-256 {stored}; its copy is kept in the database, `trainbench show {run}`, and is never run)",
                r.message
            ),
        )
    })?;
    if now.sha256 != stored {
        if !again.allow_changed {
            return Err(AppError::bad(
                "model",
                format!(
                    "model = {given} changed since run {run} trained it: {} had SHA-256 {stored} then and has {} now; expected the same file, or --allow-changed to run it as it is now",
                    path, now.sha256
                ),
            ));
        }
        notes.push(format!(
            "{} changed since run {run} trained it (SHA-256 {stored} then, {} now): running it as it is now (--allow-changed)",
            path, now.sha256
        ));
        raw.model_sha256 = Some(now.sha256.clone());
    }
    Ok(ModelFiles::one(&given, now))
}

/// The stored run's configuration, planned again on this machine.
pub fn plan_again(store: &Store, again: Again, machine: Machine) -> AppResult<SweepPlan> {
    let run = again.run;
    let detail = store.run_detail(run)?;
    if let Some(remote) = store.remote_run(run)? {
        return Err(AppError::bad(
            "run",
            format!(
                "run = {run} is not allowed: it trained on host {}; expected a run of this machine (`rerun` runs here; give the run's flags with --host {} to run there)",
                remote.host, remote.host
            ),
        ));
    }
    // Decided by what the model names, not by the hash beside it: an
    // imported session's configuration may carry none.
    let own_code = detail
        .spec
        .get("model_sha256")
        .is_some_and(|v| !v.is_null())
        || detail
            .spec
            .get("model")
            .and_then(|m| m.as_str())
            .is_some_and(script::names_own_code);
    if let (Some(origin), true) = (&detail.row.origin, own_code) {
        // A path from another machine's session names no file the person
        // chose here: their code runs only from a file they name now.
        return Err(AppError::bad(
            "run",
            format!(
                "run = {run} is not allowed: it was imported from {} and trained a person's own file; expected a run of this database (name the file yourself: `trainbench run --model PATH.py:FUNCTION` or `--script PATH.py`)",
                origin.hostname
            ),
        ));
    }
    let mut raw: RawSpec = serde_json::from_value(detail.spec.clone()).map_err(|e| {
        AppError::bad(
            "run",
            format!(
                "run = {run} cannot be run again: its stored configuration does not read ({e})"
            ),
        )
    })?;
    let mut notes = Vec::new();
    let model_files = read_again(&mut raw, again, &mut notes)?;
    let row = &detail.row;
    let given = framework_given(row.framework.as_str(), row.environment.as_deref());
    let (framework, env, worker) = resolve_framework(&given).map_err(AppError::from)?;
    let spec = CheckedSpec::new(raw)
        .and_then(|c| check_runnable(&c.spec, framework, &[framework], machine).map(|()| c))
        .map_err(|e| {
            AppError::bad(
                &e.field,
                format!("run {run} cannot be run again on this machine: {e}"),
            )
        })?;
    let label = format!("{given} {} (run {run} again)", row.model);
    Ok(SweepPlan {
        configs: vec![PlannedConfig {
            framework,
            env,
            spec,
            label,
            worker,
            batch_search: None,
            searched: None,
            remote: None,
        }],
        rejected: Vec::new(),
        repeats: again.repeats,
        memory_limit_bytes: None,
        epoch_samples: None,
        notes,
        to_install: Vec::new(),
        model_files,
    })
}

impl crate::Workspace {
    /// A stored run's configuration planned again on this machine.
    pub fn plan_again(&self, again: Again, host: &crate::Host) -> AppResult<SweepPlan> {
        plan_again(&self.store, again, host.machine())
    }
}

#[cfg(test)]
mod tests {
    use super::framework_given;

    #[test]
    fn a_stored_environment_is_named_as_a_sweep_names_it() {
        assert_eq!(framework_given("pytorch", None), "pytorch");
        assert_eq!(framework_given("jax", Some("jax==0.7.2")), "jax==0.7.2");
        assert_eq!(
            framework_given("pytorch", Some("nightly")),
            "pytorch@nightly"
        );
    }
}

//! Starting a job at its place ([`crate::place`]: the agent detached on an
//! ssh host, a Slurm batch job, a Ray job); the run's folder and the
//! place's job id recorded, then followed to the end.

use std::sync::Arc;

use tokio::sync::watch;
use trainbench_core::summary::RunStatus;
use trainbench_core::Framework;
use trainbench_runner::{Progress, RunnerOptions};

use crate::agent::{RemoteJob, SentModelFile};
use crate::error::{RemoteError, RemoteResult};
use crate::follow::{follow, remote_run_of};
use crate::hosts::RemoteHost;
use crate::place::Launch;
use trainbench_core::spec::CheckedSpec;
use trainbench_probe::GpuProbe;
use trainbench_runner::{Finished, WorkerCommand};
use trainbench_store::Store;

/// Where a job runs: the planner marks jobs for a host with it.
#[derive(Debug, Clone)]
pub struct RemoteTarget {
    pub host: Arc<RemoteHost>,
    /// The run was started there already: follow its journal again
    /// (`attach`) instead of starting it.
    pub attach: bool,
}

/// A queued run to start on a host: its id, its checked spec, and the
/// worker and memory limit the planner chose.
#[derive(Debug, Clone, Copy)]
pub struct HostJob<'a> {
    pub run_id: i64,
    pub spec: &'a CheckedSpec,
    pub worker: &'a WorkerCommand,
    pub memory_limit_bytes: Option<u64>,
}

/// Starts a queued job on its host (or, for a run started there already,
/// follows its journal again) and follows it to its end. `gpu` is this
/// machine's probe, for the summary's provenance.
pub async fn run_job(
    store: &mut Store,
    gpu: &GpuProbe,
    target: &RemoteTarget,
    job: HostJob<'_>,
    opts: RunnerOptions,
    progress: &mut dyn Progress,
    cancel: watch::Receiver<bool>,
) -> RemoteResult<Finished> {
    if target.attach {
        return crate::follow::attach(store, gpu, job.run_id, progress, cancel).await;
    }
    let h = &target.host;
    let inv = h.inventory()?;
    let name = format!(
        "{}-run{}-{}",
        trainbench_store::hostname().replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_"),
        job.run_id,
        trainbench_store::now_unix_ms()
    );
    let model_file = match sent_model_file(store, job.spec) {
        Ok(m) => m,
        Err(reason) => return failed_to_start(store, job.run_id, reason),
    };
    let remote = RemoteJob {
        framework: job.worker.plan_for.unwrap_or(Framework::Tch),
        environment: store.run_row(job.run_id)?.environment.clone(),
        spec: job.spec.raw.clone(),
        worker: job.worker.clone(),
        memory_limit_bytes: job.memory_limit_bytes.or(opts.memory_limit_bytes),
        silence_timeout_s: opts.silence_timeout.as_secs(),
        model_file,
    };
    let text = serde_json::to_vec(&remote).map_err(|e| RemoteError::Internal(e.to_string()))?;
    let launcher = crate::place::launcher(h);
    let launch = Launch {
        run_id: job.run_id,
        spec: job.spec,
        job_json: &text,
        inv,
        name: &name,
    };
    let started = match launcher.start(&launch) {
        Ok(s) => s,
        Err(e) => {
            let reason = format!("could not start the run on host {}: {e}", h.name);
            return failed_to_start(store, job.run_id, reason);
        }
    };
    store.insert_remote_run(job.run_id, &h.name, &h.url.to_string(), &started.dir)?;
    if let Some(id) = &started.place_job {
        store.set_place_job(job.run_id, id)?;
    }
    if let Some(said) = &started.said {
        progress.log(job.run_id, said);
    }
    let rr = remote_run_of(store, job.run_id)?;
    follow(store, gpu, h, rr, progress, cancel).await
}

/// The model file a spec names, from the copy the store kept when the run
/// was queued (the bytes the studio read and hashed), to send with the job.
fn sent_model_file(store: &Store, spec: &CheckedSpec) -> Result<Option<SentModelFile>, String> {
    let raw = &spec.raw;
    let Ok(Some(file)) = trainbench_core::models::FileRef::parse(&raw.model) else {
        return Ok(None);
    };
    let sha = raw.model_sha256.clone().unwrap_or_default();
    let kept = store
        .model_file(&sha)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!(
                "no copy of the model file {} (SHA-256 {sha}) is kept to send",
                raw.model
            )
        })?;
    let text = String::from_utf8(kept.bytes)
        .map_err(|_| format!("the kept copy of {} is not UTF-8 text", raw.model))?;
    let name = std::path::Path::new(&file.path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model.py".into());
    Ok(Some(SentModelFile {
        name,
        sha256: sha,
        text,
    }))
}

/// A run that never started on its host, stored as failed (class internal).
fn failed_to_start(store: &mut Store, run_id: i64, reason: String) -> RemoteResult<Finished> {
    store.finish_run(
        run_id,
        RunStatus::Failed,
        Some(&reason),
        Some(trainbench_core::ErrorClass::Internal.as_str()),
        None,
        "",
    )?;
    Ok(Finished {
        run_id,
        status: RunStatus::Failed,
        reason: Some(reason),
    })
}

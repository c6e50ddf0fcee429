//! Remote hosts as the shells use them: the host list, checks and the
//! agent from `trainbench-remote`, with its errors turned into the
//! application's, and the use cases that need a workspace (follow a run
//! again, stop waiting for it, queue it again).

use std::path::Path;

use tokio::sync::watch;
use trainbench_runner::Progress;

pub use trainbench_remote::{
    ClusterInventory, HostJob, HostUrl, Inventory, JournalLine, RayUrl, RemoteFramework,
    RemoteHost, RemoteJob, RemoteTarget, SlurmSettings, SshUrl, DEFAULT_ROOT,
};

use crate::error::{AppError, AppResult};
use crate::host::Host;
use crate::job::{Finished, Job};
use crate::workspace::Workspace;

/// The studio's hosts (`$TRAINBENCH_HOME/hosts.json`), each checked.
pub fn hosts() -> AppResult<Vec<RemoteHost>> {
    Ok(trainbench_remote::hosts()?)
}

/// The host called `name`, or why there is none.
pub fn host(name: &str) -> AppResult<RemoteHost> {
    Ok(trainbench_remote::host(name)?)
}

/// Adds (or replaces) a host and checks it, each step said as it starts:
/// see [`trainbench_remote::add_host`].
pub fn add_host(
    name: &str,
    url: &str,
    pythons: &[String],
    env: &[String],
    slurm: Option<SlurmSettings>,
    peers: &[String],
    say: &mut dyn FnMut(&str),
) -> AppResult<RemoteHost> {
    Ok(trainbench_remote::add_host(
        name, url, pythons, env, slurm, peers, say,
    )?)
}

/// Checks a host again (kit, interpreters, GPUs, Slurm) and stores what it
/// found, each step said as it starts.
pub fn check_host(name: &str, say: &mut dyn FnMut(&str)) -> AppResult<RemoteHost> {
    Ok(trainbench_remote::check_host(name, say)?)
}

/// Removes a host from the list.
pub fn remove_host(name: &str) -> AppResult<()> {
    Ok(trainbench_remote::remove_host(name)?)
}

/// `NAME=VALUE` of `--env`, checked.
pub fn parse_env(text: &str) -> AppResult<(String, String)> {
    Ok(trainbench_remote::parse_env(text)?)
}

/// The agent on a host: runs `DIR/job.json`, journaling everything (and
/// echoing the journal to stdout with `echo`: a Ray job's log).
pub async fn agent_run(dir: &Path, echo: bool) -> AppResult<()> {
    Ok(trainbench_remote::agent_run(dir, echo).await?)
}

/// Re-attaches to a remote run the studio stopped following.
pub async fn attach(
    ws: &mut Workspace,
    local: &Host,
    run_id: i64,
    progress: &mut dyn Progress,
    cancel: watch::Receiver<bool>,
) -> AppResult<Finished> {
    Ok(trainbench_remote::attach(&mut ws.store, &local.gpu, run_id, progress, cancel).await?)
}

/// Stops waiting for a remote run whose host is gone for good (stored as
/// `interrupted`; what was read stays).
pub fn abandon(ws: &mut Workspace, run_id: i64) -> AppResult<()> {
    Ok(trainbench_remote::abandon(&mut ws.store, run_id)?)
}

/// A queue job that follows run `run_id` on its host again (what `attach`
/// does, for a shell with a run queue: the desktop).
pub fn attach_job(ws: &Workspace, run_id: i64) -> AppResult<Job> {
    let rr = trainbench_remote::waiting_run(&ws.store, run_id)?;
    let h = host(&rr.host)?;
    let detail = ws.store.run_detail(run_id)?;
    let raw: trainbench_core::spec::RawSpec = serde_json::from_value(detail.spec.clone())
        .map_err(|e| AppError::Internal(format!("run {run_id}'s stored spec: {e}")))?;
    let spec = trainbench_core::spec::CheckedSpec::new(raw)?;
    let worker = trainbench_runner::WorkerCommand {
        program: std::path::PathBuf::new(),
        args: Vec::new(),
        env: Vec::new(),
        plan_for: Some(detail.row.framework),
        release: None,
    };
    Ok(Job {
        run_id,
        spec,
        label: trainbench_core::compare::config_label(&detail.row),
        config: 0,
        worker,
        memory_limit_bytes: None,
        remote: Some(RemoteTarget {
            host: std::sync::Arc::new(h),
            attach: true,
        }),
    })
}

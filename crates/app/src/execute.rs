//! The run loop both shells share: a queued job runs in its worker process
//! through the runner and ends stored with its status, whatever happens; a
//! job whose cancel switch is already on when its turn comes is stored as
//! cancelled without starting.

use tokio::sync::watch;
use trainbench_core::summary::RunStatus;
use trainbench_runner::{Progress, Runner, RunnerOptions};

use crate::error::{AppError, AppResult};
use crate::host::Host;
use crate::sweep::Job;
use crate::workspace::Workspace;

/// The reason stored for a run cancelled while it waited.
pub const CANCELLED_BEFORE_START: &str = "cancelled before this run started";

/// How a job ended, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub run_id: i64,
    pub status: RunStatus,
    pub reason: Option<String>,
}

/// Runs one queued job to its end and stores the outcome. `cancel` stops it
/// (or, already on, keeps it from starting). An error is the database's:
/// the run is then marked failed where that still works.
pub async fn run_job(
    ws: &mut Workspace,
    host: &Host,
    job: &Job,
    opts: RunnerOptions,
    progress: &mut dyn Progress,
    cancel: watch::Receiver<bool>,
) -> AppResult<Finished> {
    // A run followed again on its host: a cancel goes to the host.
    if let Some(target) = job.remote.as_ref().filter(|t| t.attach) {
        return crate::remote::run_job(ws, host, target, job, opts, progress, cancel).await;
    }
    if *cancel.borrow() {
        ws.store.finish_run(
            job.run_id,
            RunStatus::Cancelled,
            Some(CANCELLED_BEFORE_START),
            None,
            None,
            "",
        )?;
        return Ok(Finished {
            run_id: job.run_id,
            status: RunStatus::Cancelled,
            reason: Some(CANCELLED_BEFORE_START.into()),
        });
    }
    if let Some(target) = &job.remote {
        return crate::remote::run_job(ws, host, target, job, opts, progress, cancel).await;
    }
    let runner = Runner {
        worker: job.worker.clone(),
        gpu: &host.gpu,
        opts: RunnerOptions {
            memory_limit_bytes: job.memory_limit_bytes.or(opts.memory_limit_bytes),
            ..opts
        },
    };
    match runner
        .run(&mut ws.store, job.run_id, &job.spec, progress, cancel)
        .await
    {
        Ok(o) => Ok(Finished {
            run_id: job.run_id,
            status: o.status,
            reason: o.reason,
        }),
        Err(e) => {
            let reason = e.to_string();
            let _ = ws.mark_failed(job.run_id, &reason);
            Err(AppError::Internal(reason))
        }
    }
}

/// Progress that shows nothing (a run that never starts).
pub(crate) struct Silent;
impl Progress for Silent {
    fn event(&mut self, _run_id: i64, _event: &trainbench_core::protocol::Event) {}
}

/// Runs jobs one after another, each with the progress `progress_for` makes
/// for it (its position, the count, the job) and handed back to `finished`.
/// Once `cancel` is on, the jobs left are stored as cancelled without
/// starting (and get no progress).
pub async fn run_jobs<P: Progress>(
    ws: &mut Workspace,
    host: &Host,
    jobs: &[Job],
    opts: RunnerOptions,
    cancel: watch::Receiver<bool>,
    mut progress_for: impl FnMut(usize, usize, &Job) -> P,
    mut finished: impl FnMut(Option<P>, &Finished),
) -> AppResult<Vec<Finished>> {
    let mut out = Vec::with_capacity(jobs.len());
    for (n, job) in jobs.iter().enumerate() {
        let f = if *cancel.borrow() {
            let f = run_job(ws, host, job, opts, &mut Silent, cancel.clone()).await?;
            finished(None, &f);
            f
        } else {
            let mut progress = progress_for(n, jobs.len(), job);
            let f = run_job(ws, host, job, opts, &mut progress, cancel.clone()).await?;
            finished(Some(progress), &f);
            f
        };
        out.push(f);
    }
    Ok(out)
}

/// A current-thread runtime for the run loop (a shell's own thread).
pub fn runtime() -> AppResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| AppError::Internal(format!("cannot start the runtime: {e}")))
}

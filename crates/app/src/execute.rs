//! The run loop both shells share: a queued job runs in its worker process
//! through the runner and ends stored with its status, whatever happens; a
//! job whose cancel switch is already on when its turn comes is stored as
//! cancelled without starting.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::watch;
use trainbench_core::summary::RunStatus;
use trainbench_probe::GpuProbe;
use trainbench_remote::{HostJob, RemoteTarget};
use trainbench_runner::{Progress, Runner, RunnerOptions};

use crate::error::{AppError, AppResult};
use crate::host::Host;
pub use crate::job::Finished;
use crate::job::Job;
use crate::workspace::Workspace;

/// The reason stored for a run cancelled while it waited.
pub const CANCELLED_BEFORE_START: &str = "cancelled before this run started";

/// A job's run to its end, in a future that borrows what it is given.
pub type Execution<'a> = Pin<Box<dyn Future<Output = AppResult<Finished>> + 'a>>;

/// Where a job runs: this machine's runner, or a remote host's agent.
/// [`run_job`] calls it the same way for both.
pub trait Executor {
    /// Whether a cancel that came before the job's turn keeps it from
    /// starting. A run already going on elsewhere (followed again) says
    /// no: the cancel must reach it there.
    fn skips_when_cancelled_before_start(&self) -> bool {
        true
    }

    /// Runs `job` to its end and stores how it ended.
    fn execute<'a>(
        &'a self,
        ws: &'a mut Workspace,
        job: &'a Job,
        opts: RunnerOptions,
        progress: &'a mut dyn Progress,
        cancel: watch::Receiver<bool>,
    ) -> Execution<'a>;
}

/// This machine: the worker process through the runner.
pub struct Local<'h> {
    pub gpu: &'h GpuProbe,
}

impl Executor for Local<'_> {
    fn execute<'a>(
        &'a self,
        ws: &'a mut Workspace,
        job: &'a Job,
        opts: RunnerOptions,
        progress: &'a mut dyn Progress,
        cancel: watch::Receiver<bool>,
    ) -> Execution<'a> {
        Box::pin(async move {
            let runner = Runner {
                worker: job.worker.clone(),
                gpu: self.gpu,
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
        })
    }
}

/// A remote host: the run started there (or followed again) and its
/// journal read to the end; this machine's probe gives the summary's
/// provenance.
pub struct Remote<'t> {
    pub target: &'t RemoteTarget,
    pub gpu: &'t GpuProbe,
}

impl Executor for Remote<'_> {
    fn skips_when_cancelled_before_start(&self) -> bool {
        !self.target.attach
    }

    fn execute<'a>(
        &'a self,
        ws: &'a mut Workspace,
        job: &'a Job,
        opts: RunnerOptions,
        progress: &'a mut dyn Progress,
        cancel: watch::Receiver<bool>,
    ) -> Execution<'a> {
        Box::pin(async move {
            let on_host = HostJob {
                run_id: job.run_id,
                spec: &job.spec,
                worker: &job.worker,
                memory_limit_bytes: job.memory_limit_bytes,
            };
            let store = &mut ws.store;
            Ok(trainbench_remote::run_job(
                store,
                self.gpu,
                self.target,
                on_host,
                opts,
                progress,
                cancel,
            )
            .await?)
        })
    }
}

/// The executor for where `job` runs (the planner put its host on it).
pub fn executor_for<'a>(job: &'a Job, host: &'a Host) -> Box<dyn Executor + 'a> {
    match &job.remote {
        Some(target) => Box::new(Remote {
            target,
            gpu: &host.gpu,
        }),
        None => Box::new(Local { gpu: &host.gpu }),
    }
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
    let executor = executor_for(job, host);
    if *cancel.borrow() && executor.skips_when_cancelled_before_start() {
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
    // A run shortened by `TRAINBENCH_EXAMPLE_STEPS` (its plan was) says so,
    // from before it starts: a run stopped half-way is marked too.
    if let Ok(Some(s)) = crate::shortened::Shortened::from_env() {
        ws.store.note_provenance(
            job.run_id,
            crate::shortened::PROVENANCE_KEY,
            &s.provenance(),
        )?;
    }
    executor.execute(ws, job, opts, progress, cancel).await
}

/// Progress that shows nothing (a run that never starts, or one whose
/// shell says its own lines).
pub struct Silent;
impl Progress for Silent {
    fn event(&mut self, _run_id: i64, _event: &trainbench_core::protocol::Event) {}
}

/// The releases' environments a sweep's jobs run in (`jax==0.7.2`), marked
/// in use for as long as this is held: no disk budget pass (`env budget`,
/// an install's, another process's) and no `env remove` takes one of them
/// between two runs of the sweep. [`run_jobs`] holds it from the first job
/// to the last; a shell with a queue of its own holds it from queueing the
/// sweep until its last run has ended.
#[derive(Debug)]
pub struct ReleasesInUse {
    _uses: Vec<trainbench_runner::envs::pinned::InUse>,
}

/// Marks the releases `jobs` run in as in use (waits only while a removal
/// of one is under way); see [`ReleasesInUse`].
pub fn releases_in_use(jobs: &[Job]) -> AppResult<ReleasesInUse> {
    let mut releases: Vec<_> = jobs.iter().filter_map(|j| j.worker.release).collect();
    releases.sort();
    releases.dedup();
    Ok(ReleasesInUse {
        _uses: releases
            .into_iter()
            .map(trainbench_runner::envs::pinned::in_use)
            .collect::<Result<Vec<_>, _>>()?,
    })
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
    // The releases' environments the jobs run in stay, in every process's
    // disk budget, until the last job has ended.
    let _using = releases_in_use(jobs)?;
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

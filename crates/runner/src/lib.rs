//! The runner: starts one worker process per run, reads its protocol events,
//! samples telemetry while it trains, stores everything (batched, one
//! transaction per flush) and ends every run with a status and a reason —
//! whether the worker finished, failed, crashed, hung, printed garbage or was
//! cancelled. Everything received before a failure is kept.
//!
//! Modules:
//! - [`capture`]: a model file for the libtorch worker captured with
//!   TorchScript in the PyTorch environment before the worker starts.
//! - [`ending`]: how a run ended: the status, reason and error class decided
//!   from the worker's last event and its exit.
//! - [`envs`]: framework environments: one Python environment per framework.
//! - [`lines`]: what a worker prints, read in bounded pieces: a line is cut at
//!   `MAX_LINE_BYTES` with a marker.
//! - [`patient`]: writes that outlast a busy or full store.
//! - [`process`]: the worker process of a run: started in its own process
//!   group, its stdout read line by line.

mod capture;
mod ending;
pub mod envs;
pub mod lines;
pub mod patient;
mod process;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::sync::watch;
use tokio::time::{interval, sleep_until, Instant, MissedTickBehavior};
use trainbench_core::protocol::{ErrorClass, Event};
use trainbench_core::reference::gpu_peak_for;
use trainbench_core::spec::CheckedSpec;
use trainbench_core::summary::{summarize, RunStatus, RunSummary};
use trainbench_core::versions::Pin;
use trainbench_core::{Device, Framework};
use trainbench_probe::{GpuProbe, HostSampler};
use trainbench_store::{Store, StoreError, TelemetrySample};

use ending::{flush, store_end, Ending};
pub use ending::{Finished, Outcome};
use process::{on_stdout_line, read_output, sample_once, spawn};

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot start worker {program}: {source}")]
    Spawn {
        program: PathBuf,
        source: std::io::Error,
    },
}

/// How to start the worker of one framework (serialised into a remote run's
/// job file: the agent on the host starts what the studio resolved there).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// `Some(framework)`: the worker reads a resolved plan
    /// (`RunSpec::worker_plan_json`) instead of the spec as written.
    pub plan_for: Option<Framework>,
    /// The release (`jax==0.7.2`) whose environment the worker runs in: the
    /// run fails when the worker's `hello` reports another release, and the
    /// environment is kept from the disk budget while the worker runs.
    #[serde(default)]
    pub release: Option<Pin>,
}

impl WorkerCommand {
    /// The libtorch worker: `$TRAINBENCH_WORKER_TCH`, else `trainbench-worker-tch`
    /// beside the running executable (cargo puts both in one target directory).
    /// libtorch comes from the person's own studio PyTorch environment
    /// (`LD_LIBRARY_PATH`, [`envs::libtorch`]), except for a worker named by
    /// `$TRAINBENCH_WORKER_TCH` that starts with the folder it was built
    /// against (another release's build keeps its own).
    pub fn tch() -> WorkerCommand {
        let program = std::env::var_os("TRAINBENCH_WORKER_TCH")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                std::env::current_exe()
                    .ok()
                    .and_then(|exe| exe.parent().map(|d| d.join("trainbench-worker-tch")))
                    .filter(|p| p.exists())
                    .unwrap_or_else(|| PathBuf::from("trainbench-worker-tch"))
            });
        // A worker named by TRAINBENCH_WORKER_TCH may be built for another
        // libtorch release (the PyTorch 2.11 build): its own libtorch when
        // that loads (asked once: `--version` without LD_LIBRARY_PATH). The
        // one beside this program was built with the studio's own PyTorch,
        // so that environment's libtorch suits it (and no process is
        // started to ask).
        // Else, where the caller's LD_LIBRARY_PATH loads it (a kit's
        // `run.sh` names the machine's own `torch/lib`), that path is kept.
        let named = std::env::var_os("TRAINBENCH_WORKER_TCH").is_some();
        let inherited = std::env::var("LD_LIBRARY_PATH")
            .ok()
            .filter(|p| !p.is_empty());
        let env = if named && envs::libtorch::worker_libtorch(&program, &[], true).is_some() {
            Vec::new()
        } else if let Some(path) = inherited
            .filter(|_| named && envs::libtorch::worker_libtorch(&program, &[], false).is_some())
        {
            vec![("LD_LIBRARY_PATH".to_owned(), path)]
        } else {
            envs::libtorch::libtorch_lib()
                .map(|lib| {
                    vec![(
                        "LD_LIBRARY_PATH".to_owned(),
                        envs::libtorch::library_path_with(&lib),
                    )]
                })
                .unwrap_or_default()
        };
        WorkerCommand {
            program,
            args: vec!["train".into(), "--spec".into(), "-".into()],
            env,
            plan_for: None,
            release: None,
        }
    }

    /// A Python worker: `python -m trainbench_worker FRAMEWORK train` in the
    /// framework's environment, with the worker package on `PYTHONPATH`.
    pub fn python(framework: Framework, python: PathBuf, package_dir: PathBuf) -> WorkerCommand {
        let mut path = package_dir.display().to_string();
        if let Some(old) = std::env::var_os("PYTHONPATH") {
            path = format!("{path}:{}", old.to_string_lossy());
        }
        WorkerCommand {
            program: python,
            args: vec![
                "-m".into(),
                "trainbench_worker".into(),
                framework.as_str().into(),
                "train".into(),
            ],
            env: vec![
                ("PYTHONPATH".into(), path),
                ("PYTHONUNBUFFERED".into(), "1".into()),
            ],
            plan_for: Some(framework),
            release: None,
        }
    }
}

impl WorkerCommand {
    /// What the worker reads on stdin: the spec as written (libtorch), or the
    /// plan of the typed spec (a Python framework).
    pub fn stdin(&self, spec: &CheckedSpec) -> String {
        match self.plan_for {
            None => spec.raw.to_json(),
            Some(framework) => spec.spec.worker_plan_json(framework),
        }
    }
}

/// Stops a worker and everything it started (a launcher's ranks share its
/// process group, which the runner gave the worker).
fn kill_worker(child: &mut tokio::process::Child, pid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.start_kill();
}

#[derive(Debug, Clone, Copy)]
pub struct RunnerOptions {
    /// A worker silent for this long is stopped and the run stored as `timeout`.
    pub silence_timeout: Duration,
    /// Telemetry sampling period (10 Hz by default).
    pub telemetry_interval: Duration,
    /// How often buffered events and samples are written.
    pub flush_interval: Duration,
    /// Resident memory the worker's processes may use together (bytes): a
    /// worker seen over it at a telemetry sample is stopped and the run
    /// stored as failed, class `oom`, with [`MEMORY_LIMIT_REASON`] in its
    /// reason. `None`: no limit but the machine's.
    pub memory_limit_bytes: Option<u64>,
}

/// How the reason of a run stopped over its memory limit begins.
pub const MEMORY_LIMIT_REASON: &str = "over the memory limit";

impl Default for RunnerOptions {
    fn default() -> Self {
        RunnerOptions {
            silence_timeout: Duration::from_secs(600),
            telemetry_interval: Duration::from_millis(100),
            flush_interval: Duration::from_millis(500),
            memory_limit_bytes: None,
        }
    }
}

/// Receives progress; the CLI draws a bar, the desktop app forwards to a channel.
pub trait Progress {
    fn event(&mut self, run_id: i64, event: &Event);
    /// Lines that are not protocol events (log text).
    fn log(&mut self, _run_id: i64, _line: &str) {}
    /// Telemetry samples as they are stored (every flush, 2 Hz by default).
    fn telemetry(&mut self, _run_id: i64, _samples: &[TelemetrySample]) {}
}

pub(crate) enum Line {
    Stdout(String),
    StdoutClosed,
}

/// Runs queued runs, one worker process at a time.
#[derive(Debug)]
pub struct Runner<'a> {
    pub worker: WorkerCommand,
    pub gpu: &'a GpuProbe,
    pub opts: RunnerOptions,
}

impl Runner<'_> {
    /// Runs one queued run to its end and stores the outcome.
    pub async fn run(
        &self,
        store: &mut Store,
        run_id: i64,
        spec: &CheckedSpec,
        progress: &mut dyn Progress,
        cancel: watch::Receiver<bool>,
    ) -> Result<Outcome, RunnerError> {
        let outcome = run_one(store, run_id, spec, self, progress, cancel).await;
        // The store's default wait comes back however the run ended (its
        // flushes wait only briefly: see `patient`).
        store.set_busy_timeout(trainbench_store::BUSY_TIMEOUT)?;
        outcome
    }
}

async fn run_one(
    store: &mut Store,
    run_id: i64,
    spec: &CheckedSpec,
    runner: &Runner<'_>,
    progress: &mut dyn Progress,
    mut cancel: watch::Receiver<bool>,
) -> Result<Outcome, RunnerError> {
    let (worker, gpu, opts) = (&runner.worker, runner.gpu, runner.opts);
    store.start_run(run_id, &trainbench_probe::provenance(gpu))?;
    // Held until the worker has ended and the run is stored.
    let (_held, mut child) = match start(run_id, worker, spec, opts.silence_timeout).await {
        Ok(started) => started,
        Err((reason, class)) => return failed_before_start(store, run_id, gpu, reason, class),
    };
    let pid = child.id().unwrap_or(0);

    let tail: Arc<Mutex<lines::Tail>> = Arc::default();
    let mut rx = read_output(&mut child, &tail);

    let mut host = HostSampler::new(pid);
    // NVML's view of the worker's GPU memory: peak per GPU index.
    let mut nvml_peaks: std::collections::BTreeMap<u32, u64> = std::collections::BTreeMap::new();
    let mut telemetry_tick = interval(opts.telemetry_interval);
    telemetry_tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut flush_tick = interval(opts.flush_interval);
    flush_tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut deadline = Instant::now() + opts.silence_timeout;
    // Not yet stored: events, and samples already shown (`samples` are new).
    let mut events: Vec<Event> = Vec::new();
    let mut unstored: Vec<TelemetrySample> = Vec::new();
    let mut samples: Vec<TelemetrySample> = Vec::new();
    let mut told_busy = false;
    let mut terminal: Option<Event> = None;
    // A stop the runner made: status, reason and, for a memory stop, the class.
    let mut stopped: Option<(RunStatus, String, Option<ErrorClass>)> = None;
    // Once the cancel sender is gone, nobody can cancel any more.
    let mut cancellable = true;
    // While the worker trains, a flush waits only briefly for another writer.
    store.set_busy_timeout(patient::FLUSH_WAIT)?;

    loop {
        if *cancel.borrow_and_update() {
            kill_worker(&mut child, pid);
            stopped = Some(cancelled_by_user());
            break;
        }
        tokio::select! {
            line = rx.recv() => match line {
                Some(Line::Stdout(text)) => {
                    deadline = Instant::now() + opts.silence_timeout;
                    let said = on_stdout_line(&text, run_id, progress, &tail, &mut terminal, &mut events);
                    if let Some(wrong) = said.and_then(|e| wrong_release(worker.release, e)) {
                        kill_worker(&mut child, pid);
                        stopped = Some((RunStatus::Failed, wrong.to_string(), Some(ErrorClass::Internal)));
                        break;
                    }
                }
                Some(Line::StdoutClosed) | None => break,
            },
            _ = telemetry_tick.tick() => {
                let over = sample_once(&mut host, gpu, opts.memory_limit_bytes, &mut samples, &mut nvml_peaks);
                if let Some((rss, limit)) = over {
                    kill_worker(&mut child, pid);
                    stopped = Some((RunStatus::Failed, format!(
                        "{MEMORY_LIMIT_REASON}: the worker's resident memory reached {rss} bytes, above the limit of {limit} bytes, and it was stopped"),
                        Some(ErrorClass::Oom)));
                    break;
                }
            },
            _ = flush_tick.tick() => {
                progress.telemetry(run_id, &samples);
                unstored.append(&mut samples);
                flush(store, run_id, progress, &mut events, &mut unstored, &mut told_busy)?;
            },
            _ = sleep_until(deadline) => {
                kill_worker(&mut child, pid);
                stopped = Some((RunStatus::Timeout, format!(
                    "the worker printed nothing for {} s and was stopped", opts.silence_timeout.as_secs()), None));
                break;
            },
            changed = cancel.changed(), if cancellable => {
                // A change is acted on at the top of the loop.
                cancellable = changed.is_ok();
            },
        }
    }
    // Whatever the worker said after a stop still counts (it may have finished).
    while let Ok(Line::Stdout(text)) = rx.try_recv() {
        if let Some(e) = Event::parse_line(&text) {
            progress.event(run_id, &e);
            if e.is_terminal() {
                terminal = Some(e.clone());
            }
            events.push(e);
        }
    }
    let exit = wait_exit(&mut child, pid).await;
    if stopped.is_none()
        && terminal.is_none()
        && ending::stop_asked_meanwhile(&mut cancel, exit.as_ref()).await
    {
        stopped = Some(cancelled_by_user());
    }
    unstored.append(&mut samples);
    let ending = Ending {
        events,
        samples: unstored,
        nvml_peaks,
        stopped,
        terminal,
        exit,
        tail,
    };
    store_end(store, run_id, gpu, progress, ending).await
}

/// The stop a cancel makes: the run cancelled, as its user asked.
fn cancelled_by_user() -> (RunStatus, String, Option<ErrorClass>) {
    (RunStatus::Cancelled, "cancelled by the user".into(), None)
}

/// The worker's exit, killing it after ten seconds.
async fn wait_exit(
    child: &mut tokio::process::Child,
    pid: u32,
) -> Option<std::process::ExitStatus> {
    match tokio::time::timeout(Duration::from_secs(10), child.wait()).await {
        Ok(r) => r.ok(),
        Err(_) => {
            kill_worker(child, pid);
            child.wait().await.ok()
        }
    }
}

/// What a started worker holds until it ends: its release's environment
/// marked in use, a file model's TorchScript capture.
type Held = (Option<envs::pinned::InUse>, Option<capture::CaptureDir>);

/// Starts the worker and gives it its input, its release's environment (if
/// it runs in one) first marked in use: no disk budget removes it while the
/// guard is held; a file model for the libtorch worker is captured first
/// (`limit`: how long the capture may take). The reason, and its class,
/// when it cannot start.
async fn start(
    run_id: i64,
    worker: &WorkerCommand,
    spec: &CheckedSpec,
    limit: Duration,
) -> Result<(Held, tokio::process::Child), capture::NotCaptured> {
    let internal = |m: String| (m, ErrorClass::Internal);
    let using = worker
        .release
        .map(envs::pinned::in_use)
        .transpose()
        .map_err(|e| internal(e.to_string()))?;
    let (worker, captured) = match capture::prepare(run_id, worker, spec, limit).await? {
        Some((with, dir)) => (std::borrow::Cow::Owned(with), Some(dir)),
        None => (std::borrow::Cow::Borrowed(worker), None),
    };
    let mut child = spawn(&worker, &spec.spec.env).map_err(|e| {
        internal(format!(
            "cannot start worker {}: {e}",
            worker.program.display()
        ))
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        // A worker that dies before reading its spec shows up as an exit later.
        let _ = stdin.write_all(worker.stdin(spec).as_bytes()).await;
        let _ = stdin.shutdown().await;
    }
    Ok(((using, captured), child))
}

/// The error when `e` is the worker's `hello` and it reports a framework
/// version other than the `release` it was started for.
fn wrong_release(release: Option<Pin>, e: &Event) -> Option<envs::EnvError> {
    match (release, e) {
        (
            Some(pin),
            Event::Hello {
                framework_version, ..
            },
        ) => envs::check_release(pin, framework_version).err(),
        _ => None,
    }
}

/// Ends a run whose worker never started, with the reason.
fn failed_before_start(
    store: &mut Store,
    run_id: i64,
    gpu: &GpuProbe,
    reason: String,
    class: ErrorClass,
) -> Result<Outcome, RunnerError> {
    store.finish_run(
        run_id,
        RunStatus::Failed,
        Some(&reason),
        Some(class.as_str()),
        None,
        "",
    )?;
    let summary = finish_summary(store, run_id, gpu)?;
    Ok(Outcome {
        run_id,
        status: RunStatus::Failed,
        reason: Some(reason),
        error_class: Some(class.as_str().to_owned()),
        summary,
    })
}

/// CLOCK_MONOTONIC nanoseconds, the clock the workers stamp events with.
pub(crate) fn trainbench_core_clock() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// Computes and stores a run's summary from what was stored, then averages
/// a long run's telemetry down to what views and exports keep.
pub fn finish_summary(
    store: &mut Store,
    run_id: i64,
    gpu: &GpuProbe,
) -> Result<RunSummary, StoreError> {
    let mut m = store.measurements(run_id)?;
    let row = store.run_row(run_id)?;
    if let Device::Cuda(index) = row.device {
        // The GPU as recorded when the run started (its provenance), so that a
        // summary recomputed later or elsewhere names the same device.
        let recorded = store.run_detail(run_id)?.gpu_name();
        let name = recorded.or_else(|| {
            gpu.gpus()
                .into_iter()
                .find(|g| g.index == index)
                .map(|g| g.name)
        });
        m.device_peak = name.as_deref().and_then(gpu_peak_for);
        m.device_name = name.or_else(|| Some(row.device.to_string()));
        let steady = trainbench_core::stats::warmup_windows(
            &m.windows
                .iter()
                .map(trainbench_core::stats::WindowTiming::throughput)
                .collect::<Vec<_>>(),
        );
        let spans: Vec<(u64, u64)> = m.windows[steady.min(m.windows.len())..]
            .iter()
            .map(|w| (w.start_ns, w.end_ns))
            .collect();
        let indices: Vec<u32> = (index..index + row.devices.max(1)).collect();
        m.gpu = trainbench_core::telemetry::digest_gpu(&store.telemetry(run_id)?, &indices, &spans);
    }
    let summary = summarize(&m);
    store.save_summary(run_id, &summary)?;
    // The summary used every sample; what is kept for views and exports of
    // a long run is averaged down (trainbench_core::downsample). A failure
    // here keeps every sample: correct, only larger.
    let _ = store.compact_telemetry(run_id, None);
    Ok(summary)
}

#[cfg(test)]
mod tests;

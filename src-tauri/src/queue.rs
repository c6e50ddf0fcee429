//! The run queue: one configuration at a time, on its own thread with its own
//! database connection, so the window stays responsive while a worker trains.
//!
//! A sweep's releases' environments (`jax==0.7.2`) are marked in use from
//! the moment it is queued until its last run has ended, as the CLI's run
//! loop holds them ([`execute::releases_in_use`]): no disk budget pass
//! removes the release a later run of the sweep needs.
//!
//! Each run keeps a live view ([`LiveRun`]) that any number of UI channels
//! can watch; updates go out as deltas, at most every [`SEND_EVERY`], plus one
//! at once when the run ends.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::live_run::{push_log, Sent};
pub use crate::live_run::{
    LiveEval, LiveFigures, LivePoint, LiveRun, LiveUpdate, Phase, QueueEntry,
};
pub use crate::live_telemetry::LiveTelemetry;
use crate::live_telemetry::{self, LIVE_POINTS_PER_SOURCE};
use crate::notify::{Ended, Notifier, SharedNotifier};
use tauri::ipc::Channel;
use tokio::sync::watch;
use trainbench_app::execute::{self, run_job, ReleasesInUse};
use trainbench_app::live::Figures;
use trainbench_app::sweep::Job;
use trainbench_app::{AppError, Host, Progress, RunnerOptions, Workspace};
use trainbench_core::protocol::Event;
use trainbench_core::summary::RunStatus;
use trainbench_core::telemetry::TelemetrySample;
use trainbench_core::text::panic_message;

/// How often a watched run's progress is sent to the UI at most.
pub const SEND_EVERY: Duration = Duration::from_millis(250);
/// Finished runs whose live view is kept (for a UI that reopens it).
const KEEP_FINISHED: usize = 20;

#[derive(Default)]
struct State {
    /// Runs in queue order, the running one first; finished ones at the end.
    order: VecDeque<i64>,
    live: HashMap<i64, LiveRun>,
    watchers: HashMap<i64, Vec<Channel<LiveUpdate>>>,
    sent: HashMap<i64, Sent>,
    last_sent: HashMap<i64, Instant>,
    /// The running run and the switch that cancels it.
    running: Option<(i64, watch::Sender<bool>)>,
    /// Queued runs cancelled before they started.
    cancelled: Vec<i64>,
    /// The running run's figures as its events come (the app layer's count,
    /// the CLI's too).
    figures: Figures,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("order", &self.order)
            .field("running", &self.running.as_ref().map(|r| r.0))
            .finish()
    }
}

/// A job as the queue thread takes it: the database it is stored in, and
/// its sweep's releases held in use (shared by the sweep's jobs; the last
/// one's drop lets them go).
#[derive(Debug)]
struct Queued {
    db: PathBuf,
    job: Job,
    using: Arc<ReleasesInUse>,
    batch: Arc<Batch>,
}

/// The runs queued together (one Start: a run, or a sweep's runs), counted
/// as they end, so that a sweep is told once, when its last run ends.
#[derive(Debug, Default)]
struct Batch {
    runs: usize,
    /// Ended, completed, failed so far.
    ended: Mutex<(usize, usize, usize)>,
}

impl Batch {
    /// Counts one run's end; the sweep's end once its last run has ended.
    fn end(&self, status: RunStatus) -> Option<Ended> {
        let mut e = self
            .ended
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        e.0 += 1;
        match status {
            RunStatus::Completed => e.1 += 1,
            RunStatus::Failed => e.2 += 1,
            _ => {}
        }
        (self.runs > 1 && e.0 == self.runs).then_some(Ended::Sweep {
            runs: self.runs,
            completed: e.1,
            failed: e.2,
        })
    }
}

/// The queue: a sender to its thread, the shared live state, and where the
/// ends of runs and sweeps are told.
#[derive(Debug, Clone)]
pub struct Queue {
    tx: mpsc::Sender<Queued>,
    state: Arc<Mutex<State>>,
    notifier: SharedNotifier,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A panic elsewhere must not stop the queue from being read.
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Queue {
    /// Starts the queue thread.
    pub fn start(opts: RunnerOptions) -> Queue {
        Queue::start_with_hook(opts, |_| {})
    }

    /// Starts the queue thread with `before_run` called with each run's id
    /// just before it runs, inside the part of the thread that survives a
    /// panic (tests make it panic there).
    pub fn start_with_hook(opts: RunnerOptions, before_run: fn(i64)) -> Queue {
        let (tx, rx) = mpsc::channel::<Queued>();
        let state = Arc::new(Mutex::new(State::default()));
        let notifier = SharedNotifier::default();
        let shared = (state.clone(), notifier.clone());
        std::thread::Builder::new()
            .name("trainbench-queue".into())
            .spawn(move || queue_thread(rx, shared, opts, before_run))
            .map(drop)
            .unwrap_or_else(|e| eprintln!("trainbench-studio: cannot start the queue: {e}"));
        Queue {
            tx,
            state,
            notifier,
        }
    }

    /// Where the queue tells that runs and sweeps ended (the searches and
    /// bisections tell theirs there too).
    pub fn notifier(&self) -> &SharedNotifier {
        &self.notifier
    }

    /// Adds runs (already stored as `queued` in `db`) to the end of the
    /// queue, their releases' environments marked in use until the last of
    /// them has ended.
    pub fn push(&self, db: PathBuf, jobs: Vec<Job>) -> Result<(), String> {
        let using = Arc::new(execute::releases_in_use(&jobs).map_err(|e| e.to_string())?);
        let batch = Arc::new(Batch {
            runs: jobs.len(),
            ..Batch::default()
        });
        {
            let mut s = lock(&self.state);
            for j in &jobs {
                s.live
                    .insert(j.run_id, LiveRun::new(j.run_id, j.label.clone()));
                let pos = s
                    .order
                    .iter()
                    .position(|id| s.live.get(id).is_some_and(LiveRun::finished))
                    .unwrap_or(s.order.len());
                s.order.insert(pos, j.run_id);
            }
        }
        for job in jobs {
            let queued = Queued {
                db: db.clone(),
                job,
                using: Arc::clone(&using),
                batch: Arc::clone(&batch),
            };
            self.tx
                .send(queued)
                .map_err(|_| "the run queue has stopped".to_string())?;
        }
        Ok(())
    }

    /// Cancels a queued or running run; false when the queue does not hold it
    /// unfinished.
    pub fn cancel(&self, run_id: i64) -> bool {
        let mut s = lock(&self.state);
        if let Some((id, switch)) = &s.running {
            if *id == run_id {
                let _ = switch.send(true);
                return true;
            }
        }
        let queued = s
            .live
            .get(&run_id)
            .is_some_and(|l| l.figures.phase == Phase::Queued);
        if queued && !s.cancelled.contains(&run_id) {
            s.cancelled.push(run_id);
        }
        queued
    }

    /// Cancels everything unfinished; returns how many runs that was.
    pub fn cancel_all(&self) -> usize {
        let ids: Vec<i64> = lock(&self.state)
            .live
            .values()
            .filter(|l| !l.finished())
            .map(|l| l.run_id)
            .collect();
        ids.into_iter().filter(|id| self.cancel(*id)).count()
    }

    /// Runs not finished yet (queued or running).
    pub fn unfinished(&self) -> usize {
        lock(&self.state)
            .live
            .values()
            .filter(|l| !l.finished())
            .count()
    }

    pub fn entries(&self) -> Vec<QueueEntry> {
        let s = lock(&self.state);
        s.order
            .iter()
            .filter_map(|id| s.live.get(id).map(LiveRun::entry))
            .collect()
    }

    /// Sends the run's progress to `channel` from now on; returns what there is
    /// so far (`None` when the queue does not know the run).
    pub fn watch(&self, run_id: i64, channel: Channel<LiveUpdate>) -> Option<LiveRun> {
        let mut s = lock(&self.state);
        let live = s.live.get(&run_id)?.clone();
        if !live.finished() {
            s.watchers.entry(run_id).or_default().push(channel);
        }
        Some(live)
    }
}

fn queue_thread(
    rx: mpsc::Receiver<Queued>,
    (state, notifier): (Arc<Mutex<State>>, SharedNotifier),
    opts: RunnerOptions,
    before_run: fn(i64),
) {
    let runtime = match execute::runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("trainbench-studio: cannot start the queue's runtime: {e}");
            return;
        }
    };
    let host = Host::open();
    let mut open: Option<(PathBuf, Workspace)> = None;
    while let Ok(Queued {
        db,
        job,
        using,
        batch,
    }) = rx.recv()
    {
        // Told before the run shows as finished: whoever sees the queue
        // empty has been told.
        let ended = |status: RunStatus, reason: Option<String>| {
            tell_end(&notifier, &state, &batch, &job, status, reason.clone());
            finish_live(&state, job.run_id, status, reason);
        };
        if open.as_ref().is_none_or(|(p, _)| *p != db) {
            match Workspace::open(&db) {
                Ok((ws, _)) => open = Some((db.clone(), ws)),
                Err(e) => {
                    ended(RunStatus::Failed, Some(e.to_string()));
                    continue;
                }
            }
        }
        let Some((_, ws)) = open.as_mut() else {
            continue;
        };
        // A run cancelled while it waited starts with its switch on: the run
        // loop stores it as cancelled without starting it.
        let (switch, cancel) = {
            let mut s = lock(&state);
            let cancelled = s.cancelled.contains(&job.run_id);
            s.cancelled.retain(|id| *id != job.run_id);
            let (switch, cancel) = watch::channel(cancelled);
            s.figures = Figures::default();
            if let Some(l) = s.live.get_mut(&job.run_id).filter(|_| !cancelled) {
                l.figures.phase = Phase::Starting;
            }
            (switch, cancel)
        };
        lock(&state).running = Some((job.run_id, switch));
        let mut progress = LiveProgress {
            state: state.clone(),
            origin_ns: None,
        };
        // A panic (a bug) fails this run with its message; the queue goes on.
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            before_run(job.run_id);
            runtime.block_on(run_job(ws, &host, &job, opts, &mut progress, cancel))
        }));
        let outcome = caught.unwrap_or_else(|panic| {
            let reason = format!(
                "the studio's run queue hit an internal error and stopped this run: {}",
                panic_message(panic.as_ref()).unwrap_or("no message")
            );
            let _ = ws.mark_failed(job.run_id, &reason);
            Err(AppError::Internal(reason))
        });
        lock(&state).running = None;
        // The sweep's last run lets its releases go before it shows as
        // finished, so that a budget pass after the sweep may remove them.
        drop(using);
        match outcome {
            Ok(f) => ended(f.status, f.reason),
            Err(e) => ended(RunStatus::Failed, Some(e.to_string())),
        }
    }
}

/// Tells that a run ended: on its own, or a sweep's failed run, and the
/// sweep once its last run has ended.
fn tell_end(
    notifier: &Notifier,
    state: &Mutex<State>,
    batch: &Batch,
    job: &Job,
    status: RunStatus,
    reason: Option<String>,
) {
    let left = lock(state)
        .live
        .values()
        .filter(|l| !l.finished() && l.run_id != job.run_id)
        .count();
    let sweep = batch.end(status);
    if batch.runs == 1 || status == RunStatus::Failed {
        let run = Ended::Run {
            id: job.run_id,
            label: job.label.clone(),
            status,
            reason,
        };
        notifier.tell(&run, left);
    }
    if let Some(sweep) = sweep {
        notifier.tell(&sweep, left);
    }
}

/// Marks a run finished, sends the last update and drops its watchers.
fn finish_live(state: &Mutex<State>, run_id: i64, status: RunStatus, reason: Option<String>) {
    let mut s = lock(state);
    if let Some(l) = s.live.get_mut(&run_id) {
        l.figures.phase = Phase::Finished;
        l.figures.status = Some(status);
        l.figures.reason = reason;
    }
    send(&mut s, run_id);
    s.watchers.remove(&run_id);
    s.sent.remove(&run_id);
    s.last_sent.remove(&run_id);
    if let Some(pos) = s.order.iter().position(|id| *id == run_id) {
        s.order.remove(pos);
        s.order.push_back(run_id);
    }
    // Forget the oldest finished runs beyond the ones kept.
    let finished: Vec<i64> = s
        .order
        .iter()
        .copied()
        .filter(|id| s.live.get(id).is_some_and(LiveRun::finished))
        .collect();
    for id in finished
        .iter()
        .take(finished.len().saturating_sub(KEEP_FINISHED))
    {
        s.live.remove(id);
        s.order.retain(|x| x != id);
    }
}

/// Sends what changed to the run's watchers (dropping closed channels).
fn send(s: &mut State, run_id: i64) {
    let Some(live) = s.live.get(&run_id) else {
        return;
    };
    let sent = s.sent.get(&run_id).copied().unwrap_or_default();
    let update = live.update_from(&sent);
    let now_sent = Sent {
        points: live.points.len(),
        evals: live.evals.len(),
        telemetry: live.telemetry.len(),
        telemetry_generation: live.thinning.generation,
        log: live.log_dropped + live.log.len(),
    };
    if let Some(ws) = s.watchers.get_mut(&run_id) {
        ws.retain(|c| c.send(update.clone()).is_ok());
    }
    s.sent.insert(run_id, now_sent);
    s.last_sent.insert(run_id, Instant::now());
}

fn maybe_send(s: &mut State, run_id: i64) {
    let due = s
        .last_sent
        .get(&run_id)
        .is_none_or(|t| t.elapsed() >= SEND_EVERY);
    if due {
        send(s, run_id);
    }
}

/// The runner's progress, written into the live view.
struct LiveProgress {
    state: Arc<Mutex<State>>,
    /// The first instant seen (telemetry or an event): time zero of the curves.
    origin_ns: Option<u64>,
}

impl LiveProgress {
    fn t_s(&mut self, t_ns: u64) -> f64 {
        let origin = *self.origin_ns.get_or_insert(t_ns);
        (t_ns as f64 - origin as f64) / 1e9
    }
}

impl Progress for LiveProgress {
    fn event(&mut self, run_id: i64, event: &Event) {
        let t = match event {
            Event::Hello { t_ns, .. }
            | Event::FirstStep { t_ns, .. }
            | Event::Done { t_ns, .. } => Some(self.t_s(*t_ns)),
            Event::Window { end_ns, .. } | Event::Eval { t_ns: end_ns, .. } => {
                Some(self.t_s(*end_ns))
            }
            _ => None,
        };
        let mut s = lock(&self.state);
        s.figures.observe(event);
        let figures = s.figures.clone();
        if let Some(l) = s.live.get_mut(&run_id) {
            l.figures.step = figures.step;
            l.figures.total_steps = figures.total_steps;
            l.figures.current_samples_per_s = figures.current_samples_per_s;
            l.figures.steady_samples_per_s = figures.steady_samples_per_s;
            match event {
                Event::Hello { .. } => l.figures.phase = Phase::Training,
                Event::Window { loss_mean, .. } => {
                    l.points.push(LivePoint {
                        t_s: t.unwrap_or(0.0),
                        step: figures.step,
                        samples_per_s: figures.current_samples_per_s.unwrap_or(f64::NAN),
                        loss: *loss_mean,
                    });
                }
                Event::Eval { step, accuracy, .. } => l.evals.push(LiveEval {
                    t_s: t.unwrap_or(0.0),
                    step: *step,
                    accuracy: *accuracy,
                }),
                Event::Error { message, .. } => {
                    push_log(l, format!("error: {message}"));
                }
                _ => {}
            }
        }
        maybe_send(&mut s, run_id);
    }

    fn log(&mut self, run_id: i64, line: &str) {
        let mut s = lock(&self.state);
        if let Some(l) = s.live.get_mut(&run_id) {
            push_log(l, line.to_owned());
        }
        maybe_send(&mut s, run_id);
    }

    fn telemetry(&mut self, run_id: i64, samples: &[TelemetrySample]) {
        let points: Vec<LiveTelemetry> = samples
            .iter()
            .map(|x| LiveTelemetry {
                t_s: self.t_s(x.t_ns),
                source: x.source.clone(),
                memory_bytes: if x.source == "host" {
                    x.rss_bytes
                } else {
                    x.mem_used_bytes
                },
                util_percent: x.util_percent,
                power_w: x.power_w,
                cpu_percent: x.cpu_percent,
            })
            .collect();
        let mut s = lock(&self.state);
        if let Some(l) = s.live.get_mut(&run_id) {
            for p in points {
                live_telemetry::push(&mut l.telemetry, &mut l.thinning, p, LIVE_POINTS_PER_SOURCE);
            }
        }
        maybe_send(&mut s, run_id);
    }
}

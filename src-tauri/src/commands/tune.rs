//! "Find the fastest setup" from the window: the app layer's search
//! (`Workspace::tune`, as `trainbench tune` runs it) on a thread of its own
//! with its own connection to the database; each round and run told in
//! words, the candidates' table kept as each run ends (`tune_status`), and
//! Cancel, which stops the run under way and starts nothing more (what ran
//! stays stored).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde::Serialize;
use tauri::State;
use tokio::sync::watch;
use trainbench_app::execute::{self, Finished};
use trainbench_app::sweep::{Job, SweepPlan};
use trainbench_app::tune::view::{candidates, CandidateView, TunedView};
use trainbench_app::tune::{plan_tune, Told, TunePlan, TuneRequest, TuneShell};

use crate::notify::{self, Ended};
use trainbench_app::{AppError, AppResult, Host, RunnerOptions, Workspace};
use trainbench_core::tune::method::TuneOutcome;

use crate::error::{ApiError, ApiResult};
use crate::narration::Narration;
use crate::Studio;

/// The search under way (or the last one): its lines and its candidates.
#[derive(Debug, Default)]
pub struct Tunes {
    lines: Narration,
    live: Mutex<Live>,
}

#[derive(Debug, Default)]
struct Live {
    started: Option<Instant>,
    /// Seconds it took, once it ended.
    took_s: Option<f64>,
    model: Option<String>,
    objective: Option<String>,
    budget_s: f64,
    sweep_id: Option<i64>,
    unit: Option<String>,
    running: Option<String>,
    candidates: Vec<CandidateView>,
}

impl Tunes {
    fn live(&self) -> MutexGuard<'_, Live> {
        self.live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The search under way (or the last one), as [`tune_status`] gives it.
    pub fn status(&self) -> TuneStatus {
        let said = self.lines.status();
        let live = self.live();
        TuneStatus {
            running: said.running,
            lines: said.lines,
            model: live.model.clone(),
            objective: live.objective.clone(),
            unit: live.unit.clone(),
            elapsed_s: live
                .took_s
                .unwrap_or_else(|| live.started.map_or(0.0, |s| s.elapsed().as_secs_f64())),
            budget_s: live.budget_s,
            sweep_id: live.sweep_id,
            training: live.running.clone(),
            candidates: live.candidates.clone(),
        }
    }

    /// Whether a search is under way.
    pub fn is_running(&self) -> bool {
        self.lines.is_running()
    }

    /// Cancels the search under way; false when none runs.
    pub fn cancel(&self) -> bool {
        self.lines.cancel()
    }
}

/// What the window shows while a search runs.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct TuneStatus {
    /// A search is under way.
    pub running: bool,
    /// Its lines, oldest first: each round, each run and how it ended.
    pub lines: Vec<String>,
    pub model: Option<String>,
    /// `throughput`, `memory`, `cost` or `time-to-accuracy`.
    pub objective: Option<String>,
    /// The unit of the candidates' figures (`samples/s`, `MiB` …).
    pub unit: Option<String>,
    /// Seconds since it started, and its budget.
    pub elapsed_s: f64,
    pub budget_s: f64,
    /// The sweep its runs are stored in, once created.
    pub sweep_id: Option<i64>,
    /// The configuration training now, if any.
    pub training: Option<String>,
    /// Every candidate: still in, stopped early with the reason, failed,
    /// refused before running, the winner …
    pub candidates: Vec<CandidateView>,
}

/// The window's side of a search: each run said as a line and shown as the
/// one training; the rest is the app's [`Told`], its lines to the window's.
struct Window<'a> {
    tunes: &'a Tunes,
    told: Told<'a, Box<dyn FnMut(String) + 'a>>,
}

impl TuneShell for Window<'_> {
    fn run(&mut self, ws: &mut Workspace, host: &Host, job: &Job) -> AppResult<Finished> {
        self.tunes
            .lines
            .say(format!("run #{} {}", job.run_id, job.label));
        self.tunes.live().running = Some(job.label.clone());
        // The run's progress is not shown: the lines say when it starts and ends.
        let f = self.told.run(ws, host, job);
        self.tunes.live().running = None;
        if let Ok(f) = &f {
            let why = f.reason.as_deref().map(|r| format!(": {r}"));
            self.tunes.lines.say(format!(
                "  #{} {}{}",
                f.run_id,
                f.status.as_str(),
                why.unwrap_or_default()
            ));
        }
        f
    }

    fn say(&mut self, line: String) {
        self.told.say(line);
    }

    fn cancelled(&self) -> bool {
        self.told.cancelled()
    }

    fn search_batches(
        &mut self,
        ws: &mut Workspace,
        host: &Host,
        plan: &mut SweepPlan,
        sweep: i64,
    ) -> AppResult<()> {
        self.told.search_batches(ws, host, plan, sweep)
    }

    fn traced(&mut self, plan: &TunePlan, sweep: i64, outcome: &TuneOutcome) {
        let mut live = self.tunes.live();
        live.sweep_id = Some(sweep);
        live.unit = Some(outcome.unit.clone());
        live.candidates = candidates(plan, outcome);
    }
}

/// Plans the search (each candidate checked as a run would be; refused
/// naming the field when a setting is bad), then runs it to its end, its
/// budget's end or Cancel, every run stored in one sweep with the search's
/// trace; returns what it found. Its progress meanwhile from
/// [`tune_status`]. One search at a time, and none while the queue has
/// runs or a bisection runs: a search measures alone.
#[tauri::command]
#[specta::specta]
pub async fn start_tune(studio: State<'_, Studio>, request: TuneRequest) -> ApiResult<TunedView> {
    if let Some(problem) = studio.database_problem() {
        return Err(ApiError::new(
            trainbench_app::ErrorCode::Database,
            format!("choose a database in Settings before starting runs: {problem}"),
        ));
    }
    let waiting = studio.queue.unfinished();
    if waiting > 0 {
        return Err(AppError::Busy(format!(
            "{waiting} run(s) of the queue are unfinished: a search measures alone, so wait for them or cancel them"
        ))
        .into());
    }
    if studio.bisections.is_running() {
        return Err(AppError::Busy(
            "a bisection is under way: a search measures alone, so wait for it to end or cancel it"
                .into(),
        )
        .into());
    }
    let db = studio.db_path();
    let tunes = Arc::clone(&studio.tunes);
    let notifier = Arc::clone(studio.queue.notifier());
    let found = tauri::async_runtime::spawn_blocking(move || -> AppResult<TunedView> {
        let (cancel, _running) = tunes.lines.begin("a search")?;
        let started = Instant::now();
        *tunes.live() = Live {
            started: Some(started),
            ..Live::default()
        };
        let found = search(&tunes, &db, &request, cancel);
        tunes.live().took_s = Some(started.elapsed().as_secs_f64());
        let cancelled = found
            .as_ref()
            .is_ok_and(|v| v.ended == trainbench_core::tune::Ended::Cancelled);
        match notify::outcome(&found, |v| v.verdict.clone()) {
            Some(outcome) if !cancelled => notifier.tell(&Ended::Search { outcome }, 0),
            _ => {}
        }
        found
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))??;
    Ok(found)
}

/// The search itself, told in `tunes` as it goes.
fn search(
    tunes: &Tunes,
    db: &std::path::Path,
    request: &TuneRequest,
    cancel: watch::Receiver<bool>,
) -> AppResult<TunedView> {
    let host = Host::open();
    let mut plan = plan_tune(request, &host)?;
    {
        let mut live = tunes.live();
        live.model = Some(plan.model.clone());
        live.objective = Some(plan.settings.objective.key().into());
        live.budget_s = plan.budget.seconds;
    }
    tunes.lines.say(format!(
        "tuning {} for {}: {} candidate(s), {} refused before running, budget {:.0} s",
        plan.model,
        plan.settings.objective,
        plan.expected_candidates(),
        plan.unsupported.len(),
        plan.budget.seconds
    ));
    for r in &plan.unsupported {
        let what = r.label.clone().unwrap_or_else(|| r.field.clone());
        tunes.lines.say(format!("  refused: {what}: {}", r.message));
    }
    let mut ws = Workspace::open_beside(db)?;
    let command = format!(
        "desktop studio {}: tune {}",
        trainbench_app::VERSION,
        serde_json::to_string(request).unwrap_or_default()
    );
    let runtime = execute::runtime()?;
    let mut shell = Window {
        tunes,
        told: Told {
            rt: &runtime,
            stop: cancel,
            opts: RunnerOptions::default(),
            say: Box::new(|line: String| tunes.lines.say(line)),
        },
    };
    let tuned = ws.tune(&host, &mut plan, &command, &mut shell)?;
    tunes.lines.say(tuned.outcome.verdict.clone());
    Ok(TunedView::new(&tuned, &plan))
}

/// The search under way (or the last one): its lines, the time used and the
/// budget, the run training now and every candidate as it stands.
#[tauri::command]
#[specta::specta]
pub fn tune_status(studio: State<'_, Studio>) -> TuneStatus {
    studio.tunes.status()
}

/// Cancels the search under way: the run training is stopped and stored as
/// cancelled, nothing more starts, the trace so far is kept. False when
/// none runs.
#[tauri::command]
#[specta::specta]
pub fn cancel_tune(studio: State<'_, Studio>) -> bool {
    studio.tunes.cancel()
}

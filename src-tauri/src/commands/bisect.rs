//! Bisection from the window: the app layer's bisection on a thread of its
//! own (its own connection to the database), each step told in words
//! (`bisect_status`), Cancel between and during runs and installs.

use std::sync::Arc;

use serde::Serialize;
use tauri::State;
use tokio::sync::watch;
use trainbench_app::bisect::{plan_from_registry, BisectRequest, BisectShell, Bisected};
use trainbench_app::execute::{self, Finished};
use trainbench_app::frameworks::Installs;
use trainbench_app::releases::BudgetPass;
use trainbench_app::sweep::Job;
use trainbench_app::versions::Pin;

use crate::notify::{self, Ended};
use trainbench_app::{envs, AppResult, Host, RunnerOptions, Workspace};

use crate::error::{ApiError, ApiResult};
use crate::narration::{Narration, NarrationStatus};
use crate::Studio;

/// One release's runs as evidence, as the window shows it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct EvidenceDto {
    pub release: String,
    pub runs: u32,
    pub mean: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// What a bisection found.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct BisectedDto {
    pub sweep_id: i64,
    pub run_ids: Vec<i64>,
    pub verdict: String,
    pub first_changed: Option<String>,
    pub last_same: Option<String>,
    /// The metric's unit (`samples/s`).
    pub unit: String,
    /// Every release measured, oldest first.
    pub evidence: Vec<EvidenceDto>,
}

impl From<&Bisected> for BisectedDto {
    fn from(b: &Bisected) -> BisectedDto {
        BisectedDto {
            sweep_id: b.sweep_id,
            run_ids: b.run_ids.clone(),
            verdict: b.outcome.verdict.clone(),
            first_changed: b.outcome.first_changed.map(|r| r.to_string()),
            last_same: b.outcome.last_same.map(|r| r.to_string()),
            unit: b.metric.unit().into(),
            evidence: b
                .outcome
                .evidence
                .iter()
                .map(|e| EvidenceDto {
                    release: e.release.to_string(),
                    runs: u32::try_from(e.values.len()).unwrap_or(u32::MAX),
                    mean: e.mean,
                    low: e.ci95.map(|c| c.low),
                    high: e.ci95.map(|c| c.high),
                })
                .collect(),
        }
    }
}

/// The window's side of a bisection: every step a line of the narration.
struct Told<'a> {
    lines: &'a Narration,
    installs: Arc<Installs>,
    gpu: bool,
    cancel: watch::Receiver<bool>,
}

impl BisectShell for Told<'_> {
    fn install(&mut self, pin: Pin) -> AppResult<()> {
        if *self.cancel.borrow() {
            return Err(trainbench_app::AppError::Cancelled);
        }
        self.lines.say(format!(
            "{pin} is not installed here: making its environment from PyPI"
        ));
        let mut step = String::new();
        let made = self.installs.install(&pin.to_string(), self.gpu, |u| {
            if u.progress.step != step {
                u.progress.step.clone_into(&mut step);
                self.lines.say(format!(
                    "  {}: {} packages installed, {:.0} s",
                    u.progress.step, u.progress.packages_installed, u.progress.elapsed_s
                ));
            }
        })?;
        self.lines.say(format!(
            "{pin} ready ({} packages, {:.0} s)",
            made.progress.packages_installed, made.progress.elapsed_s
        ));
        let pass = BudgetPass::from(&envs::pinned::evict_over_budget(&[pin]));
        for words in pass.words() {
            self.lines.say(words.to_owned());
        }
        Ok(())
    }

    fn run(&mut self, ws: &mut Workspace, host: &Host, jobs: &[Job]) -> AppResult<Vec<Finished>> {
        let lines = self.lines;
        execute::runtime()?.block_on(execute::run_jobs(
            ws,
            host,
            jobs,
            RunnerOptions::default(),
            self.cancel.clone(),
            |n, total, job| {
                lines.say(format!(
                    "run {}/{total} #{} {}",
                    n + 1,
                    job.run_id,
                    job.label
                ));
                // The narration says when it starts and ends, not its progress.
                trainbench_app::execute::Silent
            },
            |_, f| {
                lines.say(format!(
                    "  #{} {}{}",
                    f.run_id,
                    f.status.as_str(),
                    f.reason
                        .as_deref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                ));
            },
        ))
    }

    fn say(&mut self, line: String) {
        self.lines.say(line);
    }
}

/// Runs a bisection to its end (installing releases as they are needed)
/// and returns what it found; its lines meanwhile from [`bisect_status`].
/// Refused, naming the field, when a bound, the metric or a run setting is
/// bad; one bisection at a time.
#[tauri::command]
#[specta::specta]
pub async fn start_bisect(
    studio: State<'_, Studio>,
    request: BisectRequest,
) -> ApiResult<BisectedDto> {
    if let Some(problem) = studio.database_problem() {
        return Err(ApiError::new(
            trainbench_app::ErrorCode::Database,
            format!("choose a database in Settings before starting runs: {problem}"),
        ));
    }
    if studio.tunes.is_running() {
        return Err(ApiError::from(trainbench_app::AppError::Busy(
            "a search for the fastest setup is under way: wait for it to end or cancel it".into(),
        )));
    }
    let db = studio.db_path();
    let lines = Arc::clone(&studio.bisections);
    let installs = Arc::clone(&studio.installs);
    let gpu = studio.host.gpu_count() > 0;
    let notifier = Arc::clone(studio.queue.notifier());
    let found = tauri::async_runtime::spawn_blocking(move || -> AppResult<Bisected> {
        let (cancel, _running) = lines.begin("a bisection")?;
        let host = Host::open();
        lines.say(format!(
            "asking PyPI for the releases of {}",
            request.framework
        ));
        let plan = plan_from_registry(&request, &host)?;
        lines.say(format!(
            "bisecting {} releases of {} ({} … {}) on {}",
            plan.releases.len(),
            plan.framework,
            plan.releases[0],
            plan.releases[plan.releases.len() - 1],
            plan.metric.key()
        ));
        let mut ws = Workspace::open_beside(&db)?;
        let command = format!(
            "desktop studio {}: bisect {}",
            trainbench_app::VERSION,
            serde_json::to_string(&request).unwrap_or_default()
        );
        let mut shell = Told {
            lines: &lines,
            installs,
            gpu,
            cancel,
        };
        let found = ws.bisect(&host, &plan, &command, &mut shell);
        if let Some(outcome) = notify::outcome(&found, |f| f.outcome.verdict.clone()) {
            notifier.tell(&Ended::Bisection { outcome }, 0);
        }
        let found = found?;
        lines.say(found.outcome.verdict.clone());
        Ok(found)
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))??;
    Ok(BisectedDto::from(&found))
}

/// The bisection under way (or the last one): running or not, its lines.
#[tauri::command]
#[specta::specta]
pub fn bisect_status(studio: State<'_, Studio>) -> NarrationStatus {
    studio.bisections.status()
}

/// Cancels the bisection under way: the run or install going on is stopped
/// (what ended stays stored). False when none runs.
#[tauri::command]
#[specta::specta]
pub fn cancel_bisect(studio: State<'_, Studio>, framework: String) -> bool {
    let _ = studio.installs.cancel(&framework);
    studio.bisections.cancel()
}

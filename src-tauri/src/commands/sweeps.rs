//! Sweeps: the wizard's verdict, queueing, the live view, cancelling.

use tauri::ipc::Channel;
use tauri::State;
use trainbench_app::batch_words::Narrated;
use trainbench_app::execute;
use trainbench_app::sweep::{Job, SweepPlan, SweepRequest};
use trainbench_app::{AppError, Host, RunnerOptions, Workspace};

use super::dto::{count, PlanDto, Started};
use crate::error::{ApiError, ApiResult};
use crate::narration::{Narration, NarrationStatus};
use crate::queue::{LiveRun, LiveUpdate, QueueEntry};
use crate::Studio;

/// Checks a sweep with the same rules `trainbench run` applies. Async, so
/// off the window's thread: a library model (`timm:…`) is checked by its
/// framework's worker, a process that takes seconds to import its libraries.
#[tauri::command]
#[specta::specta]
pub async fn plan(studio: State<'_, Studio>, request: SweepRequest) -> ApiResult<PlanDto> {
    let (plan, duration) = studio.with(|w| {
        let plan = w.plan(&request, &studio.host)?;
        let duration = w.estimate(&plan)?;
        Ok((plan, duration))
    })?;
    Ok(PlanDto {
        configurations: plan.configs.iter().map(|c| c.label.clone()).collect(),
        repeats: plan.repeats,
        runs: count(plan.runs()),
        rejected: plan.rejected,
        notes: plan.notes,
        duration,
        to_install: plan.to_install.iter().map(ToString::to_string).collect(),
    })
}

/// Stores the sweep's runs as queued and hands them to the queue. Refuses the
/// whole sweep (nothing stored) when a combination cannot run, unless
/// `skip_rejected`: then only the combinations that can run are queued. A
/// setting every combination shares (no `label`) always refuses. With a
/// batch search (`batch_size = max`) the probes run first, on a thread of
/// their own with a second connection to the database, and the promise
/// resolves once the runs are queued at the batches found.
#[tauri::command]
#[specta::specta]
pub async fn start_sweep(
    studio: State<'_, Studio>,
    request: SweepRequest,
    skip_rejected: bool,
) -> ApiResult<Started> {
    if let Some(problem) = studio.database_problem() {
        return Err(ApiError::new(
            trainbench_app::ErrorCode::Database,
            format!("choose a database in Settings before starting runs: {problem}"),
        ));
    }
    if studio.tunes.is_running() {
        return Err(AppError::Busy(
            "a search for the fastest setup is under way and measures alone: wait for it to end or cancel it".into(),
        )
        .into());
    }
    let plan = studio.with(|w| w.plan(&request, &studio.host))?;
    if let Some(r) = plan
        .rejected
        .iter()
        .find(|r| !skip_rejected || r.is_shared())
    {
        return Err(AppError::from(r.clone()).into());
    }
    if plan.configs.is_empty() {
        return Err(AppError::bad_input("model", "(none)", "at least one configuration").into());
    }
    let command = format!(
        "desktop studio {}: {}",
        trainbench_app::VERSION,
        serde_json::to_string(&request).unwrap_or_default()
    );
    let (sweep_id, jobs) = if plan.configs.iter().any(|c| c.batch_search.is_some()) {
        let db = studio.db_path();
        let price = request.price.clone();
        let searches = std::sync::Arc::clone(&studio.searches);
        tauri::async_runtime::spawn_blocking(move || {
            search_then_queue(&db, plan, &command, price, &searches)
        })
        .await
        .map_err(|e| ApiError::internal(e.to_string()))??
    } else {
        studio.with(|w| w.queue(&plan, request.price.as_deref(), &command))?
    };
    let run_ids = jobs.iter().map(|j| j.run_id).collect();
    studio
        .queue
        .push(studio.db_path(), jobs)
        .map_err(ApiError::internal)?;
    Ok(Started { sweep_id, run_ids })
}

/// The batch search of a sweep (its own workspace, host and runtime), then
/// its runs queued in the same sweep.
fn search_then_queue(
    db: &std::path::Path,
    mut plan: SweepPlan,
    command: &str,
    price: Option<String>,
    searches: &Narration,
) -> ApiResult<(i64, Vec<Job>)> {
    let (cancel, _running) = searches.begin("a batch search")?;
    let mut ws = Workspace::open_beside(db)?;
    let host = Host::open();
    let mut said = Narrated {
        say: |line: String| searches.say(line),
    };
    Ok(execute::runtime()?.block_on(ws.search_then_queue(
        &host,
        &mut plan,
        command,
        price.as_deref(),
        RunnerOptions::default(),
        cancel,
        &mut said,
    ))?)
}

/// The wizard's batch search: running or not, and its lines so far.
#[tauri::command]
#[specta::specta]
pub fn batch_search_status(studio: State<'_, Studio>) -> NarrationStatus {
    studio.searches.status()
}

/// Cancels the batch search under way (the probe running is stopped; the
/// sweep's runs are not queued). False when none runs.
#[tauri::command]
#[specta::specta]
pub fn cancel_batch_search(studio: State<'_, Studio>) -> bool {
    studio.searches.cancel()
}

/// Streams a run's progress to `on_progress` (throttled); returns what there
/// is so far, or `null` when the run is not in the queue (the runs started
/// since the app opened).
#[tauri::command]
#[specta::specta]
pub fn watch_run(
    studio: State<'_, Studio>,
    run_id: i64,
    on_progress: Channel<LiveUpdate>,
) -> Option<LiveRun> {
    studio.queue.watch(run_id, on_progress)
}

#[tauri::command]
#[specta::specta]
pub fn queue_entries(studio: State<'_, Studio>) -> Vec<QueueEntry> {
    studio.queue.entries()
}

/// Cancels a queued or running run.
#[tauri::command]
#[specta::specta]
pub fn cancel_run(studio: State<'_, Studio>, run_id: i64) -> ApiResult<()> {
    if studio.queue.cancel(run_id) {
        Ok(())
    } else {
        Err(ApiError::new(
            trainbench_app::ErrorCode::NotFound,
            format!("run {run_id} is not queued or running in this studio"),
        ))
    }
}

/// Runs queued or running (the window asks before closing when there are any).
#[tauri::command]
#[specta::specta]
pub fn unfinished_runs(studio: State<'_, Studio>) -> u32 {
    count(studio.queue.unfinished())
}

/// Cancels every unfinished run and waits (up to 30 s) until each is stored
/// as cancelled; the UI then closes the window.
#[tauri::command]
#[specta::specta]
pub async fn quit(studio: State<'_, Studio>) -> ApiResult<()> {
    studio.queue.cancel_all();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while studio.queue.unfinished() > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Ok(())
}

//! The runs table, one run in full, deleting runs, giving up on a remote
//! run whose host is gone.

use tauri::State;
use trainbench_core::telemetry::TelemetrySample;

use super::dto::{count, RemoteRunView, RunListDto, RunListItem, RunView};
use crate::error::{ApiError, ApiResult};
use crate::Studio;

/// Every stored run, newest first, and the runs left out because their
/// row holds a value that cannot be used (as `trainbench runs` says them).
#[tauri::command]
#[specta::specta]
pub fn list_runs(studio: State<'_, Studio>) -> ApiResult<RunListDto> {
    let list = studio.with(|w| w.run_list())?;
    let mut runs: Vec<RunListItem> = list.rows.iter().map(RunListItem::from).collect();
    runs.sort_by_key(|r| std::cmp::Reverse(r.id));
    Ok(RunListDto {
        runs,
        left_out: list.left_out,
    })
}

#[tauri::command]
#[specta::specta]
pub fn run_detail(studio: State<'_, Studio>, run_id: i64) -> ApiResult<RunView> {
    let (detail, telemetry) = studio.with(|w| Ok((w.run_detail(run_id)?, w.telemetry(run_id)?)))?;
    let (telemetry, thinned) = thin(telemetry, 2000);
    let remote = studio
        .with(|w| w.remote_run(run_id))?
        .map(|r| RemoteRunView {
            followed: followed(&studio, run_id),
            host: r.host,
            url: r.url,
            dir: r.dir,
            journal_bytes: r.journal_offset as f64,
            waiting: !r.finished,
        });
    Ok(RunView {
        label: trainbench_core::compare::config_label(&detail.row),
        detail,
        telemetry,
        telemetry_thinned: thinned,
        remote,
    })
}

/// Whether this app's queue is running (or following) run `run_id` now.
fn followed(studio: &Studio, run_id: i64) -> bool {
    studio
        .queue
        .entries()
        .iter()
        .any(|e| e.run_id == run_id && e.status.is_none())
}

/// Stops waiting for a remote run whose host is gone for good: stored as
/// interrupted (what was read is kept), so it can be deleted.
#[tauri::command]
#[specta::specta]
pub fn abandon_run(studio: State<'_, Studio>, run_id: i64) -> ApiResult<()> {
    if followed(&studio, run_id) {
        return Err(ApiError::bad_input(
            "run",
            format!("run = {run_id} is not allowed: this app is reading it from its host now; cancel it instead"),
        ));
    }
    studio.with(|w| trainbench_app::remote::abandon(w, run_id))
}

/// Keeps every k-th sample of each source so no source has more than `max`.
fn thin(samples: Vec<TelemetrySample>, max: usize) -> (Vec<TelemetrySample>, bool) {
    let mut counts = std::collections::HashMap::<String, usize>::new();
    for s in &samples {
        *counts.entry(s.source.clone()).or_default() += 1;
    }
    let step: std::collections::HashMap<String, usize> = counts
        .into_iter()
        .map(|(k, n)| (k, n.div_ceil(max).max(1)))
        .collect();
    if step.values().all(|s| *s == 1) {
        return (samples, false);
    }
    let mut seen = std::collections::HashMap::<String, usize>::new();
    let kept = samples
        .into_iter()
        .filter(|s| {
            let i = seen.entry(s.source.clone()).or_default();
            let keep = (*i).is_multiple_of(step[&s.source]);
            *i += 1;
            keep
        })
        .collect();
    (kept, true)
}

/// Deletes runs (never queued or running ones); returns how many went.
#[tauri::command]
#[specta::specta]
pub fn delete_runs(studio: State<'_, Studio>, run_ids: Vec<i64>) -> ApiResult<u32> {
    Ok(count(studio.with(|w| w.delete_runs(&run_ids))?))
}

/// Follows a remote run again (its journal from where it was stored) in the
/// run queue; a cancel there stops it on the host.
#[tauri::command]
#[specta::specta]
pub fn attach_run(studio: State<'_, Studio>, run_id: i64) -> ApiResult<()> {
    if followed(&studio, run_id) {
        return Err(ApiError::bad_input(
            "run",
            format!("run = {run_id} is not allowed: this app is reading it from its host already"),
        ));
    }
    let job = studio.with(|w| trainbench_app::remote::attach_job(w, run_id))?;
    studio
        .queue
        .push(studio.db_path(), vec![job])
        .map_err(ApiError::internal)
}

//! A run against the world: beside the published record, and projected to
//! hardware it did not run on (the "what if" panel). Both from the app layer
//! (`trainbench_app::published`, `trainbench_app::projection`), as the CLI's
//! `show` and `project` use them.

use tauri::State;
use trainbench_app::projection::{project, Projected, Target};
use trainbench_app::published::{placed_by_id, placement, PlacedRuns, RecordPlacement};
use trainbench_core::reference::gpu_peaks;

use crate::error::ApiResult;
use crate::Studio;

/// The run beside the published results of its model family, closest
/// first, where that means something (or `beside_record`: anyway); else why
/// it is not placed.
#[tauri::command]
#[specta::specta]
pub fn vs_record(
    studio: State<'_, Studio>,
    run_id: i64,
    beside_record: bool,
) -> ApiResult<RecordPlacement> {
    let detail = studio.with(|w| w.run_detail(run_id))?;
    Ok(placement(&detail, beside_record))
}

/// The compared runs beside the published record together, as the
/// comparison's PDF places them: each placed run's closest published result,
/// and why the others are not placed, each reason once. A run no longer
/// stored is left out.
#[tauri::command]
#[specta::specta]
pub fn compare_record(studio: State<'_, Studio>, run_ids: Vec<i64>) -> ApiResult<PlacedRuns> {
    studio.with(|w| placed_by_id(w, &run_ids, false))
}

/// The GPUs a run can be projected to (the peak table's names).
#[tauri::command]
#[specta::specta]
pub fn projection_targets() -> ApiResult<Vec<String>> {
    Ok(gpu_peaks().into_iter().map(|p| p.device).collect())
}

/// Run `run_id` projected to a GPU of the peak table or to this CPU with
/// another thread count (exactly one of the two).
#[tauri::command]
#[specta::specta]
pub fn what_if(
    studio: State<'_, Studio>,
    run_id: i64,
    gpu: Option<String>,
    threads: Option<u32>,
) -> ApiResult<Projected> {
    let target = Target::choose(gpu, threads)?;
    studio.with(|w| project(w, run_id, &target))
}

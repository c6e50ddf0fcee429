//! A comparison ready to draw.

use tauri::State;
use trainbench_app::reports::chart_curves;
use trainbench_core::compare::Grouping;
use trainbench_core::session::ChartKind;

use super::dto::{count, ChartMeta, CompareView, CurveDto};
use crate::error::ApiResult;
use crate::Studio;

/// Compares runs (or their configurations, repeats pooled) against a baseline.
#[tauri::command]
#[specta::specta]
pub fn compare(
    studio: State<'_, Studio>,
    run_ids: Vec<i64>,
    grouping: Grouping,
    baseline: Option<i64>,
) -> ApiResult<CompareView> {
    let loaded = studio.with(|w| w.comparison(&run_ids, grouping, baseline))?;
    let decided_by = studio.with(|w| trainbench_app::tune::report::decided_by(w, &loaded.runs))?;
    let curves = |kind| {
        chart_curves(&loaded, kind)
            .into_iter()
            .map(|c| CurveDto {
                entry: count(c.entry),
                run_id: c.run_id,
                points: c.points,
                steps: c.steps,
                steady_from_s: c.steady_from_s,
            })
            .collect()
    };
    Ok(CompareView {
        colours: trainbench_app::reports::colours(loaded.comparison.entries.len()),
        throughput_curves: curves(ChartKind::ThroughputOverTime),
        loss_curves: curves(ChartKind::LossOverTime),
        accuracy_curves: curves(ChartKind::AccuracyOverTime),
        charts: ChartKind::ALL
            .iter()
            .map(|k| {
                let (title, y, x) = trainbench_app::reports::chart_titles(*k);
                ChartMeta {
                    kind: *k,
                    title: title.into(),
                    y_unit: y.into(),
                    x_unit: x.into(),
                }
            })
            .collect(),
        comparison: loaded.comparison,
        decided_by,
    })
}

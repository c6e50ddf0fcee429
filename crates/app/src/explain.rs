//! "Why is A faster than B": the gap in time per sample between two runs (or
//! two configurations, their repeats averaged), part by part, from their step
//! breakdowns (`core::breakdown::explain`). Shared by `trainbench explain`,
//! the desktop app and the PDF.

use serde::Serialize;
use trainbench_core::breakdown::{average, explain, Explanation, StepBreakdown};
use trainbench_core::compare::config_label;
use trainbench_core::profile::{
    average as average_profiles, profile_gap, ProfileGap, ProfileSummary,
};
use trainbench_core::record::RunRow;
use trainbench_core::summary::RunStatus;

use crate::error::{AppError, AppResult};
use crate::workspace::Workspace;

/// One side of an explanation.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Side {
    pub label: String,
    /// The runs whose breakdowns were used (one, or a configuration's repeats).
    pub run_ids: Vec<i64>,
    pub breakdown: StepBreakdown,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ExplainReport {
    pub a: Side,
    pub b: Side,
    pub explanation: Explanation,
    /// The gap over the operator profiles' categories, where both sides
    /// have a measured profile (runs made with `--profile`).
    pub profile: Option<ProfileGap>,
}

/// The side of run `id`: that run, or with `by_config` every completed run of
/// its configuration that has a breakdown; with the mean of those runs'
/// operator profiles per sample, where any has one.
fn side(
    ws: &Workspace,
    field: &str,
    id: i64,
    by_config: bool,
) -> AppResult<(Side, Option<ProfileSummary>)> {
    let row = ws.run(id)?;
    let rows: Vec<RunRow> = if by_config {
        ws.runs()?
            .into_iter()
            .filter(|r| r.config_key == row.config_key && r.status == RunStatus::Completed)
            .collect()
    } else {
        vec![row.clone()]
    };
    let with: Vec<(&RunRow, &StepBreakdown)> = rows
        .iter()
        .filter_map(|r| Some((r, r.summary.as_ref()?.breakdown.as_ref()?)))
        .collect();
    let breakdowns: Vec<&StepBreakdown> = with.iter().map(|w| w.1).collect();
    let Some(breakdown) = average(&breakdowns) else {
        return Err(AppError::bad(
            field,
            format!(
                "{field} = {id}: run {id} ({}) has no step breakdown: it is {}, or was measured before the studio timed one; expected a completed run measured by this version",
                config_label(&row),
                row.status.as_str()
            ),
        ));
    };
    let mut label = format!("run {id} ({})", config_label(&row));
    if by_config {
        label = format!("{} ({} run(s))", config_label(&row), with.len());
    }
    let profiles: Vec<&ProfileSummary> = with
        .iter()
        .filter_map(|w| w.0.summary.as_ref()?.profile_per_sample.as_ref())
        .collect();
    let side = Side {
        label,
        run_ids: with.iter().map(|w| w.0.id).collect(),
        breakdown,
    };
    Ok((side, average_profiles(&profiles)))
}

/// How the gap in time per sample between `a` and `b` splits over the parts of
/// the step.
pub fn explain_runs(ws: &Workspace, a: i64, b: i64, by_config: bool) -> AppResult<ExplainReport> {
    let (a, pa) = side(ws, "a", a, by_config)?;
    let (b, pb) = side(ws, "b", b, by_config)?;
    let explanation = explain(&a.breakdown, &b.breakdown, &a.label, &b.label);
    let profile = match (pa, pb) {
        (Some(x), Some(y)) => Some(profile_gap(&x, &y, "A", "B")),
        _ => None,
    };
    Ok(ExplainReport {
        a,
        b,
        explanation,
        profile,
    })
}

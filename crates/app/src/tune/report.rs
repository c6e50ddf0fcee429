//! A search in the reports: for each `tune` sweep among the report's runs,
//! its verdict and every candidate's fate ("Search"), then its frontier when
//! it has one; and the metric a comparison of one search's runs leads with.

use std::collections::BTreeSet;

use trainbench_core::compare::Metric;
use trainbench_core::record::RunDetail;
use trainbench_core::text::capitalised;
use trainbench_core::tune::frontier::Point;
use trainbench_core::tune::method::{figure_text, interval_text_as, TuneOutcome};
use trainbench_core::tune::Objective;
use trainbench_report::document::Section;

use crate::error::AppResult;
use crate::workspace::Workspace;

/// The metric the search these runs came from decided by, when every one
/// of them came from the same search: a comparison of them leads with its
/// chart. `None` for runs of several sweeps or of none, and for an
/// objective no comparison metric measures (energy).
pub fn decided_by(ws: &Workspace, runs: &[RunDetail]) -> AppResult<Option<Metric>> {
    let sweeps: BTreeSet<Option<i64>> = runs.iter().map(|r| r.row.sweep_id).collect();
    let (1, Some(Some(sweep))) = (sweeps.len(), sweeps.first()) else {
        return Ok(None);
    };
    let Some(stored) = ws.store.tune(*sweep)? else {
        return Ok(None);
    };
    Ok(match Objective::parse(&stored.objective) {
        Ok(Objective::Throughput) => Some(Metric::Throughput),
        Ok(Objective::Memory) => Some(Metric::PeakMemory),
        Ok(Objective::Cost) => Some(Metric::CostPerEpoch),
        Ok(Objective::TimeToAccuracy) => Some(Metric::TimeToAccuracy),
        Ok(Objective::Energy) | Err(_) => None,
    })
}

/// The sections of every search the runs belong to, oldest sweep first.
pub fn sections(ws: &Workspace, runs: &[RunDetail]) -> AppResult<Vec<Section>> {
    let sweeps: BTreeSet<i64> = runs.iter().filter_map(|r| r.row.sweep_id).collect();
    let mut out = Vec::new();
    for sweep in sweeps {
        let (Some(stored), Some(outcome)) = (ws.store.tune(sweep)?, ws.tune_trace(sweep)?) else {
            continue;
        };
        out.push(search_section(sweep, &stored.model, &outcome));
        let frontier = ws.tune_frontier(&outcome)?;
        if frontier.memory.len() >= 2 {
            out.push(frontier_section(
                sweep,
                "peak memory",
                &frontier.memory,
                |p| p.peak_memory_mib.map(|m| format!("{m:.0} MiB")),
            ));
        }
        if frontier.cost.len() >= 2 {
            out.push(frontier_section(
                sweep,
                "cost per epoch",
                &frontier.cost,
                |p| p.cost_per_epoch_usd.map(|c| format!("${c:.4}")),
            ));
        }
    }
    Ok(out)
}

/// One row per candidate, as the report's and the terminal's tables show
/// it: its label, the round it reached, its last round's figure and
/// interval ("–" where none), and why it stopped.
pub fn candidate_rows(o: &TuneOutcome) -> Vec<Vec<String>> {
    o.candidates
        .iter()
        .map(|c| {
            let latest = c.latest();
            vec![
                c.label.clone(),
                c.round_reached
                    .map_or_else(|| "–".into(), |r| r.to_string()),
                latest.map_or_else(|| "–".into(), |(v, _)| figure_text(v)),
                latest.map_or_else(
                    || "–".into(),
                    |(v, ci)| ci.map_or_else(|| "–".into(), |c| interval_text_as(Some(c), v)),
                ),
                c.why.clone(),
            ]
        })
        .collect()
}

/// The verdict and one row per candidate: the round it reached, its last
/// round's figure and interval, and why it stopped.
fn search_section(sweep: i64, model: &str, o: &TuneOutcome) -> Section {
    let rows = candidate_rows(o);
    Section {
        heading: format!("Search: {model} for {} (sweep {sweep})", o.objective),
        text: format!(
            "{}. The search ran every candidate once, short (round 0), stopped those whose 95 % interval lay wholly below the leader's by more than the objective's tolerance, ran the better half again, longer, with repeats interleaved, and confirmed the last two against each other; it {}. Each figure is in {} for the last round the candidate reached.",
            capitalised(&o.verdict),
            o.ended.words(),
            o.unit
        ),
        headers: ["Candidate", "Round", "Figure", "95 % CI", "Why"]
            .map(String::from)
            .to_vec(),
        widths: vec![150.0, 35.0, 50.0, 70.0, 195.0],
        rows,
    }
}

/// A frontier: fastest first, each point's throughput and its other figure.
fn frontier_section(
    sweep: i64,
    against: &str,
    points: &[Point],
    other: impl Fn(&Point) -> Option<String>,
) -> Section {
    Section {
        heading: format!("Frontier of sweep {sweep}: throughput against {against}"),
        text: format!(
            "The candidates no other candidate beats on both counts at once (at least as fast and no higher in {against}, better in one), fastest first: each step down trades speed for {against}. Figures are the geometric means of each candidate's completed runs in the last round it reached."
        ),
        headers: vec!["Candidate".into(), "Samples/s".into(), capitalised(against)],
        widths: vec![250.0, 100.0, 150.0],
        rows: points
            .iter()
            .map(|p| {
                vec![
                    p.label.clone(),
                    figure_text(p.samples_per_s),
                    other(p).unwrap_or_else(|| "–".into()),
                ]
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_no_search_are_decided_by_nothing() {
        let ws = Workspace::in_memory().expect("workspace");
        assert_eq!(decided_by(&ws, &[]).expect("read"), None);
    }
}

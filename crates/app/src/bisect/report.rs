//! A bisection in the PDF report: for each bisection sweep among the
//! report's runs, what it found and every measured release's evidence.

use std::collections::BTreeSet;

use trainbench_core::compare::Metric;
use trainbench_core::record::RunDetail;
use trainbench_core::text::capitalised;
use trainbench_report::document::Section;

use crate::error::AppResult;
use crate::workspace::Workspace;

/// One section per bisection the runs belong to, oldest sweep first.
pub fn sections(ws: &Workspace, runs: &[RunDetail]) -> AppResult<Vec<Section>> {
    let sweeps: BTreeSet<i64> = runs.iter().filter_map(|r| r.row.sweep_id).collect();
    let mut out = Vec::new();
    for sweep in sweeps {
        let Some((b, outcome)) = ws.bisection(sweep)? else {
            continue;
        };
        let metric = Metric::parse(&b.metric);
        let unit = metric.map_or("", Metric::unit);
        let rows = outcome
            .evidence
            .iter()
            .map(|e| {
                let place = if outcome.first_changed == Some(e.release) {
                    "first changed"
                } else if outcome.last_same == Some(e.release) {
                    "last like the good one"
                } else if outcome.first_changed.is_some_and(|f| e.release > f) {
                    "like the bad one"
                } else if outcome.first_changed.is_some() {
                    "like the good one"
                } else {
                    "measured"
                };
                vec![
                    format!("{} {}", b.framework, e.release),
                    e.values.len().to_string(),
                    format!("{:.4} {unit}", e.mean),
                    e.ci95
                        .map_or_else(|| "–".into(), |c| format!("{:.4} – {:.4}", c.low, c.high)),
                    place.into(),
                ]
            })
            .collect();
        out.push(Section {
            heading: format!(
                "Bisection of {} {} → {} ({})",
                b.framework,
                b.good,
                b.bad,
                metric.map_or_else(|| b.metric.clone(), |m| m.title().to_owned())
            ),
            text: format!(
                "{}. Sweep {sweep}: a binary search over the releases the registry lists between the two, each measured with repeated runs (more where its spread left it undecided) and placed with the side whose 95 % interval holds it. Releases not listed below were not needed.",
                capitalised(&outcome.verdict)
            ),
            headers: ["Release", "Runs", "Mean", "95 % CI", "Placed"]
                .map(String::from)
                .to_vec(),
            widths: vec![90.0, 40.0, 110.0, 140.0, 120.0],
            rows,
        });
    }
    Ok(out)
}

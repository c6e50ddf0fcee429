//! The comparison's results: the decision matrix, the summary with deltas,
//! scaling efficiency, warnings, and the charts.

use trainbench_core::compare::{Comparison, Confidence, Metric};
use trainbench_core::record::RunDetail;
use trainbench_core::summary::RunStatus;

use crate::charts::ChartData;
use crate::document::text::{delta_cell, letter, value_cell};
use crate::document::Page;
use crate::document::ReportInput;
use crate::ReportError;

/// "Decision matrix": per metric, the winner, its value, its margin over the
/// runner-up and how clear the win is.
pub(crate) fn decisions(l: &mut impl Page, c: &Comparison) {
    l.heading("Decision matrix", 12.0);
    let rows: Vec<Vec<String>> = c
        .decisions
        .iter()
        .map(|d| {
            let (winner, value) = match d.winner {
                Some(w) => (
                    format!("{}: {}", letter(w), c.entries[w].label),
                    value_cell(d.metric, &c.entries[w].metrics[&d.metric]),
                ),
                None => ("nobody".into(), "not measured".into()),
            };
            let margin = match (d.margin, d.runner_up) {
                // On the runner-up's value, said as more or less: the
                // summary's deltas beside it are on the baseline's.
                (Some(m), Some(r)) => format!(
                    "{:.1} % {} than {}'s",
                    m * 100.0,
                    if d.metric.higher_is_better() {
                        "more"
                    } else {
                        "less"
                    },
                    letter(r)
                ),
                _ => "—".into(),
            };
            let confidence = match d.confidence {
                Some(Confidence::Clear) => "clear: 95 % intervals do not overlap",
                Some(Confidence::Overlapping) => "not clear: 95 % intervals overlap",
                Some(Confidence::PointValues) => "point values without intervals",
                Some(Confidence::Alone) => "only one measured",
                None => "—",
            };
            vec![
                format!(
                    "{} ({}, {} is better)",
                    d.metric.title(),
                    d.metric.unit(),
                    if d.metric.higher_is_better() {
                        "higher"
                    } else {
                        "lower"
                    }
                ),
                winner,
                value,
                margin,
                confidence.into(),
            ]
        })
        .collect();
    l.table(
        &[
            "Metric",
            "Winner",
            "Value",
            "Margin, on the runner-up's value",
            "Confidence",
        ],
        &[95.0, 130.0, 95.0, 100.0, 90.0],
        &rows,
        8.0,
    );
}

/// "Summary with deltas against the baseline": every metric of every entry.
pub(crate) fn summary(l: &mut impl Page, c: &Comparison) {
    let base = c.baseline;
    l.heading("Summary with deltas against the baseline", 12.0);
    l.paragraph(
        "Each Δ is the entry's value against the baseline's, as a percentage of the baseline's; the decision matrix's margins are on the runner-up's value.",
        8.0,
        true,
    );
    let rows: Vec<Vec<String>> = c
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut row = vec![letter(i)];
            for m in Metric::ALL {
                row.push(value_cell(m, &e.metrics[&m]));
                row.push(delta_cell(&e.metrics[&m], i == base));
            }
            row
        })
        .collect();
    l.table(
        &[
            "",
            "Throughput, samples/s [95 % CI]",
            "Δ",
            "Peak memory, MiB",
            "Δ",
            "Cost per epoch, USD",
            "Δ",
            "Time to accuracy, s",
            "Δ",
            "Time to loss, s",
            "Δ",
        ],
        &[
            20.0, 92.0, 36.0, 58.0, 36.0, 66.0, 36.0, 60.0, 36.0, 60.0, 36.0,
        ],
        &rows,
        7.5,
    );
}

/// "Speed-up against the baseline": each entry's throughput ratio with its
/// 95 % interval and verdict, and how the interval was made.
pub(crate) fn speedups(l: &mut impl Page, c: &Comparison) {
    if c.speedups.is_empty() {
        return;
    }
    l.heading("Speed-up against the baseline", 12.0);
    let rows: Vec<Vec<String>> = c
        .speedups
        .iter()
        .map(|s| {
            vec![
                letter(s.entry),
                format!("{:.2}×", s.ratio),
                s.ci95
                    .map_or("none".into(), |ci| format!("{:.2}–{:.2}", ci.low, ci.high)),
                format!("{} / {}", s.runs.0, s.runs.1),
                s.repeats_needed.map_or("—".into(), |n| n.to_string()),
            ]
        })
        .collect();
    l.table(
        &[
            "",
            "Ratio",
            "95 % CI",
            "Runs (entry / baseline)",
            "Runs needed",
        ],
        &[22.0, 55.0, 80.0, 120.0, 80.0],
        &rows,
        8.0,
    );
    for s in &c.speedups {
        l.paragraph(
            &format!("• {}. Method: {}.", s.verdict, s.method),
            8.5,
            false,
        );
    }
}

/// "Where the step goes": each entry's step breakdown per sample, and how
/// each entry's gap to the baseline splits over the parts.
pub(crate) fn breakdown(l: &mut impl Page, c: &Comparison) {
    use trainbench_core::breakdown::{fmt_s, Part};
    if c.entries.iter().all(|e| e.breakdown.is_none()) {
        return;
    }
    l.heading("Where the step goes", 12.0);
    let parts: Vec<Part> = c.breakdown_parts();
    let rows: Vec<Vec<String>> = c
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut row = vec![letter(i)];
            match &e.breakdown {
                Some(b) => {
                    row.extend(parts.iter().map(|p| {
                        b.part(*p).map_or("—".into(), |x| {
                            format!("{} ({:.0} %)", fmt_s(x.per_sample_s), x.share * 100.0)
                        })
                    }));
                    row.push(format!(
                        "{:+.1} %{}",
                        b.split_difference * 100.0,
                        if b.agrees { "" } else { " (!)" }
                    ));
                }
                None => {
                    row.extend(parts.iter().map(|_| "not measured".to_owned()));
                    row.push("—".into());
                }
            }
            row
        })
        .collect();
    let mut header: Vec<&str> = vec![""];
    header.extend(parts.iter().map(|p| p.as_str()));
    header.push("parts vs whole");
    let each = 380.0 / parts.len().max(1) as f32;
    let mut widths = vec![22.0];
    widths.extend(parts.iter().map(|_| each));
    widths.push(70.0);
    l.table(&header, &widths, &rows, 8.0);
    l.paragraph(
        "Per sample: each part's mean per step ÷ the global batch, from extra steps timed after the windows, each phase closed by a device synchronisation; \"parts vs whole\" is the split step against whole steps timed in between (see the method section). Where a framework runs forward, backward and optimizer as one program the breakdown shows that program as one part (fused step) rather than inventing a split.",
        8.0,
        false,
    );
    for x in &c.explanations {
        l.paragraph(
            &format!(
                "• {} against {}: {}{}",
                letter(x.entry),
                letter(c.baseline),
                x.explanation.verdict,
                x.explanation
                    .granularity_note
                    .as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            ),
            8.5,
            false,
        );
    }
}

/// "Scaling efficiency", when an entry has a one-device counterpart.
pub(crate) fn scaling(l: &mut impl Page, c: &Comparison) {
    let scaling: Vec<Vec<String>> = c
        .entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let eff = e.scaling_efficiency?;
            Some(vec![
                letter(i),
                e.devices.to_string(),
                format!("{:.1} %", eff * 100.0),
                e.single_device_entry
                    .as_ref()
                    .and_then(|k| c.entries.iter().position(|x| &x.key == k))
                    .map_or("—".into(), letter),
            ])
        })
        .collect();
    if !scaling.is_empty() {
        l.heading("Scaling efficiency", 12.0);
        l.paragraph(
            "Throughput on N devices ÷ (N × throughput of the same configuration on one device).",
            9.0,
            false,
        );
        l.table(
            &["", "Devices", "Efficiency", "Against one-device entry"],
            &[22.0, 60.0, 80.0, 150.0],
            &scaling,
            8.0,
        );
    }
}

/// "Warnings": the comparison's, and why each run that did not complete
/// stopped (with its last lines of output).
pub(crate) fn warnings(l: &mut impl Page, c: &Comparison, runs: &[RunDetail]) {
    l.heading("Warnings", 12.0);
    if c.warnings.is_empty() {
        l.paragraph("None: the runs train the same model on the same data with the same global batch, and all completed.", 9.0, false);
    }
    for w in &c.warnings {
        l.paragraph(&format!("• {w}"), 9.0, false);
    }
    for r in runs.iter().filter(|r| r.row.status != RunStatus::Completed) {
        let tail: Vec<&str> = r
            .stderr_tail
            .as_deref()
            .unwrap_or("")
            .lines()
            .rev()
            .take(4)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        l.paragraph(
            &format!(
                "Run #{} {}{}{}. {}",
                r.row.id,
                r.row.status.as_str(),
                r.row
                    .error_class
                    .as_deref()
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default(),
                r.row
                    .status_reason
                    .as_deref()
                    .map(|s| format!(": {s}"))
                    .unwrap_or_default(),
                if tail.is_empty() {
                    String::new()
                } else {
                    format!("Last output: {}", tail.join(" | "))
                }
            ),
            8.5,
            false,
        );
    }
}

/// "Charts": the chosen charts, as vectors.
pub(crate) fn charts(l: &mut impl Page, input: &ReportInput<'_>) -> Result<(), ReportError> {
    let c = input.comparison;
    l.heading("Charts", 12.0);
    let data = ChartData {
        comparison: c,
        runs: input.runs,
        hidden: input.hidden_series,
    };
    for kind in input.charts {
        l.chart(&data, *kind)?;
    }
    Ok(())
}

/// The operator profiles per entry (self time per sample by category) and
/// each entry's gap to the baseline over the categories.
pub(crate) fn profile_gaps(l: &mut impl Page, c: &Comparison) {
    use trainbench_core::breakdown::fmt_s;
    use trainbench_core::protocol::OpCategory;
    if c.entries.iter().all(|e| e.profile.is_none()) {
        return;
    }
    l.heading("Where the step goes, by operator category", 12.0);
    let mut header: Vec<&str> = vec![""];
    header.extend(OpCategory::ALL.iter().map(|&c| super::category_header(c)));
    header.push("idle");
    let rows: Vec<Vec<String>> = c
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut row = vec![letter(i)];
            match &e.profile {
                Some(p) => row.extend(p.rows.iter().map(|r| fmt_s(r.per_sample_s))),
                None => row.extend((0..=OpCategory::ALL.len()).map(|_| "not profiled".to_owned())),
            }
            row
        })
        .collect();
    let mut widths = vec![22.0];
    widths.extend((0..=OpCategory::ALL.len()).map(|_| 55.0));
    l.table(&header, &widths, &rows, 7.5);
    l.paragraph(
        "Self time per sample in each entry's operator profile (runs made with --profile; repeats averaged): see \"Operator profiles\" for the method. The profiler's own cost makes these larger than the timed step; they say where the time goes, not how fast.",
        8.0,
        false,
    );
    for g in &c.profile_gaps {
        l.paragraph(
            &format!(
                "• {} against {}: {} ({})",
                letter(g.entry),
                letter(c.baseline),
                g.gap.verdict,
                g.gap.note
            ),
            8.5,
            false,
        );
    }
}

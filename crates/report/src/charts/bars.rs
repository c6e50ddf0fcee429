//! The metric charts: one bar per entry, with its 95 % interval, value and
//! delta against the baseline written beside it.

use plotters::coord::Shift;
use plotters::prelude::*;
use trainbench_core::compare::Metric;
use trainbench_core::session::ChartKind;

use super::style::{bold, err, font, px, PALETTE};
use super::{titles, ChartData};
use crate::ReportError;

fn value_text(m: Metric, v: f64) -> String {
    match m {
        Metric::CostPerEpoch => format!("${v:.2}"),
        Metric::PeakMemory => format!("{v:.0} MiB"),
        Metric::Throughput => format!("{v:.1}"),
        Metric::TimeToAccuracy | Metric::TimeToLoss => format!("{v:.1} s"),
    }
}

/// A metric chart of `kind` for metric `m`.
pub(super) fn bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData<'_>,
    kind: ChartKind,
    m: Metric,
    s: f64,
) -> Result<(), ReportError> {
    let (title, x_desc, _) = titles(kind);
    let entries: Vec<_> = data.visible().collect();
    let max = entries
        .iter()
        .filter_map(|(_, e)| {
            let v = &e.metrics[&m];
            Some(
                v.ci95
                    .map_or(v.value?, |c| c.high.max(v.value.unwrap_or(0.0))),
            )
        })
        .fold(0.0_f64, f64::max);
    let x_max = if max > 0.0 { max * 1.08 } else { 1.0 };
    let n = entries.len().max(1) as f64;
    let mut chart = ChartBuilder::on(root)
        .caption(title, bold(18.0, s))
        .margin(px(12.0, s))
        .x_label_area_size(px(44.0, s))
        .y_label_area_size(px(8.0, s))
        .build_cartesian_2d(0.0..x_max, 0.0..n)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc(format!(
            "{x_desc} ({} is better)",
            if m.higher_is_better() {
                "higher"
            } else {
                "lower"
            }
        ))
        .x_label_style(font(13.0, s))
        .axis_desc_style(font(14.0, s))
        .light_line_style(TRANSPARENT)
        .draw()
        .map_err(err)?;
    let base_key = &data.comparison.entries[data.comparison.baseline].key;
    for (row, (i, e)) in entries.iter().enumerate() {
        // Rows from the top: the first entry is drawn highest.
        let top = n - row as f64;
        let colour = PALETTE[i % PALETTE.len()];
        let v = &e.metrics[&m];
        let mut label = e.label.clone();
        if &e.key == base_key {
            label.push_str(" (baseline)");
        }
        let (y0, y1) = (top - 0.9, top - 0.4);
        // The value goes on the label's line, so it never runs off the chart.
        let value = match v.value {
            Some(x) => {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(0.0, y0), (x, y1)],
                        colour.filled(),
                    )))
                    .map_err(err)?;
                let mid = (y0 + y1) / 2.0;
                if let Some(ci) = v.ci95 {
                    let cap = 0.12;
                    chart
                        .draw_series([
                            PathElement::new(
                                vec![(ci.low, mid), (ci.high, mid)],
                                BLACK.stroke_width(px(2.0, s)),
                            ),
                            PathElement::new(
                                vec![(ci.low, mid - cap), (ci.low, mid + cap)],
                                BLACK.stroke_width(px(2.0, s)),
                            ),
                            PathElement::new(
                                vec![(ci.high, mid - cap), (ci.high, mid + cap)],
                                BLACK.stroke_width(px(2.0, s)),
                            ),
                        ])
                        .map_err(err)?;
                }
                let mut t = value_text(m, x);
                if let Some(ci) = v.ci95 {
                    t.push_str(&format!(
                        " [{}, {}]",
                        value_text(m, ci.low),
                        value_text(m, ci.high)
                    ));
                }
                if let Some(note) = &v.note {
                    t.push_str(&format!(" ({note})"));
                }
                if let Some(d) = v.delta_vs_baseline.filter(|_| &e.key != base_key) {
                    t.push_str(&format!(", {:+.1} %", d * 100.0));
                }
                t
            }
            None => v.note.clone().unwrap_or_else(|| "not measured".into()),
        };
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{label}: {value}"),
                (x_max * 0.004, top - 0.06),
                font(13.0, s),
            )))
            .map_err(err)?;
    }
    Ok(())
}

//! The time charts: one curve per run (throughput, loss or accuracy) over
//! the seconds since its training started, with the target accuracy dashed.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;
use trainbench_core::session::ChartKind;

use super::style::{bold, dash, err, font, legend, marker, px, PALETTE};
use super::{curves, titles, ChartData};
use crate::ReportError;

fn bounds(points: impl Iterator<Item = (f64, f64)>) -> Option<((f64, f64), (f64, f64))> {
    let mut b: Option<((f64, f64), (f64, f64))> = None;
    for (x, y) in points {
        b = Some(match b {
            None => ((x, x), (y, y)),
            Some(((x0, x1), (y0, y1))) => ((x0.min(x), x1.max(x)), (y0.min(y), y1.max(y))),
        });
    }
    b
}

/// A time chart of `kind`, its legend below it.
pub(super) fn time_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData<'_>,
    kind: ChartKind,
    s: f64,
) -> Result<(), ReportError> {
    let (title, x_desc, y_desc) = titles(kind);
    let curves = curves(data, kind);
    let rows = data.visible().count() as f64;
    let (plot, key) = root.split_vertically(root.dim_in_pixel().1 - px(22.0 * rows + 14.0, s));
    let target = (kind == ChartKind::AccuracyOverTime)
        .then(|| {
            data.runs.iter().find_map(|r| {
                r.spec
                    .get("target_accuracy")
                    .and_then(serde_json::Value::as_f64)
            })
        })
        .flatten();
    let b = bounds(curves.iter().flat_map(|c| c.points.iter().copied()));
    let ((x0, x1), (mut y0, mut y1)) = b.unwrap_or(((0.0, 1.0), (0.0, 1.0)));
    if let Some(t) = target {
        y0 = y0.min(t * 100.0);
        y1 = y1.max(t * 100.0);
    }
    if kind != ChartKind::LossOverTime {
        y0 = y0.min(0.0);
    }
    let pad = ((y1 - y0) * 0.08).max(1e-9);
    let x_hi = if x1 > 0.0 { x1 * 1.03 } else { 1.0 };
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, bold(18.0, s))
        .margin(px(12.0, s))
        .x_label_area_size(px(44.0, s))
        .y_label_area_size(px(70.0, s))
        .build_cartesian_2d(
            x0.min(0.0)..x_hi,
            (y0 - if y0 == 0.0 { 0.0 } else { pad })..(y1 + pad),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(font(13.0, s))
        .axis_desc_style(font(14.0, s))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    if b.is_none() {
        chart
            .draw_series(std::iter::once(Text::new(
                "not measured: no run has these points",
                (x_hi * 0.3, (y0 + y1) / 2.0),
                font(14.0, s),
            )))
            .map_err(err)?;
    }
    if let Some(t) = target {
        chart
            .draw_series(DashedLineSeries::new(
                [(x0.min(0.0), t * 100.0), (x_hi, t * 100.0)],
                px(6.0, s),
                px(4.0, s),
                BLACK.stroke_width(px(1.0, s)),
            ))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!("target {:.0} %", t * 100.0),
                (x_hi * 0.01, t * 100.0),
                font(12.0, s),
            )))
            .map_err(err)?;
    }
    for c in &curves {
        let colour = PALETTE[c.entry % PALETTE.len()];
        let style = colour.stroke_width(px(2.0, s));
        match dash(c.entry) {
            None => {
                chart
                    .draw_series(LineSeries::new(c.points.iter().copied(), style))
                    .map_err(err)?;
            }
            Some((d, g)) => {
                chart
                    .draw_series(DashedLineSeries::new(
                        c.points.iter().copied(),
                        px(f64::from(d), s),
                        px(f64::from(g), s),
                        style,
                    ))
                    .map_err(err)?;
            }
        }
        let entry = c.entry;
        chart
            .draw_series(
                c.points
                    .iter()
                    .map(|&p| EmptyElement::at(p) + marker::<DB>(entry, (0, 0), colour, s)),
            )
            .map_err(err)?;
    }
    let drawn: Vec<usize> = curves.iter().map(|c| c.entry).collect();
    legend(&key, data, &drawn, s)
}

//! The scaling chart: throughput over device count for configurations that
//! differ only in it, each against linear scaling from its one-device run.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;
use trainbench_core::compare::{Comparison, Metric};
use trainbench_core::session::ChartKind;

use super::style::{bold, err, font, legend, marker, px, PALETTE};
use super::{titles, ChartData};
use crate::ReportError;

/// The scaling chart, its legend below it.
pub(super) fn scaling<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData<'_>,
    s: f64,
) -> Result<(), ReportError> {
    let (title, x_desc, y_desc) = titles(ChartKind::Scaling);
    let c = data.comparison;
    let rows = data.visible().count() as f64;
    let (plot, key) = root.split_vertically(root.dim_in_pixel().1 - px(22.0 * rows + 14.0, s));
    let tp = |i: usize| c.entries[i].metrics[&Metric::Throughput].clone();
    let series = visible_series(data);
    let max_devices = series.iter().flatten().map(|p| p.0).max().unwrap_or(2);
    let y_max = series
        .iter()
        .flatten()
        .filter_map(|p| {
            let v = tp(p.1);
            Some(v.ci95.map_or(v.value?, |ci| ci.high))
        })
        .chain(series.iter().filter_map(|pts| {
            let one = pts.iter().find(|p| p.0 == 1)?;
            Some(tp(one.1).value? * f64::from(max_devices))
        }))
        .fold(0.0_f64, f64::max);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, bold(18.0, s))
        .margin(px(12.0, s))
        .x_label_area_size(px(44.0, s))
        .y_label_area_size(px(70.0, s))
        .build_cartesian_2d(
            0.5..(f64::from(max_devices) + 0.5),
            0.0..(y_max * 1.12).max(1.0),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(max_devices as usize + 1)
        .x_label_formatter(&|x| {
            if (x - x.round()).abs() < 1e-9 && *x >= 1.0 {
                format!("{}", x.round() as u64)
            } else {
                String::new()
            }
        })
        .label_style(font(13.0, s))
        .axis_desc_style(font(14.0, s))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    if series.is_empty() {
        chart
            .draw_series(std::iter::once(Text::new(
                "not measured: no runs that differ only in device count",
                (0.7, y_max.max(1.0) * 0.5),
                font(14.0, s),
            )))
            .map_err(err)?;
    }
    for pts in &series {
        draw_series(&mut chart, pts, c, max_devices, s)?;
    }
    let drawn: Vec<usize> = series.iter().flatten().map(|p| p.1).collect();
    legend(&key, data, &drawn, s)
}

/// The scaling series with at least two visible points.
fn visible_series(data: &ChartData<'_>) -> Vec<Vec<(u32, usize)>> {
    let visible: Vec<usize> = data.visible().map(|(i, _)| i).collect();
    data.comparison
        .scaling
        .iter()
        .map(|sc| {
            sc.points
                .iter()
                .copied()
                .filter(|p| visible.contains(&p.1))
                .collect::<Vec<_>>()
        })
        .filter(|p: &Vec<(u32, usize)>| p.len() >= 2)
        .collect()
}

/// One series: its line, linear scaling from its one-device point (dashed),
/// and each point with its interval and efficiency.
fn draw_series<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    pts: &[(u32, usize)],
    c: &Comparison,
    max_devices: u32,
    s: f64,
) -> Result<(), ReportError> {
    let tp = |i: usize| c.entries[i].metrics[&Metric::Throughput].clone();
    let first = pts[0].1;
    let colour = PALETTE[first % PALETTE.len()];
    let line: Vec<(f64, f64)> = pts
        .iter()
        .filter_map(|p| Some((f64::from(p.0), tp(p.1).value?)))
        .collect();
    chart
        .draw_series(LineSeries::new(
            line.iter().copied(),
            colour.stroke_width(px(2.0, s)),
        ))
        .map_err(err)?;
    if let Some(one) = pts.iter().find(|p| p.0 == 1).and_then(|p| tp(p.1).value) {
        chart
            .draw_series(DashedLineSeries::new(
                [
                    (1.0, one),
                    (f64::from(max_devices), one * f64::from(max_devices)),
                ],
                px(6.0, s),
                px(4.0, s),
                colour.stroke_width(px(1.0, s)),
            ))
            .map_err(err)?;
    }
    for &(d, i) in pts {
        let v = tp(i);
        let Some(y) = v.value else { continue };
        let x = f64::from(d);
        let colour = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x, y)) + marker::<DB>(i, (0, 0), colour, s),
            ))
            .map_err(err)?;
        if let Some(ci) = v.ci95 {
            chart
                .draw_series([
                    PathElement::new(
                        vec![(x, ci.low), (x, ci.high)],
                        BLACK.stroke_width(px(1.5, s)),
                    ),
                    PathElement::new(
                        vec![(x - 0.04, ci.low), (x + 0.04, ci.low)],
                        BLACK.stroke_width(px(1.5, s)),
                    ),
                    PathElement::new(
                        vec![(x - 0.04, ci.high), (x + 0.04, ci.high)],
                        BLACK.stroke_width(px(1.5, s)),
                    ),
                ])
                .map_err(err)?;
        }
        let label = match c.entries[i].scaling_efficiency {
            Some(eff) => format!("{y:.1}  ({:.0} % efficiency)", eff * 100.0),
            None => format!("{y:.1}"),
        };
        chart
            .draw_series(std::iter::once(Text::new(
                label,
                (x + 0.06, y),
                font(12.0, s),
            )))
            .map_err(err)?;
    }
    Ok(())
}

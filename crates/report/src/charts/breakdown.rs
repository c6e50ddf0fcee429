//! "Where the step goes": one stacked bar per entry, a segment per part of the
//! step (per sample), the parts' total written beside it.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;
use trainbench_core::breakdown::{fmt_s, Part};
use trainbench_core::session::ChartKind;

use super::style::{bold, err, font, px};
use super::{titles, ChartData};
use crate::ReportError;

/// One colour per part (the app's `PART_COLOURS`).
pub fn part_colour(p: Part) -> RGBColor {
    match p {
        Part::Data => RGBColor(0x8c, 0x6d, 0x31),
        Part::Forward => RGBColor(0x31, 0x82, 0xbd),
        Part::Backward => RGBColor(0xe6, 0x55, 0x0d),
        Part::Communication => RGBColor(0x75, 0x6b, 0xb1),
        Part::Optimizer => RGBColor(0x31, 0xa3, 0x54),
        Part::Step => RGBColor(0x63, 0x63, 0x63),
    }
}

pub(super) fn stacked<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData<'_>,
    s: f64,
) -> Result<(), ReportError> {
    let (title, x_desc, _) = titles(ChartKind::StepBreakdown);
    let entries: Vec<_> = data.visible().collect();
    let total = |e: &trainbench_core::compare::CompareEntry| {
        e.breakdown
            .as_ref()
            .map(|b| b.parts.iter().map(|p| p.per_sample_s).sum::<f64>())
    };
    let max = entries
        .iter()
        .filter_map(|(_, e)| total(e))
        .fold(0.0_f64, f64::max);
    // Milliseconds per sample on the axis.
    let x_max = if max > 0.0 { max * 1e3 * 1.25 } else { 1.0 };
    let n = entries.len().max(1) as f64 + 0.6;
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
        .x_desc(x_desc)
        .x_label_style(font(13.0, s))
        .axis_desc_style(font(14.0, s))
        .light_line_style(TRANSPARENT)
        .draw()
        .map_err(err)?;
    let mut present: Vec<Part> = Vec::new();
    for (row, (_, e)) in entries.iter().enumerate() {
        let top = n - row as f64;
        let (y0, y1) = (top - 0.9, top - 0.4);
        let text = match (&e.breakdown, total(e)) {
            (Some(b), Some(t)) => {
                let mut x = 0.0;
                let mut parts: Vec<_> = b.parts.iter().collect();
                parts.sort_by_key(|p| p.part);
                for p in parts {
                    let w = p.per_sample_s.max(0.0) * 1e3;
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x, y0), (x + w, y1)],
                            part_colour(p.part).filled(),
                        )))
                        .map_err(err)?;
                    x += w;
                    if !present.contains(&p.part) {
                        present.push(p.part);
                    }
                }
                format!(
                    "{}: {} per sample{}",
                    e.label,
                    fmt_s(t),
                    if b.agrees {
                        ""
                    } else {
                        " (parts and whole step disagree)"
                    }
                )
            }
            _ => format!("{}: not measured", e.label),
        };
        chart
            .draw_series(std::iter::once(Text::new(
                text,
                (x_max * 0.004, top - 0.06),
                font(13.0, s),
            )))
            .map_err(err)?;
    }
    // The legend: a swatch and a name per part, in one row at the bottom.
    present.sort();
    let mut x = x_max * 0.004;
    for p in present {
        let w = x_max * 0.025;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x, 0.12), (x + w, 0.42)],
                part_colour(p).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                p.as_str().to_owned(),
                (x + w * 1.3, 0.40),
                font(12.0, s),
            )))
            .map_err(err)?;
        x += x_max * (0.05 + 0.012 * p.as_str().len() as f64);
    }
    Ok(())
}

//! The look every chart shares: the palette, fonts, marker shapes, dash
//! patterns and the legend, all sized by the drawing's scale `s`.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, RGBColor};

use super::ChartData;
use crate::ReportError;

/// Okabe–Ito colour-blind-safe palette (the yellow darkened to read on white).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(160, 140, 0),
];

/// The colour of entry `i`, as `#rrggbb` (for the app's charts).
pub fn colour_hex(i: usize) -> String {
    let c = PALETTE[i % PALETTE.len()];
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// The family plotters draws with; [`crate::fonts::register_for_plotters`]
/// gives it the shipped fonts.
const FONT: &str = "sans-serif";

/// A plotters error as a report error.
pub(super) fn err<E: std::fmt::Debug>(e: E) -> ReportError {
    ReportError::Chart(format!("{e:?}"))
}

/// `v` pixels at scale `s`.
pub(super) fn px(v: f64, s: f64) -> u32 {
    (v * s).round() as u32
}

/// Regular text of `size` pixels at scale `s`.
pub(super) fn font(size: f64, s: f64) -> TextStyle<'static> {
    (FONT, size * s).into_font().color(&BLACK)
}

/// Bold text of `size` pixels at scale `s`.
pub(super) fn bold(size: f64, s: f64) -> TextStyle<'static> {
    (FONT, size * s, FontStyle::Bold).into_font().color(&BLACK)
}

/// Marker shapes per entry, so curves differ without colour.
pub(super) fn marker<DB: DrawingBackend>(
    i: usize,
    at: (i32, i32),
    colour: RGBColor,
    s: f64,
) -> DynElement<'static, DB, (i32, i32)> {
    let r = px(4.0, s) as i32;
    let style = colour.filled();
    match i % 4 {
        0 => Circle::new(at, r, style).into_dyn(),
        1 => TriangleMarker::new(at, r + 1, style).into_dyn(),
        2 => Rectangle::new([(at.0 - r, at.1 - r), (at.0 + r, at.1 + r)], style).into_dyn(),
        _ => Cross::new(at, r + 1, colour.stroke_width(px(2.0, s))).into_dyn(),
    }
}

/// Every other entry's curve is dashed, so neighbours differ without colour.
pub(super) fn dash(i: usize) -> Option<(u32, u32)> {
    (!i.is_multiple_of(2)).then_some((8, 4))
}

/// The legend below a chart: the entries drawn (others are not listed).
pub(super) fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &ChartData<'_>,
    drawn: &[usize],
    s: f64,
) -> Result<(), ReportError> {
    for (row, (i, e)) in data
        .visible()
        .filter(|(i, _)| drawn.contains(i))
        .enumerate()
    {
        let y = px(10.0 + 22.0 * row as f64, s) as i32;
        let colour = PALETTE[i % PALETTE.len()];
        let x0 = px(70.0, s) as i32;
        let style = colour.stroke_width(px(2.0, s));
        area.draw(&PathElement::new(
            vec![(x0, y), (x0 + px(36.0, s) as i32, y)],
            style,
        ))
        .map_err(err)?;
        area.draw(&marker::<DB>(i, (x0 + px(18.0, s) as i32, y), colour, s))
            .map_err(err)?;
        area.draw(&Text::new(
            e.label.clone(),
            (x0 + px(46.0, s) as i32, y - px(7.0, s) as i32),
            font(13.0, s),
        ))
        .map_err(err)?;
    }
    Ok(())
}

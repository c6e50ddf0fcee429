//! Comparison charts drawn with plotters, as SVG (vectors, for the PDF and the
//! app) or PNG. Every chart names its axes with units; bars carry their run
//! labels and values as text, so they read without colour; curves differ in
//! marker shape and dash pattern as well as colour (legible in greyscale).
//! Colours follow the entry's position in the comparison, so one
//! configuration has one colour in every chart. Text uses the DejaVu fonts
//! shipped in `assets/fonts`, never a system font.
//!
//! - `data`: what a chart is drawn from, and the points of the time charts;
//! - `style`: the palette, fonts, markers, dash patterns and legend every
//!   chart shares;
//! - `bars`: one bar per entry for a metric, with its 95 % interval;
//! - `time`: curves over the time since training started;
//! - `scaling`: throughput over device count against linear scaling.

mod bars;
mod breakdown;
mod data;
mod scaling;
mod style;
mod time;

use plotters::coord::Shift;
use plotters::prelude::*;
use trainbench_core::session::ChartKind;

use crate::{fonts, ReportError};
use bars::bars;
use scaling::scaling;
use style::err;
use time::time_chart;

pub use breakdown::part_colour;
pub use data::{curves, ChartData, Curve};
pub use style::{colour_hex, PALETTE};

/// Width of a chart in pixels (SVG user units) unless asked otherwise.
pub const WIDTH: u32 = 960;

/// Title, x axis and y axis of a chart, units included.
pub fn titles(kind: ChartKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        ChartKind::Throughput => (
            "Throughput (steady state, 95 % CI)",
            "samples per second",
            "",
        ),
        ChartKind::PeakMemory => ("Peak memory", "MiB", ""),
        ChartKind::CostPerEpoch => (
            "Cost per epoch (95 % CI where projected)",
            "US dollars per epoch",
            "",
        ),
        ChartKind::TimeToAccuracy => (
            "Time to target accuracy",
            "seconds from the start of training",
            "",
        ),
        ChartKind::ThroughputOverTime => (
            "Throughput over time (per timing window)",
            "seconds since the start of training",
            "samples per second",
        ),
        ChartKind::LossOverTime => (
            "Training loss over time (window mean)",
            "seconds since the start of training",
            "loss",
        ),
        ChartKind::AccuracyOverTime => (
            "Validation accuracy over time",
            "seconds since the start of training",
            "accuracy (%)",
        ),
        ChartKind::Scaling => (
            "Scaling over device count (dashed: linear from one device)",
            "devices",
            "samples per second",
        ),
        ChartKind::StepBreakdown => (
            "Where the step goes (step breakdown, per sample)",
            "ms per sample: data, forward, backward, communication, optimizer or the fused step",
            "",
        ),
    }
}

/// Height of a chart in pixels at the standard width.
pub fn height(data: &ChartData<'_>, kind: ChartKind) -> u32 {
    let legend_rows = data.visible().count() as u32;
    match kind.metric() {
        Some(_) => 90 + 58 * legend_rows,
        None if kind == ChartKind::StepBreakdown => 120 + 58 * legend_rows,
        None => 470 + 22 * legend_rows,
    }
}

/// The chart as an SVG document, [`WIDTH`] wide.
pub fn svg(data: &ChartData<'_>, kind: ChartKind) -> Result<String, ReportError> {
    svg_sized(data, kind, WIDTH)
}

/// The chart as an SVG document `width` user units wide (narrower charts
/// have proportionally larger text when scaled onto a page).
pub fn svg_sized(data: &ChartData<'_>, kind: ChartKind, width: u32) -> Result<String, ReportError> {
    fonts::register_for_plotters()?;
    let h = height(data, kind);
    let mut out = String::new();
    {
        let root =
            SVGBackend::with_string(&mut out, (width.clamp(480, 4000), h)).into_drawing_area();
        draw(&root, data, kind)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// The chart as a PNG image (`scale` 2 for a sharper picture).
pub fn png(data: &ChartData<'_>, kind: ChartKind, scale: u32) -> Result<Vec<u8>, ReportError> {
    fonts::register_for_plotters()?;
    let scale = scale.clamp(1, 4);
    let h = height(data, kind);
    let (w, h) = (WIDTH * scale, h * scale);
    let mut pixels = vec![255u8; (w * h * 3) as usize];
    {
        // Plotters has no global scale: the larger area is drawn with every
        // size (text, strokes, margins) multiplied.
        let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
        draw_scaled(&root, data, kind, f64::from(scale))?;
        root.present().map_err(err)?;
    }
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(err)?;
        writer.write_image_data(&pixels).map_err(err)?;
    }
    Ok(bytes)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData<'_>,
    kind: ChartKind,
) -> Result<(), ReportError> {
    draw_scaled(root, data, kind, 1.0)
}

fn draw_scaled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData<'_>,
    kind: ChartKind,
    s: f64,
) -> Result<(), ReportError> {
    root.fill(&WHITE).map_err(err)?;
    match kind.metric() {
        Some(m) => bars(root, data, kind, m, s),
        None if kind == ChartKind::Scaling => scaling(root, data, s),
        None if kind == ChartKind::StepBreakdown => breakdown::stacked(root, data, s),
        None => time_chart(root, data, kind, s),
    }
}

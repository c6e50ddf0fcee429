//! Comparison charts drawn with plotters, as SVG (vectors, for the PDF and the
//! app) or PNG. Every chart names its axes with units; bars carry their run
//! labels and values as text, so they read without colour; curves differ in
//! marker shape and dash pattern as well as colour (legible in greyscale).
//! Colours follow the entry's position in the comparison, so one
//! configuration has one colour in every chart. Text uses the DejaVu fonts
//! shipped in `assets/fonts`, never a system font.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, RGBColor};
use trainbench_core::compare::{Comparison, Metric};
use trainbench_core::record::RunDetail;
use trainbench_core::session::ChartKind;

use crate::{fonts, ReportError};

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

const FONT: &str = "sans-serif";
/// Width of a chart in pixels (SVG user units) unless asked otherwise.
pub const WIDTH: u32 = 960;

/// What the charts are drawn from: the comparison and every run it holds.
#[derive(Debug, Clone, Copy)]
pub struct ChartData<'a> {
    pub comparison: &'a Comparison,
    pub runs: &'a [RunDetail],
    /// Entry keys not to draw.
    pub hidden: &'a [String],
}

impl ChartData<'_> {
    fn visible(&self) -> impl Iterator<Item = (usize, &trainbench_core::compare::CompareEntry)> {
        self.comparison
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| !self.hidden.contains(&e.key))
    }

    fn run(&self, id: i64) -> Option<&RunDetail> {
        self.runs.iter().find(|r| r.row.id == id)
    }
}

/// A curve of one run over wall time since the start of training.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub entry: usize,
    pub run_id: i64,
    pub points: Vec<(f64, f64)>,
}

fn train_start_ns(r: &RunDetail) -> Option<u64> {
    r.hello
        .as_ref()
        .and_then(|h| h.get("train_start_ns"))
        .and_then(serde_json::Value::as_u64)
        .or_else(|| r.windows.first().map(|w| w.start_ns))
}

/// The points of a time chart (x: seconds since training started): window
/// throughput (samples/s) or mean loss at each window's end, or validation
/// accuracy (%) at each evaluation.
pub fn curves(data: &ChartData<'_>, kind: ChartKind) -> Vec<Curve> {
    let mut out = Vec::new();
    for (i, e) in data.visible() {
        for id in &e.run_ids {
            let Some(r) = data.run(*id) else { continue };
            let Some(t0) = train_start_ns(r) else {
                continue;
            };
            let at = |ns: u64| ns.saturating_sub(t0) as f64 / 1e9;
            let points: Vec<(f64, f64)> = match kind {
                ChartKind::ThroughputOverTime => r
                    .windows
                    .iter()
                    .filter(|w| w.end_ns > w.start_ns)
                    .map(|w| {
                        (
                            at(w.end_ns),
                            w.samples as f64 / ((w.end_ns - w.start_ns) as f64 / 1e9),
                        )
                    })
                    .collect(),
                ChartKind::LossOverTime => r
                    .windows
                    .iter()
                    .map(|w| (at(w.end_ns), w.loss_mean))
                    .collect(),
                ChartKind::AccuracyOverTime => r
                    .evals
                    .iter()
                    .map(|e| (e.elapsed_s, e.accuracy * 100.0))
                    .collect(),
                _ => Vec::new(),
            };
            let points: Vec<(f64, f64)> = points
                .into_iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .collect();
            if !points.is_empty() {
                out.push(Curve {
                    entry: i,
                    run_id: *id,
                    points,
                });
            }
        }
    }
    out
}

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
    }
}

fn err<E: std::fmt::Debug>(e: E) -> ReportError {
    ReportError::Chart(format!("{e:?}"))
}

/// Height of a chart in pixels at the standard width.
pub fn height(data: &ChartData<'_>, kind: ChartKind) -> u32 {
    let legend_rows = data.visible().count() as u32;
    match kind.metric() {
        Some(_) => 90 + 58 * legend_rows,
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

fn px(v: f64, s: f64) -> u32 {
    (v * s).round() as u32
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
        None => time_chart(root, data, kind, s),
    }
}

fn font(size: f64, s: f64) -> TextStyle<'static> {
    (FONT, size * s).into_font().color(&BLACK)
}

fn bold(size: f64, s: f64) -> TextStyle<'static> {
    (FONT, size * s, FontStyle::Bold).into_font().color(&BLACK)
}

fn value_text(m: Metric, v: f64) -> String {
    match m {
        Metric::CostPerEpoch => format!("${v:.2}"),
        Metric::PeakMemory => format!("{v:.0} MiB"),
        Metric::Throughput => format!("{v:.1}"),
        Metric::TimeToAccuracy => format!("{v:.1} s"),
    }
}

fn bars<DB: DrawingBackend>(
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

/// Marker shapes per entry, so curves differ without colour.
fn marker<DB: DrawingBackend>(
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
fn dash(i: usize) -> Option<(u32, u32)> {
    (!i.is_multiple_of(2)).then_some((8, 4))
}

/// The legend below a chart: the entries drawn (others are not listed).
fn legend<DB: DrawingBackend>(
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

fn time_chart<DB: DrawingBackend>(
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

fn scaling<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ChartData<'_>,
    s: f64,
) -> Result<(), ReportError> {
    let (title, x_desc, y_desc) = titles(ChartKind::Scaling);
    let c = data.comparison;
    let rows = data.visible().count() as f64;
    let (plot, key) = root.split_vertically(root.dim_in_pixel().1 - px(22.0 * rows + 14.0, s));
    let tp = |i: usize| c.entries[i].metrics[&Metric::Throughput].clone();
    let visible: Vec<usize> = data.visible().map(|(i, _)| i).collect();
    let series: Vec<Vec<(u32, usize)>> = c
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
        .collect();
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
    }
    let drawn: Vec<usize> = series.iter().flatten().map(|p| p.1).collect();
    legend(&key, data, &drawn, s)
}

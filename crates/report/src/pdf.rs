//! The PDF report of a comparison or saved session, written with krilla:
//! real text in the shipped DejaVu fonts (selectable and extractable), charts
//! embedded as vectors from their SVG.
//!
//! Layout happens in two passes: [`Layout`] places text, rules and charts on
//! A4 pages (wrapping text with the font's own advance widths and repeating
//! table headers across page breaks), then the pages are drawn.

use ab_glyph::{Font as _, FontRef};
use krilla::color::rgb;
use krilla::geom::{PathBuilder, Point, Rect, Size, Transform};
use krilla::metadata::Metadata;
use krilla::page::PageSettings;
use krilla::paint::{Fill, Stroke};
use krilla::text::{Font, TextDirection};
use krilla::Document;
use krilla_svg::{SurfaceExt, SvgSettings};
use trainbench_core::compare::{Comparison, Confidence, Metric, MetricValue};
use trainbench_core::record::RunDetail;
use trainbench_core::reference::PriceRow;
use trainbench_core::session::ChartKind;
use trainbench_core::stats::WARMUP_RULE;
use trainbench_core::summary::{RunStatus, IMAGENET_1K_TRAIN};

use crate::charts::{self, ChartData};
use crate::{fonts, ReportError};

const PAGE_W: f32 = 595.28;
const PAGE_H: f32 = 841.89;
const MARGIN: f32 = 50.0;
const BODY: f32 = PAGE_W - 2.0 * MARGIN;
const BOTTOM: f32 = PAGE_H - MARGIN - 14.0;

/// What a report is made of.
#[derive(Debug, Clone)]
pub struct ReportInput<'a> {
    /// The session's name, or a description of the runs compared.
    pub title: String,
    pub comparison: &'a Comparison,
    /// Every run of the comparison, in full.
    pub runs: &'a [RunDetail],
    /// Charts in the order to show them.
    pub charts: &'a [ChartKind],
    pub hidden_series: &'a [String],
    /// The price rows the runs' costs used.
    pub prices: &'a [PriceRow],
    pub generated_unix_ms: i64,
    pub studio_version: &'a str,
    /// Sections a caller adds after the question (a check suite's verdicts).
    pub extra: &'a [Section],
}

/// A section of the report supplied by its caller: a heading, a paragraph and
/// a table.
#[derive(Debug, Clone, Default)]
pub struct Section {
    pub heading: String,
    pub text: String,
    pub headers: Vec<String>,
    /// Column widths in points (the page's text column is about 500 wide).
    pub widths: Vec<f32>,
    pub rows: Vec<Vec<String>>,
}

#[derive(Debug, Clone)]
enum Op {
    Text {
        x: f32,
        y: f32,
        size: f32,
        bold: bool,
        grey: bool,
        text: String,
    },
    Rect {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        shade: u8,
    },
    Line {
        x1: f32,
        y1: f32,
        x2: f32,
        y2: f32,
    },
    Svg {
        tree: Box<usvg::Tree>,
        x: f32,
        y: f32,
        w: f32,
        h: f32,
    },
}

struct Layout {
    pages: Vec<Vec<Op>>,
    y: f32,
    regular: FontRef<'static>,
    bold: FontRef<'static>,
}

fn font_err<E: std::fmt::Debug>(e: E) -> ReportError {
    ReportError::Font(format!("{e:?}"))
}

impl Layout {
    fn new() -> Result<Layout, ReportError> {
        Ok(Layout {
            pages: vec![Vec::new()],
            y: MARGIN,
            regular: FontRef::try_from_slice(fonts::REGULAR).map_err(font_err)?,
            bold: FontRef::try_from_slice(fonts::BOLD).map_err(font_err)?,
        })
    }

    fn width(&self, text: &str, size: f32, bold: bool) -> f32 {
        let f = if bold { &self.bold } else { &self.regular };
        let upem = f.units_per_em().unwrap_or(2048.0);
        text.chars()
            .map(|c| f.h_advance_unscaled(f.glyph_id(c)))
            .sum::<f32>()
            * size
            / upem
    }

    /// Greedy word wrap; words longer than a line are broken by characters.
    fn wrap(&self, text: &str, size: f32, bold: bool, width: f32) -> Vec<String> {
        let mut lines = Vec::new();
        for para in text.split('\n') {
            let mut line = String::new();
            for word in para.split(' ') {
                let candidate = if line.is_empty() {
                    word.to_string()
                } else {
                    format!("{line} {word}")
                };
                if self.width(&candidate, size, bold) <= width {
                    line = candidate;
                    continue;
                }
                if !line.is_empty() {
                    lines.push(std::mem::take(&mut line));
                }
                let mut piece = String::new();
                for c in word.chars() {
                    piece.push(c);
                    if self.width(&piece, size, bold) > width && piece.chars().count() > 1 {
                        piece.pop();
                        lines.push(std::mem::take(&mut piece));
                        piece.push(c);
                    }
                }
                line = piece;
            }
            lines.push(line);
        }
        lines
    }

    fn page(&mut self) -> &mut Vec<Op> {
        if self.pages.is_empty() {
            self.pages.push(Vec::new());
        }
        let last = self.pages.len() - 1;
        &mut self.pages[last]
    }

    fn new_page(&mut self) {
        self.pages.push(Vec::new());
        self.y = MARGIN;
    }

    fn ensure(&mut self, height: f32) {
        if self.y + height > BOTTOM && self.y > MARGIN + 1.0 {
            self.new_page();
        }
    }

    fn text_at(&mut self, x: f32, baseline: f32, size: f32, bold: bool, grey: bool, text: String) {
        self.page().push(Op::Text {
            x,
            y: baseline,
            size,
            bold,
            grey,
            text,
        });
    }

    fn heading(&mut self, text: &str, size: f32) {
        // Keep a heading with at least a few lines of what follows it.
        self.ensure(size * 3.0 + 50.0);
        self.y += size * 0.6;
        let baseline = self.y + size;
        self.text_at(MARGIN, baseline, size, true, false, text.to_string());
        self.y = baseline + size * 0.5;
    }

    fn paragraph(&mut self, text: &str, size: f32, grey: bool) {
        for line in self.wrap(text, size, false, BODY) {
            self.ensure(size * 1.4);
            let baseline = self.y + size;
            self.text_at(MARGIN, baseline, size, false, grey, line);
            self.y += size * 1.4;
        }
        self.y += size * 0.4;
    }

    /// A table with wrapped cells; the header row repeats after a page break.
    fn table(&mut self, headers: &[&str], widths: &[f32], rows: &[Vec<String>], size: f32) {
        let pad = 3.0;
        let line_h = size * 1.3;
        let total: f32 = widths.iter().sum();
        let scale = BODY / total;
        let widths: Vec<f32> = widths.iter().map(|w| w * scale).collect();
        let header_lines: Vec<Vec<String>> = headers
            .iter()
            .zip(&widths)
            .map(|(h, w)| self.wrap(h, size, true, w - 2.0 * pad))
            .collect();
        let header_h =
            header_lines.iter().map(Vec::len).max().unwrap_or(1) as f32 * line_h + 2.0 * pad;
        let draw_header = |l: &mut Layout| {
            let y = l.y;
            l.page().push(Op::Rect {
                x: MARGIN,
                y,
                w: BODY,
                h: header_h,
                shade: 225,
            });
            let mut x = MARGIN;
            for (lines, w) in header_lines.iter().zip(&widths) {
                for (k, line) in lines.iter().enumerate() {
                    l.text_at(
                        x + pad,
                        y + pad + size + k as f32 * line_h,
                        size,
                        true,
                        false,
                        line.clone(),
                    );
                }
                x += w;
            }
            l.y += header_h;
        };
        self.ensure(header_h + line_h * 2.0);
        draw_header(self);
        for (r, row) in rows.iter().enumerate() {
            let cells: Vec<Vec<String>> = row
                .iter()
                .zip(&widths)
                .map(|(c, w)| self.wrap(c, size, false, w - 2.0 * pad))
                .collect();
            let h = cells.iter().map(Vec::len).max().unwrap_or(1) as f32 * line_h + 2.0 * pad;
            if self.y + h > BOTTOM {
                self.new_page();
                draw_header(self);
            }
            let y = self.y;
            if r % 2 == 1 {
                self.page().push(Op::Rect {
                    x: MARGIN,
                    y,
                    w: BODY,
                    h,
                    shade: 245,
                });
            }
            let mut x = MARGIN;
            for (lines, w) in cells.iter().zip(&widths) {
                for (k, line) in lines.iter().enumerate() {
                    self.text_at(
                        x + pad,
                        y + pad + size + k as f32 * line_h,
                        size,
                        false,
                        false,
                        line.clone(),
                    );
                }
                x += w;
            }
            self.y += h;
            let y = self.y;
            self.page().push(Op::Line {
                x1: MARGIN,
                y1: y,
                x2: MARGIN + BODY,
                y2: y,
            });
        }
        self.y += size;
    }

    fn svg(&mut self, svg: &str) -> Result<(), ReportError> {
        let tree = usvg::Tree::from_str(svg, &fonts::svg_options())
            .map_err(|e| ReportError::Pdf(format!("chart SVG: {e}")))?;
        let (tw, th) = (tree.size().width(), tree.size().height());
        let w = BODY;
        let h = th * w / tw;
        self.ensure(h + 8.0);
        let y = self.y;
        self.page().push(Op::Svg {
            tree: Box::new(tree),
            x: MARGIN,
            y,
            w,
            h,
        });
        self.y += h + 12.0;
        Ok(())
    }
}

/// `YYYY-MM-DD HH:MM UTC` from Unix milliseconds.
pub fn utc_text(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// A, B, …, Z, AA, AB, …: short names for the entries in tables.
pub fn letter(i: usize) -> String {
    let mut n = i + 1;
    let mut s = Vec::new();
    while n > 0 {
        let r = (n - 1) % 26;
        s.push(b'A' + r as u8);
        n = (n - 1) / 26;
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

fn value_cell(m: Metric, v: &MetricValue) -> String {
    let digits = match m {
        Metric::CostPerEpoch => 2,
        Metric::PeakMemory => 0,
        _ => 1,
    };
    match v.value {
        None => v.note.clone().unwrap_or_else(|| "not measured".into()),
        Some(x) => {
            let mut s = format!("{x:.digits$}");
            if let Some(ci) = v.ci95 {
                s.push_str(&format!(" [{:.digits$}, {:.digits$}]", ci.low, ci.high));
            }
            if let Some(n) = &v.note {
                s.push_str(&format!(" ({n})"));
            }
            s
        }
    }
}

fn delta_cell(v: &MetricValue, is_base: bool) -> String {
    if is_base {
        return "baseline".into();
    }
    v.delta_vs_baseline
        .map_or("—".into(), |d| format!("{:+.1} %", d * 100.0))
}

/// The question the comparison answers: what varies and what is held fixed.
pub fn question(c: &Comparison, runs: &[RunDetail]) -> String {
    let compile = |key: &str| -> String {
        runs.iter()
            .find(|r| r.row.config_key == key || r.row.id.to_string() == key)
            .and_then(|r| {
                r.spec
                    .get("compile")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| "off".into())
    };
    let dims: Vec<(&str, Vec<String>)> = vec![
        (
            "framework",
            c.entries.iter().map(|e| e.framework.clone()).collect(),
        ),
        ("model", c.entries.iter().map(|e| e.model.clone()).collect()),
        (
            "precision",
            c.entries.iter().map(|e| e.precision.clone()).collect(),
        ),
        (
            "compile mode",
            c.entries.iter().map(|e| compile(&e.key)).collect(),
        ),
        (
            "devices",
            c.entries.iter().map(|e| e.devices.to_string()).collect(),
        ),
        (
            "batch per device",
            c.entries.iter().map(|e| e.batch_size.to_string()).collect(),
        ),
        ("data", c.entries.iter().map(|e| e.data.clone()).collect()),
    ];
    let mut varied = Vec::new();
    let mut fixed = Vec::new();
    for (name, mut values) in dims {
        let mut seen = Vec::new();
        values.retain(|v| {
            let new = !seen.contains(v);
            seen.push(v.clone());
            new
        });
        if values.len() > 1 {
            varied.push(format!("{name} ({})", values.join(", ")));
        } else if let Some(v) = values.first() {
            fixed.push(format!("{name} {v}"));
        }
    }
    let varied = if varied.is_empty() {
        "repeats of one configuration".to_string()
    } else {
        varied.join("; ")
    };
    format!(
        "Which configuration trains fastest, in the least memory, for the least money, and reaches the target accuracy first? Compared: {varied}. Held fixed: {}.",
        if fixed.is_empty() { "nothing".into() } else { fixed.join(", ") }
    )
}

fn str_at<'a>(v: &'a Option<serde_json::Value>, path: &[&str]) -> Option<&'a serde_json::Value> {
    let mut cur = v.as_ref()?;
    for p in path {
        cur = cur.get(p)?;
    }
    Some(cur)
}

fn text_of(v: Option<&serde_json::Value>) -> String {
    match v {
        None | Some(serde_json::Value::Null) => "not recorded".into(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Writes the report; returns the PDF's bytes.
pub fn report(input: &ReportInput<'_>) -> Result<Vec<u8>, ReportError> {
    let c = input.comparison;
    let mut l = Layout::new()?;
    l.heading(&format!("TrainBench report: {}", input.title), 17.0);
    l.paragraph(
        &format!(
            "Generated {} by TrainBench Studio {} from {} run(s) in {} entr{}.",
            utc_text(input.generated_unix_ms),
            input.studio_version,
            input.runs.len(),
            c.entries.len(),
            if c.entries.len() == 1 { "y" } else { "ies" }
        ),
        9.0,
        true,
    );
    l.heading("The question", 12.0);
    l.paragraph(&question(c, input.runs), 9.5, false);
    for s in input.extra {
        l.heading(&s.heading, 12.0);
        if !s.text.is_empty() {
            l.paragraph(&s.text, 9.0, false);
        }
        if !s.rows.is_empty() {
            let headers: Vec<&str> = s.headers.iter().map(String::as_str).collect();
            l.table(&headers, &s.widths, &s.rows, 7.0);
        }
    }

    l.heading("Configurations", 12.0);
    let base = c.baseline;
    let rows: Vec<Vec<String>> = c
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            vec![
                letter(i),
                format!("{}{}", e.label, if i == base { " (baseline)" } else { "" }),
                e.run_ids
                    .iter()
                    .map(|r| format!("#{r}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                format!("{} of {}", e.runs_completed, e.run_ids.len()),
                e.param_count
                    .map_or("not measured".into(), |p| p.to_string()),
            ]
        })
        .collect();
    l.table(
        &["", "Configuration", "Runs", "Completed", "Parameters"],
        &[22.0, 260.0, 80.0, 60.0, 70.0],
        &rows,
        8.0,
    );

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
                (Some(m), Some(r)) => format!("{:.1} % better than {}", m * 100.0, letter(r)),
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
            "Margin over runner-up",
            "Confidence",
        ],
        &[95.0, 150.0, 95.0, 80.0, 90.0],
        &rows,
        8.0,
    );

    l.heading("Summary with deltas against the baseline", 12.0);
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
        ],
        &[22.0, 105.0, 42.0, 65.0, 42.0, 80.0, 42.0, 70.0, 42.0],
        &rows,
        7.5,
    );
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

    l.heading("Warnings", 12.0);
    if c.warnings.is_empty() {
        l.paragraph("None: the runs train the same model on the same data with the same global batch, and all completed.", 9.0, false);
    }
    for w in &c.warnings {
        l.paragraph(&format!("• {w}"), 9.0, false);
    }
    for r in input
        .runs
        .iter()
        .filter(|r| r.row.status != RunStatus::Completed)
    {
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

    l.new_page();
    l.heading("Charts", 12.0);
    let data = ChartData {
        comparison: c,
        runs: input.runs,
        hidden: input.hidden_series,
    };
    for kind in input.charts {
        let svg = charts::svg_sized(&data, *kind, 720)?;
        l.svg(&svg)?;
    }

    l.heading("Runs", 12.0);
    let rows: Vec<Vec<String>> = input
        .runs
        .iter()
        .map(|r| {
            let entry = c
                .entries
                .iter()
                .position(|e| e.run_ids.contains(&r.row.id))
                .map_or("—".into(), letter);
            let s = r.row.summary.as_ref();
            vec![
                format!("#{}", r.row.id),
                entry,
                r.row.status.as_str().to_string(),
                format!(
                    "{} {}",
                    r.row.framework,
                    text_of(str_at(&r.hello, &["framework_version"]))
                ),
                text_of(str_at(&r.hello, &["execution"])).replace("not recorded", "—"),
                text_of(str_at(&r.hello, &["precision_in_effect"])),
                format!("{} × {}", r.row.devices, r.row.batch_size),
                r.row.data.clone(),
                s.map_or("—".into(), |s| {
                    format!("{} / {}", s.windows_warmup, s.windows_total)
                }),
                match (s.and_then(|s| s.time_to_first_step_s), r.compile_s) {
                    (Some(f), Some(cs)) => format!("{f:.2} (compile {cs:.2})"),
                    (Some(f), None) => format!("{f:.2}"),
                    _ => "not measured".into(),
                },
            ]
        })
        .collect();
    l.table(
        &[
            "Run",
            "Entry",
            "Status",
            "Framework",
            "Execution",
            "Precision in effect",
            "Devices × batch",
            "Data",
            "Warm-up / windows",
            "First step, s",
        ],
        &[30.0, 30.0, 50.0, 60.0, 55.0, 70.0, 45.0, 45.0, 45.0, 55.0],
        &rows,
        7.0,
    );

    l.heading("Energy and utilisation", 12.0);
    l.paragraph(
        "MFU: FLOPs per sample × steady throughput ÷ (the detected device's dense peak at the precision in effect × devices). \
         Energy: NVML's total-energy counter over the steady windows ÷ the samples trained in them. \
         Power and utilisation: NVML's 10 Hz samples over the same span. What could not be measured says why.",
        9.0,
        false,
    );
    let rows: Vec<Vec<String>> = input
        .runs
        .iter()
        .map(|r| {
            let s = r.row.summary.as_ref();
            let g = s.and_then(|s| s.gpu.as_ref());
            vec![
                format!("#{}", r.row.id),
                match s.and_then(|s| s.mfu) {
                    Some(m) => format!(
                        "{:.1} % of the {}",
                        m * 100.0,
                        s.map_or("", |s| s.mfu_note.as_str())
                    ),
                    None => s.map_or("not measured".into(), |s| s.mfu_note.clone()),
                },
                match s.and_then(|s| s.energy_j_per_sample) {
                    Some(j) => format!("{j:.4} J"),
                    None => s.map_or("not measured".into(), |s| {
                        if s.energy_note.is_empty() {
                            "not measured".into()
                        } else {
                            s.energy_note.clone()
                        }
                    }),
                },
                g.and_then(|g| g.mean_power_w)
                    .map_or("not measured".into(), |p| format!("{p:.0} W")),
                g.and_then(|g| g.mean_util_percent)
                    .map_or("not measured".into(), |u| format!("{u:.0} %")),
                s.map_or("—".into(), |s| {
                    if s.warnings.is_empty() {
                        "none".into()
                    } else {
                        s.warnings
                            .iter()
                            .map(|w| w.code.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                }),
            ]
        })
        .collect();
    l.table(
        &[
            "Run",
            "MFU",
            "Energy per sample",
            "GPU power",
            "GPU util.",
            "Run warnings",
        ],
        &[30.0, 135.0, 140.0, 45.0, 40.0, 110.0],
        &rows,
        7.0,
    );

    l.heading("Provenance", 12.0);
    let rows: Vec<Vec<String>> = input
        .runs
        .iter()
        .map(|r| {
            let p = &r.provenance;
            let gpus = str_at(p, &["gpus"])
                .and_then(|g| g.as_array())
                .map(|g| {
                    g.iter()
                        .map(|x| text_of(x.get("name")))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| format!("none ({})", text_of(str_at(p, &["gpu_probe"]))));
            let libraries = str_at(&r.hello, &["libraries"])
                .and_then(|l| l.as_array())
                .map(|l| {
                    l.iter()
                        .filter_map(|x| {
                            Some(format!("{} {}", x.get(0)?.as_str()?, x.get(1)?.as_str()?))
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            vec![
                format!("#{}", r.row.id),
                match &r.row.origin {
                    Some(o) => format!("{} (imported, run #{} there)", o.hostname, o.source_run_id),
                    None => text_of(str_at(p, &["hostname"])),
                },
                format!(
                    "{} ({} cores)",
                    text_of(str_at(p, &["cpu_model"])),
                    text_of(str_at(p, &["cpu_cores"]))
                ),
                gpus,
                format!(
                    "{} / {}",
                    text_of(str_at(p, &["nvidia_driver"])),
                    text_of(str_at(p, &["cuda_driver"]))
                ),
                format!(
                    "{}; {}",
                    text_of(str_at(p, &["os"])),
                    text_of(str_at(p, &["kernel"]))
                ),
                format!(
                    "{} {}{}{}",
                    r.row.framework,
                    text_of(str_at(&r.hello, &["framework_version"])),
                    if libraries.is_empty() { "" } else { "; " },
                    libraries
                ),
                format!(
                    "{} ({})",
                    text_of(str_at(p, &["studio_version"])),
                    text_of(str_at(p, &["studio_git_revision"]))
                ),
            ]
        })
        .collect();
    l.table(
        &[
            "Run",
            "Host",
            "CPU",
            "GPUs",
            "Driver / CUDA",
            "OS; kernel",
            "Framework and libraries",
            "Studio",
        ],
        &[28.0, 55.0, 80.0, 55.0, 50.0, 80.0, 90.0, 55.0],
        &rows,
        6.5,
    );

    l.heading("Method", 12.0);
    for p in [
        "Every configuration ran in a fresh worker process; the worker reports timing windows of several optimizer steps each, timed after a device synchronisation, so per-step synchronisation does not perturb the pipeline.".to_string(),
        format!("Warm-up: {WARMUP_RULE}."),
        "Throughput of a run is the median of its steady windows' samples per second, with a distribution-free 95 % confidence interval from order statistics (needs at least 6 steady windows; otherwise none is shown). Across repeats of one configuration the figure is the mean of the repeats' medians with a Student-t 95 % interval. A winner is called clear only when its interval does not overlap the runner-up's.".to_string(),
        "Time to first step runs from the worker process's start to the end of the first optimizer step (imports, set-up, graph capture and compilation included); it is never part of throughput.".to_string(),
        "Peak memory is the framework allocator's peak on an accelerator, else NVML's per-process view, else the worker's peak resident set (VmHWM), else the runner's 10 Hz RSS samples; the source is named in each run's summary.".to_string(),
        "Time to accuracy is wall time from the start of training (after model and data set-up; compilation and evaluations included) to the first evaluation at or above the target. \"Not reached\" is a result, not a zero.".to_string(),
        format!("Cost per epoch = epoch time × price per device-hour × devices. The epoch time is measured when a full epoch of a real data set ran; otherwise it is projected from the steady throughput for {} and marked \"projected\" (its interval is the throughput's, inverted). Price rows used:", IMAGENET_1K_TRAIN.0),
    ] {
        l.paragraph(&p, 8.5, false);
    }
    if input.prices.is_empty() {
        l.paragraph(
            "No price row was chosen for these runs: cost is not measured.",
            8.5,
            false,
        );
    } else {
        let rows: Vec<Vec<String>> = input
            .prices
            .iter()
            .map(|p| {
                vec![
                    p.offering.clone(),
                    p.devices.to_string(),
                    p.device.clone(),
                    format!("{:.2}", p.usd_per_hour),
                    format!("{:.2}", p.usd_per_device_hour),
                    p.as_of.clone(),
                    p.source.clone(),
                ]
            })
            .collect();
        l.table(
            &[
                "Offering",
                "Devices",
                "Device",
                "USD/hour",
                "USD/device-hour",
                "As of",
                "Source",
            ],
            &[100.0, 40.0, 70.0, 45.0, 55.0, 55.0, 130.0],
            &rows,
            7.0,
        );
    }
    l.paragraph(
        "A number the studio could not measure is shown as \"not measured\", never estimated. Full definitions: docs/metrics.md in the TrainBench repository.",
        8.5,
        true,
    );

    render(l, input)
}

fn colour(shade: u8) -> rgb::Color {
    rgb::Color::new(shade, shade, shade)
}

fn fill(shade: u8) -> Fill {
    Fill {
        paint: colour(shade).into(),
        ..Fill::default()
    }
}

fn render(l: Layout, input: &ReportInput<'_>) -> Result<Vec<u8>, ReportError> {
    let regular = Font::new(fonts::REGULAR.to_vec().into(), 0)
        .ok_or_else(|| ReportError::Font("DejaVu Sans does not load".into()))?;
    let bold = Font::new(fonts::BOLD.to_vec().into(), 0)
        .ok_or_else(|| ReportError::Font("DejaVu Sans Bold does not load".into()))?;
    let mut doc = Document::new();
    doc.set_metadata(
        Metadata::new()
            .title(format!("TrainBench report: {}", input.title))
            .creator(format!("TrainBench Studio {}", input.studio_version)),
    );
    let pages = l.pages.len();
    let settings = PageSettings::from_wh(PAGE_W, PAGE_H)
        .ok_or_else(|| ReportError::Pdf("page size".into()))?;
    for (n, ops) in l.pages.into_iter().enumerate() {
        let mut page = doc.start_page_with(settings.clone());
        let mut surface = page.surface();
        for op in ops {
            match op {
                Op::Text {
                    x,
                    y,
                    size,
                    bold: is_bold,
                    grey,
                    text,
                } => {
                    surface.set_stroke(None);
                    surface.set_fill(Some(fill(if grey { 90 } else { 0 })));
                    let font = if is_bold {
                        bold.clone()
                    } else {
                        regular.clone()
                    };
                    surface.draw_text(
                        Point::from_xy(x, y),
                        font,
                        size,
                        &text,
                        false,
                        TextDirection::Auto,
                    );
                }
                Op::Rect { x, y, w, h, shade } => {
                    let Some(rect) = Rect::from_xywh(x, y, w, h) else {
                        continue;
                    };
                    let mut pb = PathBuilder::new();
                    pb.push_rect(rect);
                    if let Some(path) = pb.finish() {
                        surface.set_stroke(None);
                        surface.set_fill(Some(fill(shade)));
                        surface.draw_path(&path);
                    }
                }
                Op::Line { x1, y1, x2, y2 } => {
                    let mut pb = PathBuilder::new();
                    pb.move_to(x1, y1);
                    pb.line_to(x2, y2);
                    if let Some(path) = pb.finish() {
                        surface.set_fill(None);
                        surface.set_stroke(Some(Stroke {
                            paint: colour(200).into(),
                            width: 0.5,
                            ..Stroke::default()
                        }));
                        surface.draw_path(&path);
                    }
                }
                Op::Svg { tree, x, y, w, h } => {
                    let size =
                        Size::from_wh(w, h).ok_or_else(|| ReportError::Pdf("chart size".into()))?;
                    surface.push_transform(&Transform::from_translate(x, y));
                    surface
                        .draw_svg(&tree, size, SvgSettings::default())
                        .ok_or_else(|| ReportError::Pdf("a chart could not be drawn".into()))?;
                    surface.pop();
                }
            }
        }
        surface.set_stroke(None);
        surface.set_fill(Some(fill(110)));
        surface.draw_text(
            Point::from_xy(MARGIN, PAGE_H - MARGIN + 16.0),
            regular.clone(),
            7.5,
            &format!(
                "TrainBench report: {} — page {} of {pages}",
                input.title,
                n + 1
            ),
            false,
            TextDirection::Auto,
        );
        surface.finish();
        page.finish();
    }
    doc.finish().map_err(|e| ReportError::Pdf(format!("{e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_letters() {
        assert_eq!(utc_text(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_text(1_795_348_257_707), "2026-11-22 11:50 UTC");
        assert_eq!(utc_text(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(letter(0), "A");
        assert_eq!(letter(25), "Z");
        assert_eq!(letter(26), "AA");
        assert_eq!(letter(27), "AB");
    }
}

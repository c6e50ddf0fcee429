//! The HTML report's charts, drawn as inline SVG from the data the PDF's
//! charts use ([`crate::charts`]): the same titles, axes with units, colours
//! by entry and 95 % intervals. Every bar, point and segment carries its
//! figures in `data-tip` (the page's script shows them on hover; assistive
//! technology reads `aria-label`), and each series is a `<g data-series=N>`
//! the legend's check boxes hide and show.

use std::fmt::Write as _;

use trainbench_core::compare::{Confidence, Metric};
use trainbench_core::session::ChartKind;

use super::esc;
use crate::charts::{colour_hex, curves, part_colour, titles, ChartData};
use crate::document::letter;

/// The drawing's width in SVG user units (it scales to the page).
const W: f64 = 760.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = W - 24.0;

/// One chart as a `<figure>`: its title, the drawing and its legend.
pub(super) fn figure(data: &ChartData<'_>, kind: ChartKind, n: usize) -> String {
    let (title, x_desc, y_desc) = titles(kind);
    let (svg, legend) = match kind.metric() {
        Some(m) => bars(data, m, x_desc),
        None if kind == ChartKind::Scaling => scaling(data),
        None if kind == ChartKind::StepBreakdown => breakdown(data, x_desc),
        None => time(data, kind, x_desc, y_desc),
    };
    format!(
        "<figure class=\"chart\" id=\"chart-{n}\" data-kind=\"{}\">\n<figcaption>{}</figcaption>\n{svg}\n{legend}</figure>\n",
        kind.key(),
        esc(title)
    )
}

/// Round axis ticks covering `lo..hi`.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|k| k * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 && out.len() < 12 {
        out.push(t);
        t += step;
    }
    out
}

/// A tick's label, with as many decimals as the ticks' spacing needs.
fn tick_text(v: f64, ticks: &[f64]) -> String {
    let step = match ticks {
        [a, b, ..] => b - a,
        _ => 1.0,
    };
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    format!("{v:.decimals$}")
}

/// The `<svg>` opening tag of a drawing `h` high.
fn svg_open(h: f64, label: &str) -> String {
    format!(
        "<svg viewBox=\"0 0 {W} {h:.0}\" width=\"100%\" role=\"img\" aria-label=\"{}\">\n",
        esc(label)
    )
}

/// A shape's figures, on hover and for assistive technology.
fn tip(text: &str) -> String {
    let t = esc(text);
    format!("data-tip=\"{t}\" aria-label=\"{t}\" tabindex=\"0\"")
}

/// The horizontal axis at `y` for `lo..hi` drawn between LEFT and RIGHT.
fn x_axis(out: &mut String, lo: f64, hi: f64, y: f64, title: &str) {
    let ts = ticks(lo, hi);
    let sx = |v: f64| LEFT + (v - lo) / (hi - lo) * (RIGHT - LEFT);
    let _ = writeln!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>"
    );
    for t in &ts {
        let x = sx(*t);
        let _ = writeln!(
            out,
            "<line class=\"tick\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y:.1}\" y2=\"{:.1}\"/><text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            y + 5.0,
            y + 18.0,
            tick_text(*t, &ts)
        );
    }
    let _ = writeln!(
        out,
        "<text class=\"axis-title\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        (LEFT + RIGHT) / 2.0,
        y + 36.0,
        esc(title)
    );
}

/// The vertical axis for `lo..hi` drawn between `top` and `bottom`.
fn y_axis(out: &mut String, lo: f64, hi: f64, top: f64, bottom: f64, title: &str) {
    let ts = ticks(lo, hi);
    let sy = |v: f64| bottom - (v - lo) / (hi - lo) * (bottom - top);
    let _ = writeln!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{top:.1}\" y2=\"{bottom:.1}\"/>"
    );
    for t in &ts {
        let y = sy(*t);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            y + 4.0,
            tick_text(*t, &ts)
        );
    }
    let _ = writeln!(
        out,
        "<text class=\"axis-title\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        (top + bottom) / 2.0,
        esc(title)
    );
}

/// The legend: one check box per series (hides and shows it), its colour
/// and its name.
fn legend(items: &[(usize, String, String)]) -> String {
    let mut out = String::from("<ul class=\"legend\">\n");
    for (i, colour, name) in items {
        let _ = writeln!(
            out,
            "<li><label><input type=\"checkbox\" checked data-toggle=\"{i}\"><span class=\"swatch\" style=\"background:{colour}\"></span>{}</label></li>",
            esc(name)
        );
    }
    out.push_str("</ul>\n");
    out
}

/// What a chart with nothing measured says instead.
fn nothing(what: &str) -> (String, String) {
    (
        format!("<p class=\"note\">{}</p>", esc(what)),
        String::new(),
    )
}

/// One bar per entry with its 95 % interval; the winner starred where the
/// comparison decided it with separated intervals; the baseline dashed.
fn bars(data: &ChartData<'_>, m: Metric, x_desc: &str) -> (String, String) {
    let c = data.comparison;
    let entries: Vec<_> = data.visible().collect();
    let high = |v: &trainbench_core::compare::MetricValue| {
        v.ci95
            .map_or(v.value, |ci| Some(ci.high.max(v.value.unwrap_or(0.0))))
    };
    let max = entries
        .iter()
        .filter_map(|(_, e)| high(&e.metrics[&m]))
        .fold(0.0_f64, f64::max);
    if max <= 0.0 {
        return nothing("Nothing measured for this chart.");
    }
    let x_max = max * 1.08;
    let sx = |v: f64| LEFT + v / x_max * (RIGHT - LEFT);
    let winner = c
        .decisions
        .iter()
        .find(|d| d.metric == m && d.confidence == Some(Confidence::Clear))
        .and_then(|d| d.winner);
    let row_h = 46.0;
    let top = 8.0;
    let bottom = top + row_h * entries.len() as f64;
    let mut out = svg_open(bottom + 44.0, x_desc);
    let mut items = Vec::new();
    for (row, (i, e)) in entries.iter().enumerate() {
        let y = top + row as f64 * row_h;
        let v = &e.metrics[&m];
        let colour = colour_hex(*i);
        let mut name = format!("{}: {}", letter(*i), e.label);
        if *i == c.baseline {
            name.push_str(" (baseline)");
        }
        let star = if winner == Some(*i) {
            " ★ winner"
        } else {
            ""
        };
        let figures = figures_of(m, v, *i != c.baseline);
        let _ = writeln!(
            out,
            "<g class=\"series\" data-series=\"{i}\"><text class=\"label\" x=\"{LEFT}\" y=\"{:.1}\">{}{star} — {}</text>",
            y + 14.0,
            esc(&name),
            esc(&figures)
        );
        if let Some(x) = v.value {
            let projected = v.note.as_deref().is_some_and(|n| n.contains("projected"));
            let _ = writeln!(
                out,
                "<rect class=\"bar{}\" x=\"{LEFT}\" y=\"{:.1}\" width=\"{:.1}\" height=\"16\" fill=\"{colour}\" {}/>",
                if projected { " projected" } else { "" },
                y + 20.0,
                (sx(x) - LEFT).max(1.0),
                tip(&format!("{name}: {figures}"))
            );
            if let Some(ci) = v.ci95 {
                let mid = y + 28.0;
                let _ = writeln!(
                    out,
                    "<path class=\"whisker\" d=\"M{:.1} {mid:.1}H{:.1}M{:.1} {:.1}V{:.1}M{:.1} {:.1}V{:.1}\"/>",
                    sx(ci.low),
                    sx(ci.high),
                    sx(ci.low),
                    mid - 6.0,
                    mid + 6.0,
                    sx(ci.high),
                    mid - 6.0,
                    mid + 6.0
                );
            }
        }
        out.push_str("</g>\n");
        items.push((*i, colour, name));
    }
    if let Some(b) = entries
        .iter()
        .find(|(i, _)| *i == c.baseline)
        .and_then(|(_, e)| e.metrics[&m].value)
    {
        let _ = writeln!(
            out,
            "<line class=\"baseline\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top}\" y2=\"{bottom:.1}\" {}/>",
            tip(&format!("baseline ({}): {}", letter(c.baseline), value_text(m, b))),
            x = sx(b)
        );
    }
    let better = if m.higher_is_better() {
        "higher"
    } else {
        "lower"
    };
    x_axis(
        &mut out,
        0.0,
        x_max,
        bottom + 4.0,
        &format!("{x_desc} ({better} is better)"),
    );
    out.push_str("</svg>");
    (out, legend(&items))
}

/// A value with its unit.
fn value_text(m: Metric, v: f64) -> String {
    match m {
        Metric::Throughput => format!("{v:.1} samples/s"),
        Metric::PeakMemory => format!("{v:.0} MiB"),
        Metric::CostPerEpoch => format!("${v:.2}"),
        Metric::TimeToAccuracy | Metric::TimeToLoss => format!("{v:.1} s"),
    }
}

/// A bar's figures in words: value, interval, note, delta on the baseline.
fn figures_of(m: Metric, v: &trainbench_core::compare::MetricValue, delta: bool) -> String {
    let Some(x) = v.value else {
        return v.note.clone().unwrap_or_else(|| "not measured".into());
    };
    let mut t = value_text(m, x);
    if let Some(ci) = v.ci95 {
        let _ = write!(
            t,
            ", 95 % interval {} to {}",
            value_text(m, ci.low),
            value_text(m, ci.high)
        );
    }
    if let Some(note) = &v.note {
        let _ = write!(t, " ({note})");
    }
    if let Some(d) = v.delta_vs_baseline.filter(|_| delta) {
        let _ = write!(t, ", {:+.1} % on the baseline", d * 100.0);
    }
    t
}

/// Curves over the time since training started: one series per run, a
/// point per timing window or evaluation.
fn time(data: &ChartData<'_>, kind: ChartKind, x_desc: &str, y_desc: &str) -> (String, String) {
    let cs = curves(data, kind);
    let points = || cs.iter().flat_map(|c| c.points.iter());
    let Some(x_hi) = points().map(|p| p.0).reduce(f64::max) else {
        return nothing("Nothing measured for this chart.");
    };
    let y_max = points().map(|p| p.1).fold(f64::MIN, f64::max);
    let y_min = points().map(|p| p.1).fold(f64::MAX, f64::min);
    // Loss is read from its lowest value; throughput and accuracy from zero.
    let lo = if kind == ChartKind::LossOverTime {
        y_min - (y_max - y_min) * 0.05
    } else {
        0.0
    };
    let hi = (y_max + (y_max - lo) * 0.05).max(lo + 1e-9);
    let x_hi = (x_hi * 1.02).max(1e-9);
    let (top, bottom) = (10.0, 330.0);
    let sx = |v: f64| LEFT + v / x_hi * (RIGHT - LEFT);
    let sy = |v: f64| bottom - (v - lo) / (hi - lo) * (bottom - top);
    let mut out = svg_open(bottom + 44.0, &format!("{y_desc} over {x_desc}"));
    y_axis(&mut out, lo, hi, top, bottom, y_desc);
    x_axis(&mut out, 0.0, x_hi, bottom, x_desc);
    let mut items: Vec<(usize, String, String)> = Vec::new();
    for c in &cs {
        let e = &data.comparison.entries[c.entry];
        let colour = colour_hex(c.entry);
        let name = format!("{}: {}", letter(c.entry), e.label);
        let line: Vec<String> = c
            .points
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", sx(*x), sy(*y)))
            .collect();
        let _ = writeln!(
            out,
            "<g class=\"series\" data-series=\"{}\"><polyline class=\"curve\" stroke=\"{colour}\" points=\"{}\"/>",
            c.entry,
            line.join(" ")
        );
        for ((x, y), step) in c.points.iter().zip(&c.steps) {
            let _ =
                writeln!(
                out,
                "<circle class=\"point\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{colour}\" {}/>",
                sx(*x),
                sy(*y),
                tip(&format!("{name}, run {}: {y:.4} {y_desc} at {x:.1} s (step {step})", c.run_id))
            );
        }
        out.push_str("</g>\n");
        if !items.iter().any(|(i, _, _)| *i == c.entry) {
            items.push((c.entry, colour, name));
        }
    }
    out.push_str("</svg>");
    (out, legend(&items))
}

/// Throughput over device count per series, against linear scaling from
/// its fewest devices (dashed).
fn scaling(data: &ChartData<'_>) -> (String, String) {
    let c = data.comparison;
    let thr = |i: usize| c.entries[i].metrics[&Metric::Throughput].value;
    let series: Vec<(usize, Vec<(u32, f64)>)> = c
        .scaling
        .iter()
        .enumerate()
        .map(|(k, s)| {
            (
                k,
                s.points
                    .iter()
                    .filter_map(|(d, i)| Some((*d, thr(*i)?)))
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, p)| !p.is_empty())
        .collect();
    let Some(d_max) = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)).max() else {
        return nothing("No device-count sweep among these runs.");
    };
    let linear = |p: &[(u32, f64)], d: u32| p[0].1 * f64::from(d) / f64::from(p[0].0.max(1));
    let y_hi = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1.max(linear(p, q.0))))
        .fold(0.0_f64, f64::max)
        * 1.08;
    let x_hi = f64::from(d_max) + 0.5;
    let (top, bottom) = (10.0, 330.0);
    let sx = |d: u32| LEFT + f64::from(d) / x_hi * (RIGHT - LEFT);
    let sy = |v: f64| bottom - v / y_hi * (bottom - top);
    let mut out = svg_open(bottom + 44.0, "samples per second over devices");
    y_axis(&mut out, 0.0, y_hi, top, bottom, "samples per second");
    x_axis(&mut out, 0.0, x_hi, bottom, "devices");
    let mut items = Vec::new();
    for (k, p) in &series {
        let colour = colour_hex(*k);
        let pts: Vec<String> = p
            .iter()
            .map(|(d, v)| format!("{:.1},{:.1}", sx(*d), sy(*v)))
            .collect();
        let lin: Vec<String> = p
            .iter()
            .map(|(d, _)| format!("{:.1},{:.1}", sx(*d), sy(linear(p, *d))))
            .collect();
        let _ = writeln!(
            out,
            "<g class=\"series\" data-series=\"{k}\"><polyline class=\"curve linear\" stroke=\"{colour}\" points=\"{}\"/><polyline class=\"curve\" stroke=\"{colour}\" points=\"{}\"/>",
            lin.join(" "),
            pts.join(" ")
        );
        for (d, v) in p {
            let eff = v / linear(p, *d) * 100.0;
            let _ = writeln!(
                out,
                "<circle class=\"point\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{colour}\" {}/>",
                sx(*d),
                sy(*v),
                tip(&format!(
                    "{}: {d} devices, {v:.1} samples/s, {eff:.0} % of linear",
                    c.scaling[*k].label
                ))
            );
        }
        out.push_str("</g>\n");
        items.push((*k, colour, c.scaling[*k].label.clone()));
    }
    out.push_str("</svg>");
    (out, legend(&items))
}

/// One stacked bar per entry, a segment per part of the step (per sample).
fn breakdown(data: &ChartData<'_>, x_desc: &str) -> (String, String) {
    let entries: Vec<_> = data
        .visible()
        .filter(|(_, e)| e.breakdown.is_some())
        .collect();
    let total = |b: &trainbench_core::breakdown::StepBreakdown| {
        b.parts.iter().map(|p| p.per_sample_s.max(0.0)).sum::<f64>() * 1e3
    };
    let max = entries
        .iter()
        .filter_map(|(_, e)| e.breakdown.as_ref().map(total))
        .fold(0.0_f64, f64::max);
    if max <= 0.0 {
        return nothing("No step breakdown measured for these runs.");
    }
    let x_max = max * 1.08;
    let sx = |v: f64| LEFT + v / x_max * (RIGHT - LEFT);
    let row_h = 46.0;
    let top = 8.0;
    let bottom = top + row_h * entries.len() as f64;
    let mut out = svg_open(bottom + 44.0, x_desc);
    let mut items = Vec::new();
    for (row, (i, e)) in entries.iter().enumerate() {
        let Some(b) = &e.breakdown else { continue };
        let y = top + row as f64 * row_h;
        let name = format!("{}: {}", letter(*i), e.label);
        let sum = total(b);
        let _ = writeln!(
            out,
            "<g class=\"series\" data-series=\"{i}\"><text class=\"label\" x=\"{LEFT}\" y=\"{:.1}\">{} — {sum:.3} ms per sample</text>",
            y + 14.0,
            esc(&name)
        );
        let mut parts: Vec<_> = b.parts.iter().collect();
        parts.sort_by_key(|p| p.part);
        let mut x = 0.0;
        for p in parts {
            let w = p.per_sample_s.max(0.0) * 1e3;
            let rgb = part_colour(p.part);
            let _ = writeln!(
                out,
                "<rect class=\"segment\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"16\" fill=\"#{:02x}{:02x}{:02x}\" {}/>",
                sx(x),
                y + 20.0,
                (sx(x + w) - sx(x)).max(0.5),
                rgb.0,
                rgb.1,
                rgb.2,
                tip(&format!("{name}: {} {w:.3} ms per sample ({:.0} % of the step)", p.part.as_str(), w / sum.max(1e-12) * 100.0))
            );
            x += w;
        }
        out.push_str("</g>\n");
        items.push((*i, colour_hex(*i), name));
    }
    x_axis(&mut out, 0.0, x_max, bottom + 4.0, x_desc);
    out.push_str("</svg>");
    (out, legend(&items))
}

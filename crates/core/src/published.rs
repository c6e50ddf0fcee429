//! Published training results (`data/published_results.csv`): one row per
//! result as its source states it (address, date, hardware, framework,
//! model, precision, batch, metric), with how any figure the source does not
//! state was derived. Each row's implied MFU — the throughput per device
//! times the work per sample or token, over the device's dense peak — is
//! computed by every FLOP formula the row names, because the formula moves
//! the answer (GPT-2 124M: 6N against 6N + 12·L·T·d), and judged against a
//! plausible band, so that a figure too low or too high for its hardware is
//! flagged with the reason wherever it is shown.

use serde::Serialize;

use crate::models::{lookup, ModelOptions};
use crate::reference::{gpu_peak_for, split_csv_line};
use crate::spec::Precision;

const PUBLISHED_CSV: &str = include_str!("../../../data/published_results.csv");

/// Implied MFU under this is implausibly low for training on that hardware.
pub const PLAUSIBLE_LOW: f64 = 0.05;
/// Implied MFU over this is implausibly high: published dense training
/// reaches about 55–60 % at best.
pub const PLAUSIBLE_HIGH: f64 = 0.75;

/// What a published figure counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Samples,
    Tokens,
}

/// One published result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Published {
    pub id: String,
    /// When the source published or measured it, as it says.
    pub date: String,
    /// The source's address.
    pub source: String,
    /// The hardware in the source's words.
    pub hardware: String,
    /// The device as the peak table names it ("H100 SXM").
    pub gpu: String,
    pub devices: u32,
    /// Framework and version, as stated.
    pub framework: String,
    pub model: String,
    /// The studio's catalogue model it matches, if any ("" none): what a
    /// run is placed beside.
    pub studio_model: String,
    /// fp32, tf32, amp-bf16, amp-fp16 or fp8 (fp8 is judged against the
    /// bf16 peak, which the note says).
    pub precision: String,
    pub global_batch: Option<u64>,
    pub unit: Unit,
    /// Per second on one device (derived from a total when the source gives one).
    pub per_device: f64,
    /// The figure as the source states it, with its unit.
    pub stated: String,
    /// FLOP formulas, `;`-separated: `catalog:MODEL[@SIZE]`, `6N:N`,
    /// `6N+6LTd:N,L,T,d` (causal attention counted once, as llm.c does) or
    /// `6N+12LTd:N,L,T,d` (PaLM's), per token.
    pub flops: String,
    /// The MFU the source itself states, if it states one.
    pub stated_mfu: Option<f64>,
    /// How any figure not stated by the source was derived ("" if none).
    pub derivation: String,
    /// The source's words holding the number.
    pub quote: String,
}

/// A row's implied MFU under one FLOP formula.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Implied {
    /// The formula in words ("6N", "6N + 12·L·T·d", "the studio's FLOPs of resnet50").
    pub formula: String,
    pub flops_per_unit: f64,
    /// `None` without a peak for the device and precision.
    pub mfu: Option<f64>,
}

/// Whether a figure is plausible for its hardware.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Plausible,
    TooLow,
    TooHigh,
    /// Over 100 % of the peak: impossible.
    Impossible,
    /// No peak or no FLOP count to judge by.
    Unknown,
}

/// A verdict with its reason in words.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Plausibility {
    pub verdict: Verdict,
    pub reason: String,
}

/// The published rows shipped with the studio.
pub fn published() -> Vec<Published> {
    parse(PUBLISHED_CSV).unwrap_or_default()
}

/// Parses the table; an error names the line and what is wrong.
pub fn parse(csv: &str) -> Result<Vec<Published>, String> {
    let mut rows = Vec::new();
    for (n, line) in csv.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let f = split_csv_line(line);
        let [id, date, source, hardware, gpu, devices, framework, model, studio_model, precision, batch, unit, value, scope, flops, stated_mfu, derivation, quote] =
            <[String; 18]>::try_from(f)
                .map_err(|f| format!("line {}: {} fields, expected 18", n + 1, f.len()))?;
        let num = |what: &str, s: &str| {
            s.trim()
                .parse::<f64>()
                .map_err(|_| format!("line {}: {what} = {s} is not a number", n + 1))
        };
        let devices = num("devices", &devices)? as u32;
        let value = num("value", &value)?;
        let per_device = match scope.as_str() {
            "total" => value / f64::from(devices.max(1)),
            "per_device" => value,
            other => {
                return Err(format!(
                    "line {}: scope = {other}: expected total or per_device",
                    n + 1
                ))
            }
        };
        let unit_kind = match unit.as_str() {
            "samples/s" => Unit::Samples,
            "tokens/s" => Unit::Tokens,
            other => {
                return Err(format!(
                    "line {}: unit = {other}: expected samples/s or tokens/s",
                    n + 1
                ))
            }
        };
        rows.push(Published {
            id,
            date,
            source,
            hardware,
            gpu,
            devices,
            framework,
            model,
            studio_model,
            precision,
            global_batch: batch.trim().parse().ok(),
            unit: unit_kind,
            per_device,
            stated: format!(
                "{value} {unit}{}",
                if scope == "total" {
                    format!(" on {devices} devices")
                } else {
                    " per device".into()
                }
            ),
            flops,
            stated_mfu: stated_mfu.trim().parse().ok(),
            derivation,
            quote,
        });
    }
    Ok(rows)
}

/// FLOPs per sample (or per token, with `per_token`) of one formula, with
/// its name in words. A catalogue formula counts a whole sample (a sequence
/// for a text model): per token it is divided by the sequence's tokens.
pub fn formula_flops(formula: &str, per_token: bool) -> Option<(String, f64)> {
    let (kind, args) = formula.trim().split_once(':')?;
    let nums = || -> Option<Vec<f64>> { args.split(',').map(|a| a.trim().parse().ok()).collect() };
    match kind {
        "catalog" => {
            let (model, size) = match args.split_once('@') {
                Some((m, s)) => (m, Some(s.parse().ok()?)),
                None => (args, None),
            };
            let entry = lookup(model)?;
            let opts = if entry.default_config().family().is_image() {
                ModelOptions {
                    image_size: size,
                    ..ModelOptions::default()
                }
            } else {
                ModelOptions {
                    seq_len: size,
                    ..ModelOptions::default()
                }
            };
            let config = entry.config(&opts).ok()?;
            let tokens = if per_token {
                config.tokens_per_sample()? as f64
            } else {
                1.0
            };
            Some((
                format!("the studio's FLOPs of {args}"),
                config.flops_per_sample() / tokens,
            ))
        }
        "6N" => Some(("6N".into(), 6.0 * nums()?.first()?)),
        "6N+6LTd" => match nums()?.as_slice() {
            [n, l, t, d] => Some(("6N + 6·L·T·d".into(), 6.0 * n + 6.0 * l * t * d)),
            _ => None,
        },
        "6N+12LTd" => match nums()?.as_slice() {
            [n, l, t, d] => Some(("6N + 12·L·T·d".into(), 6.0 * n + 12.0 * l * t * d)),
            _ => None,
        },
        _ => None,
    }
}

fn peak_precision(p: &str) -> Option<Precision> {
    match p {
        "fp8" => Some(Precision::AmpBf16),
        other => Precision::parse(other).ok(),
    }
}

/// The row's implied MFU under each of its formulas.
pub fn implied(p: &Published) -> Vec<Implied> {
    let peak = gpu_peak_for(&p.gpu)
        .zip(peak_precision(&p.precision))
        .map(|(g, prec)| g.tflops(prec) * 1e12);
    p.flops
        .split(';')
        .filter_map(|f| formula_flops(f, p.unit == Unit::Tokens))
        .map(|(formula, flops)| Implied {
            formula,
            flops_per_unit: flops,
            mfu: peak.map(|pk| p.per_device * flops / pk),
        })
        .collect()
}

/// Judges a row: its stated MFU when the source states one over the peak,
/// else its implied MFU.
pub fn judge(p: &Published, implied: &[Implied]) -> Plausibility {
    let ours = plausibility(implied);
    match p.stated_mfu {
        Some(stated) if stated > 1.0 => Plausibility {
            verdict: Verdict::Impossible,
            reason: format!(
                "the source states {:.0} % MFU: over the peak, so its peak is wrong (against the {} dense peak: {})",
                100.0 * stated,
                p.gpu,
                ours.reason
            ),
        },
        _ => ours,
    }
}

/// Judges an implied MFU (the highest of the formulas: the most generous).
pub fn plausibility(implied: &[Implied]) -> Plausibility {
    let Some(mfu) = implied.iter().filter_map(|i| i.mfu).reduce(f64::max) else {
        return Plausibility {
            verdict: Verdict::Unknown,
            reason: "no peak for this device and precision, or no FLOP count".into(),
        };
    };
    let pct = 100.0 * mfu;
    let (verdict, reason) = if mfu > 1.0 {
        (Verdict::Impossible, format!("{pct:.0} % of the dense peak: no device computes faster than its peak (a wrong peak, a sparse peak, or the wrong hardware)"))
    } else if mfu > PLAUSIBLE_HIGH {
        (Verdict::TooHigh, format!("{pct:.0} % of the dense peak: beyond what published dense training reaches (about 60 % at best)"))
    } else if mfu < PLAUSIBLE_LOW {
        (Verdict::TooLow, format!("{pct:.1} % of the dense peak: far below what this hardware trains at (a data-loading limit, a per-node figure read as per-device, or other hardware)"))
    } else {
        (Verdict::Plausible, format!("{pct:.1} % of the dense peak"))
    };
    Plausibility { verdict, reason }
}

mod against;
mod placed;
pub use against::{against, percent, Against, RunFigures};
pub use placed::{far_smaller, smallest_published_params, why_not_placed, SMALLEST_SHARE};

#[cfg(test)]
mod tests;

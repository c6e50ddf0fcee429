//! A run placed beside the published record: each reference of the run's
//! model family, as "x % of <reference> (source, date)", normalised per
//! device and by FLOPs (the run's achieved FLOP/s against the reference's
//! under the studio's own FLOP count of the reference's model), with every
//! way the two differ said plainly.

use serde::Serialize;

use super::{formula_flops, published, Published, Unit};
use crate::models::lookup;
use crate::spec::Precision;

/// What placing a run needs of it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunFigures<'a> {
    pub model: &'a str,
    pub precision: Precision,
    /// Steady samples/s per device.
    pub per_device: f64,
    /// The studio's training FLOPs per sample of the run's configuration.
    pub flops_per_sample: f64,
    /// The GPU's name, `None` on a CPU.
    pub gpu: Option<&'a str>,
    pub global_batch: u64,
    /// Framework and version ("pytorch 2.13.0").
    pub software: &'a str,
}

/// One reference beside the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Against {
    pub reference: Published,
    /// The run's achieved FLOP/s per device as a share of the reference's.
    pub fraction: f64,
    /// Each way they differ, in words (empty: the same configuration).
    pub differs: Vec<String>,
    /// "0.4 % of llm.c GPT-2 124M on 8x H100 (address, date) …".
    pub text: String,
}

/// FLOPs the reference's figure represents per sample or token, by the
/// studio's count of its model (a catalogue formula), else its first formula.
fn reference_flops(r: &Published) -> Option<f64> {
    let per_token = r.unit == Unit::Tokens;
    let formulas: Vec<&str> = r.flops.split(';').collect();
    formulas
        .iter()
        .find(|f| f.trim().starts_with("catalog:"))
        .or(formulas.first())
        .and_then(|f| formula_flops(f, per_token))
        .map(|(_, flops)| flops)
}

/// The references of the run's model family, closest first (same model,
/// then same precision), each with the run's share and the differences.
pub fn against(run: &RunFigures<'_>) -> Vec<Against> {
    let Some(entry) = lookup(run.model) else {
        return Vec::new();
    };
    let family = entry.default_config().family();
    let mut out: Vec<(u8, Against)> = published()
        .into_iter()
        .filter_map(|r| {
            let theirs = lookup(&r.studio_model)?;
            (theirs.default_config().family() == family).then_some(r)
        })
        .filter_map(|r| {
            let flops = reference_flops(&r)?;
            let achieved = r.per_device * flops;
            let fraction = run.per_device * run.flops_per_sample / achieved;
            let differs = differences(run, &r);
            let hardware = differs.iter().any(|d| d.starts_with("hardware"));
            let rank = u8::from(r.studio_model != run.model) * 4
                + u8::from(r.precision != run.precision.as_str()) * 2
                + u8::from(hardware);
            let text = format!(
                "{} of {} {} on {} ({}, {}) per device, by achieved FLOP/s{}",
                percent(fraction),
                r.framework,
                r.model,
                r.hardware,
                r.source,
                r.date,
                if differs.is_empty() {
                    String::new()
                } else {
                    format!("; differs: {}", differs.join(", "))
                }
            );
            Some((
                rank,
                Against {
                    reference: r,
                    fraction,
                    differs,
                    text,
                },
            ))
        })
        .collect();
    out.sort_by_key(|(rank, _)| *rank);
    out.into_iter().map(|(_, a)| a).collect()
}

/// A share as a person reads it: "41 %", "4.1 %", "0.041 %".
pub fn percent(fraction: f64) -> String {
    let p = 100.0 * fraction;
    match p {
        p if p >= 10.0 => format!("{p:.0} %"),
        p if p >= 1.0 => format!("{p:.1} %"),
        p if p > 0.0 => {
            let digits = (-p.log10()).ceil() as usize + 1;
            format!("{p:.digits$} %")
        }
        _ => "0 %".into(),
    }
}

fn differences(run: &RunFigures<'_>, r: &Published) -> Vec<String> {
    let mut d = Vec::new();
    if r.studio_model != run.model {
        d.push(format!("model ({} against {})", run.model, r.model));
    }
    let hw = run.gpu.unwrap_or("a CPU");
    let family = r.gpu.split_whitespace().next().unwrap_or(&r.gpu);
    if !hw.to_uppercase().contains(&family.to_uppercase()) {
        d.push(format!("hardware ({hw} against {})", r.hardware));
    }
    if r.precision != run.precision.as_str() {
        d.push(format!(
            "precision ({} against {})",
            run.precision.as_str(),
            r.precision
        ));
    }
    if let Some(b) = r.global_batch.filter(|b| *b != run.global_batch) {
        let unit = if r.unit == Unit::Tokens {
            " tokens"
        } else {
            ""
        };
        d.push(format!("batch ({} against {b}{unit})", run.global_batch));
    }
    let sw = run
        .software
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_lowercase();
    if sw.is_empty() || !r.framework.to_lowercase().contains(&sw) {
        d.push(format!(
            "software ({} against {})",
            run.software, r.framework
        ));
    }
    d
}

//! `trainbench published`: the published training results the studio ships
//! (`data/published_results.csv`), each with the MFU it implies by every FLOP
//! formula it names and whether that is plausible for its hardware.

use std::process::ExitCode;

use serde_json::json;
use trainbench_app::published::{table, PublishedRow};
use trainbench_core::published::{Unit, Verdict};

use crate::error::{bad, CliError};

/// `published [ID] --json`'s document: every published result, or the one named.
pub fn published_json(id: Option<&str>) -> Result<serde_json::Value, CliError> {
    Ok(json!({ "published": published_rows(id)? }))
}

fn published_rows(id: Option<&str>) -> Result<Vec<PublishedRow>, CliError> {
    let rows: Vec<PublishedRow> = table()
        .into_iter()
        .filter(|r| id.is_none_or(|i| r.row.id == i))
        .collect();
    if let Some(i) = id {
        if rows.is_empty() {
            let ids: Vec<String> = table().into_iter().map(|r| r.row.id).collect();
            return Err(bad(
                "id",
                format!(
                    "id = {i} is not allowed: expected one of {}",
                    ids.join(", ")
                ),
            ));
        }
    }
    Ok(rows)
}

pub fn run(id: Option<String>, json_out: bool) -> Result<ExitCode, CliError> {
    if json_out {
        println!("{}", published_json(id.as_deref())?);
        return Ok(ExitCode::SUCCESS);
    }
    let rows = published_rows(id.as_deref())?;
    for r in &rows {
        let p = &r.row;
        let unit = match p.unit {
            Unit::Samples => "samples/s",
            Unit::Tokens => "tokens/s",
        };
        let flag = match r.plausibility.verdict {
            Verdict::Plausible => "plausible",
            Verdict::TooLow => "IMPLAUSIBLY LOW",
            Verdict::TooHigh => "IMPLAUSIBLY HIGH",
            Verdict::Impossible => "IMPOSSIBLE",
            Verdict::Unknown => "not judged",
        };
        println!(
            "{}: {} on {}, {} ({})",
            p.id, p.model, p.hardware, p.framework, p.precision
        );
        println!("  stated:      {} — \"{}\"", p.stated, p.quote);
        println!("  per device:  {:.1} {unit}", p.per_device);
        for i in &r.implied {
            println!(
                "  implied MFU: {} by {} ({:.3} GFLOP per {})",
                i.mfu
                    .map_or("no peak".into(), |m| format!("{:.1} %", 100.0 * m)),
                i.formula,
                i.flops_per_unit / 1e9,
                if p.unit == Unit::Tokens {
                    "token"
                } else {
                    "sample"
                }
            );
        }
        println!("  verdict:     {flag}: {}", r.plausibility.reason);
        if !p.derivation.is_empty() {
            println!("  derived:     {}", p.derivation);
        }
        println!("  source:      {} ({})", p.source, p.date);
        println!();
    }
    println!(
        "MFU = throughput per device × FLOPs per sample or token ÷ the device's dense peak for the precision (docs/metrics.md). Plausible for training: {:.0}–{:.0} %.",
        100.0 * trainbench_core::published::PLAUSIBLE_LOW,
        100.0 * trainbench_core::published::PLAUSIBLE_HIGH
    );
    Ok(ExitCode::SUCCESS)
}

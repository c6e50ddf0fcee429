//! docs/gpu-results.md, generated from the record (docs/gpu-results/,
//! [`super::record`]): the opening, then per session in time its section
//! (date, the studio's commit, the GPU with its driver and CUDA, a row per
//! item with studio ÷ peer ratios beside their studio rows, and the
//! projections of the session on the other GPU kind checked against its
//! measurements) and the notes a person wrote about it. `gpu-session render
//! --check` (run by `make test`) fails when the committed document is not
//! what the record gives.

use std::path::Path;

use serde_json::Value;

use super::doc::{cell, number, row, text};
use super::record::{self, Facts, NOTES_SUFFIX, OPENING, RESULTS_SUFFIX};
use trainbench_app::error::{AppError, AppResult};

/// The document the record in `dir` gives.
pub fn render(dir: &Path) -> AppResult<String> {
    let opening = record::prose(dir, OPENING)?.ok_or_else(|| {
        AppError::bad(
            "record",
            format!(
                "record = {} is not allowed: it has no {OPENING} (the document's start)",
                dir.display()
            ),
        )
    })?;
    let mut md = opening.trim_end().to_owned();
    md.push('\n');
    for stem in record::stems("record", dir)? {
        if let Some(results) = record::results("record", dir, &stem)? {
            let facts = record::facts(dir, &stem)?;
            md += &section(&results, &facts, &stem);
            if let Some(other) = &facts.against {
                let other = record::results("record", dir, other)?.ok_or_else(|| {
                    AppError::bad(
                        "record",
                        format!(
                            "record: {stem}{} names against = {other}, which has no results",
                            record::SECTION_SUFFIX
                        ),
                    )
                })?;
                md += &checked(&results, &other);
            }
        }
        if let Some(notes) = record::prose(dir, &format!("{stem}{NOTES_SUFFIX}"))? {
            md += "\n";
            md += notes.trim_end();
            md.push('\n');
        }
    }
    Ok(md)
}

/// An item's framework cell: its peer's library, or its first run's
/// framework as the session file gives it.
fn framework_of(r: &Value, facts: &Facts) -> String {
    if let Some(peer) = r.get("peer").filter(|p| !p.is_null()) {
        return format!(
            "{} ({}; torch {})",
            text(&peer["library"]),
            text(&peer["library_version"]),
            text(&peer["torch"])
        );
    }
    r["run_ids"]
        .as_array()
        .and_then(|ids| ids.first())
        .and_then(Value::as_i64)
        .and_then(|id| facts.frameworks.get(&id))
        .map_or_else(|| "—".into(), Clone::clone)
}

/// An item's row of the results document (cells as read; [`row`] escapes).
fn item_row(r: &Value, date: &str, commit: &str, gpu: &str, fw: String) -> String {
    let mfu = r["mfu"]
        .as_f64()
        .map_or_else(|| "—".into(), |m| format!("{:.1} %", 100.0 * m));
    let note = [&r["reason"], &r["ratio_note"]]
        .into_iter()
        .filter(|v| !v.is_null())
        .map(text)
        .collect::<Vec<_>>()
        .join("; ");
    let rate = super::write::rate_cell(
        r["samples_per_s"].as_f64(),
        r["samples_per_s_ci95"]
            .as_array()
            .and_then(|a| Some([a.first()?.as_f64()?, a.get(1)?.as_f64()?])),
    );
    let ratio = r["ratio"].as_f64().map_or_else(
        || "—".into(),
        |x| {
            let of = r["ratio_of"]
                .as_str()
                .map_or_else(|| "studio ÷ peer".into(), str::to_owned);
            format!("{x:.3} ({of})")
        },
    );
    let status = if note.is_empty() {
        text(&r["status"])
    } else {
        format!("{}: {note}", text(&r["status"]))
    };
    row(&[
        date.to_owned(),
        commit.to_owned(),
        gpu.to_owned(),
        fw,
        format!("{}: {}", text(&r["id"]), text(&r["title"])),
        number(&r["batch"], 0),
        rate,
        mfu,
        ratio,
        status,
    ])
}

/// The Markdown section of the session `stem` of the record: its results
/// with its `facts`. Every text from the files is escaped ([`doc::cell`]).
pub fn section(results: &Value, facts: &Facts, stem: &str) -> String {
    let s = &results["session"];
    let started = text(&s["started"]);
    let date = started.get(..10).unwrap_or(&started).to_owned();
    let commit = text(&results["studio_git_revision"]);
    let gpu = &facts.gpu;
    let rehearsal = s["rehearse"].as_bool() == Some(true);
    let mut md = format!(
        "\n## {}, {}: GPU session{}\n\n",
        cell(&date),
        cell(gpu),
        if rehearsal { " (CPU rehearsal)" } else { "" },
    );
    md += &format!(
        "`trainbench gpu-session` at {}, budget {} s, started {}; its results are `gpu-results/{}{RESULTS_SUFFIX}`.\n\n",
        cell(&commit),
        cell(&number(&s["budget_s"], 0)),
        cell(&started),
        cell(stem),
    );
    md += "| date | commit | GPU (driver, CUDA) | framework (version) | item | batch | samples/s (95 % interval) | MFU | ratio | status, note |\n";
    md += "|---|---|---|---|---|---:|---:|---:|---:|---|\n";
    for r in results["results"].as_array().into_iter().flatten() {
        md += &item_row(r, &date, &commit, gpu, framework_of(r, facts));
    }
    md
}

/// The section's part checking the projections another session (`other`,
/// on the twin GPU) made for this one's GPU; empty when none apply.
pub fn checked(results: &Value, other: &Value) -> String {
    let rows = super::twins::check_against(results, other);
    if rows.is_empty() {
        return String::new();
    }
    let mut md = "\n### The projection checked\n\nEach run of the other session projected to this GPU by the studio's method (docs/metrics.md, \"Projected to hardware a run did not use\"), against this session's measurement of the same item.\n\n".to_owned();
    md += "| item | projected from (samples/s, low – high, middle) | measured here | inside | middle's error |\n|---|---|---:|---|---:|\n";
    for r in rows {
        md += &row(&r);
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_studio_rate_is_folded_with_its_interval_and_a_peers_without() {
        let results = serde_json::json!({
            "format": "trainbench-gpu-session",
            "studio_git_revision": "abc",
            "host": "vm",
            "session": {"started": "2026-11-26 23:11 UTC", "device": "cuda:0", "budget_s": 530.0},
            "results": [
                {"id": "vit-eager", "title": "ViT", "status": "ran", "batch": 64,
                 "samples_per_s": 2023.14, "samples_per_s_ci95": [1874.2, 2072.4], "mfu": 0.216},
                {"id": "vit-timm", "title": "timm", "status": "ran", "batch": 64,
                 "samples_per_s": 2186.4, "samples_per_s_ci95": null, "ratio": 0.925,
                 "peer": {"library": "timm", "library_version": "1.0", "torch": "2.11"}}
            ]
        });
        let md = section(
            &results,
            &Facts::default(),
            "2026-11-26-2311-cpu-gpu-session",
        );
        assert!(md.contains("| samples/s (95 % interval) |"), "{md}");
        assert!(md.contains(", budget 530 s, "), "{md}");
        assert!(
            md.contains("| vit-eager: ViT | 64 | 2023.1 (1874–2072) | 21.6 % |"),
            "{md}"
        );
        assert!(md.contains("| vit-timm: timm | 64 | 2186.4 | — |"), "{md}");
    }
}

//! A session's output folder folded into docs/gpu-results.md: one section
//! per session (its date, the studio's commit, the GPU with its driver and
//! CUDA, every framework's version) with a row per item, studio ÷ peer
//! ratios beside their studio rows; and its session file imported, so the
//! runs compare and export like local ones. A folder already folded is
//! refused (its marker is in the file).

use std::path::Path;

use serde_json::Value;

use super::doc::{self, cell, number, row, text, MAX_DOC_BYTES};
use super::files::{RESULTS_JSON, SESSION_FILE};
use trainbench_app::error::{AppError, AppResult};
use trainbench_app::reports::{write_file, Imported};
use trainbench_app::workspace::Workspace;
use trainbench_core::session::MAX_SESSION_FILE_BYTES;

/// What folding did.
#[derive(Debug)]
pub struct Folded {
    /// The section appended to the results file.
    pub section: String,
    pub rows: usize,
    /// The session file imported, when there was one and a workspace.
    pub imported: Option<Imported>,
}

/// Per run id: (framework and version, GPU, driver, CUDA) from the session file.
fn provenance(session: &Value) -> Vec<(i64, String, String, String, String)> {
    let mut out = Vec::new();
    for r in session["runs"].as_array().into_iter().flatten() {
        let hello = &r["hello"];
        let p = &r["provenance"];
        out.push((
            r["id"].as_i64().unwrap_or_default(),
            format!(
                "{} ({})",
                text(&r["framework"]),
                text(&hello["framework_version"])
            ),
            text(&hello["device"]["name"]),
            text(&p["nvidia_driver"]),
            text(&p["cuda_driver"]),
        ));
    }
    out
}

/// An item's framework cell: its peer's library, or its first run's
/// framework as the session file gives it.
fn framework_of(r: &Value, prov: &[(i64, String, String, String, String)]) -> String {
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
        .and_then(|id| prov.iter().find(|p| p.0 == id))
        .map_or_else(|| "—".into(), |p| p.1.clone())
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

/// The markdown section for the folder's results (and its session file's
/// provenance, when there is one). Every text from the files is escaped
/// ([`doc::cell`]); the marker is the section's only line starting `<!--`.
pub fn section(results: &Value, session: Option<&Value>) -> String {
    let s = &results["session"];
    let started = text(&s["started"]);
    let date = started.get(..10).unwrap_or(&started).to_owned();
    let commit = text(&results["studio_git_revision"]);
    let prov = session.map(provenance).unwrap_or_default();
    let gpu = prov.iter().find(|p| p.2 != "—").map_or_else(
        || text(&s["device"]),
        |p| format!("{} ({}, CUDA {})", p.2, p.3, p.4),
    );
    let rehearsal = s["rehearse"].as_bool() == Some(true);
    let mut md = format!(
        "\n## {}, {}: GPU session{}\n\n{}\n\n",
        cell(&date),
        cell(&gpu),
        if rehearsal { " (CPU rehearsal)" } else { "" },
        doc::marker(&started, &text(&results["host"])),
    );
    md += &format!(
        "`trainbench gpu-session` at {}, budget {} s, started {}. Folded from its {RESULTS_JSON} by `trainbench gpu-session fold`.\n\n",
        cell(&commit),
        cell(&number(&s["budget_s"], 0)),
        cell(&started),
    );
    md += "| date | commit | GPU (driver, CUDA) | framework (version) | item | batch | samples/s (95 % interval) | MFU | ratio | status, note |\n";
    md += "|---|---|---|---|---|---:|---:|---:|---:|---|\n";
    for r in results["results"].as_array().into_iter().flatten() {
        md += &item_row(r, &date, &commit, &gpu, framework_of(r, &prov));
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

/// The session file beside the results, parsed (`None`: there is none);
/// read bounded like an import.
fn session_of(dir: &Path) -> AppResult<Option<Value>> {
    let path = dir.join(SESSION_FILE);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let bytes = doc::read_file(
        "dir",
        &path,
        "a session file",
        MAX_SESSION_FILE_BYTES as u64,
    )?;
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        AppError::bad(
            "dir",
            format!(
                "dir = {} is not allowed: its {SESSION_FILE} is not JSON ({e})",
                dir.display()
            ),
        )
    })
}

/// Appends the folder's section to `doc` (refused when already there) and
/// imports its session file into `ws`; with `against` (a session's folder
/// from the twin GPU), the projections it made for this GPU are checked.
/// A `doc` that is a symbolic link is written through: the file it points
/// to gets the section, the link stays.
pub fn fold(
    dir: &Path,
    doc: &Path,
    ws: Option<&mut Workspace>,
    against: Option<&Path>,
) -> AppResult<Folded> {
    let results = doc::read_results("dir", dir)?;
    let session = session_of(dir)?;
    let mut section = section(&results, session.as_ref());
    if let Some(other_dir) = against {
        let other = doc::read_results("against", other_dir)?;
        section += &checked(&results, &other);
    }
    let existing = doc::read_text("doc", doc, "the GPU results document", MAX_DOC_BYTES)?;
    let marker = doc::marker(
        &text(&results["session"]["started"]),
        &text(&results["host"]),
    );
    if doc::has_marker(&existing, &marker) {
        return Err(AppError::bad(
            "dir",
            format!(
                "dir = {} is not allowed: this session is already in {}",
                dir.display(),
                doc.display()
            ),
        ));
    }
    let rows = results["results"].as_array().map_or(0, Vec::len);
    let mut text = existing;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text += &section;
    // Through a link to the file it names: the link is not replaced.
    let target = doc.canonicalize().map_err(|e| {
        AppError::bad(
            "doc",
            format!("doc = {} is not allowed: {e}", doc.display()),
        )
    })?;
    write_file(&target, text.as_bytes())?;
    let imported = match (ws, session.is_some()) {
        (Some(ws), true) => Some(ws.import_session_file(&dir.join(SESSION_FILE))?),
        _ => None,
    };
    Ok(Folded {
        section,
        rows,
        imported,
    })
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
        let md = section(&results, None);
        assert!(md.contains("| samples/s (95 % interval) |"), "{md}");
        assert!(md.contains(", budget 530 s, "), "{md}");
        assert!(
            md.contains("| vit-eager: ViT | 64 | 2023.1 (1874–2072) | 21.6 % |"),
            "{md}"
        );
        assert!(md.contains("| vit-timm: timm | 64 | 2186.4 | — |"), "{md}");
    }
}

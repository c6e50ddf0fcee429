//! The record of GPU sessions: the folder docs/gpu-results/, from which
//! docs/gpu-results.md is *generated* ([`super::render`]), never parsed.
//!
//! Per session, named by its stem (`2026-11-27-0458-h200-gpu-session`:
//! the minute it started and its GPU kind, so names sort in time):
//! - `STEM-results.json`: the session's results.json as it wrote it;
//! - `STEM-section.json`: what its section shows besides ([`Facts`]): the
//!   GPU with its driver and CUDA and each run's framework with its version
//!   (from the session file), and the session whose projections it checks;
//! - `STEM-checks.json` and `STEM.trainbench-session.json` (or `.json.xz`):
//!   its checks and its runs, to import;
//! - `STEM-notes.md`, optional: what a person wrote about it, shown after
//!   its table. A stem with notes and no results is a section of prose.
//!
//! `opening.md` is the document's start. `gpu-session fold` adds a session
//! ([`super::fold`]); `gpu-session plan --measured` reads the results only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::doc::{self, text};
use trainbench_app::error::{AppError, AppResult};
use trainbench_core::reference::gpu_peak_for;

pub const RESULTS_SUFFIX: &str = "-results.json";
pub const SECTION_SUFFIX: &str = "-section.json";
pub const NOTES_SUFFIX: &str = "-notes.md";
pub const CHECKS_SUFFIX: &str = "-checks.json";
pub const SESSION_SUFFIX: &str = ".trainbench-session.json";
pub const OPENING: &str = "opening.md";
/// A notes file or the opening: hand-written prose, at most this long.
const MAX_NOTES_BYTES: u64 = 1 << 20;

/// What a session's section shows besides its results (`STEM-section.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    /// The GPU with its driver and CUDA (`NVIDIA H200 (580.159.04, CUDA
    /// 13.0)`), or the session's device when its runs did not say.
    pub gpu: String,
    /// Per run id, its framework and version (`pytorch (2.11.0)`).
    pub frameworks: BTreeMap<i64, String>,
    /// The stem of the session on the other GPU kind whose projections to
    /// this GPU this session's measurements check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
}

impl Facts {
    /// From the session file's runs (`None`: no session file).
    pub fn of(results: &Value, session: Option<&Value>) -> Facts {
        let mut frameworks = BTreeMap::new();
        let mut gpu = None;
        for r in session
            .and_then(|s| s["runs"].as_array())
            .into_iter()
            .flatten()
        {
            let hello = &r["hello"];
            let p = &r["provenance"];
            frameworks.insert(
                r["id"].as_i64().unwrap_or_default(),
                format!(
                    "{} ({})",
                    text(&r["framework"]),
                    text(&hello["framework_version"])
                ),
            );
            let name = text(&hello["device"]["name"]);
            if gpu.is_none() && name != "—" {
                gpu = Some(format!(
                    "{name} ({}, CUDA {})",
                    text(&p["nvidia_driver"]),
                    text(&p["cuda_driver"])
                ));
            }
        }
        Facts {
            gpu: gpu.unwrap_or_else(|| text(&results["session"]["device"])),
            frameworks,
            against: None,
        }
    }
}

/// The GPU a session ran on, by the name its driver gives (the session's
/// device, `cpu`, in a rehearsal).
pub fn gpu_name(results: &Value) -> String {
    let s = &results["session"];
    if s["rehearse"].as_bool() == Some(true) {
        return "cpu".into();
    }
    s["gpus"]
        .get(0)
        .and_then(|g| g["name"].as_str())
        .map_or_else(|| text(&s["device"]), str::to_owned)
}

/// A session's stem: `YYYY-MM-DD-HHMM-KIND-gpu-session`, KIND the first
/// word of the peak table's name of its GPU (`h100`), else `cpu`.
pub fn stem_of(results: &Value) -> AppResult<String> {
    let started = text(&results["session"]["started"]);
    // "2026-11-27 04:58 UTC"
    let ok = started.len() >= 16
        && started.is_char_boundary(16)
        && started[..16].chars().enumerate().all(|(i, c)| match i {
            4 | 7 => c == '-',
            10 => c == ' ',
            13 => c == ':',
            _ => c.is_ascii_digit(),
        });
    if !ok {
        return Err(AppError::bad(
            "dir",
            format!(
                "dir: its results' session.started = {} is not allowed: expected YYYY-MM-DD HH:MM UTC",
                trainbench_core::text::cut(doc::cell(&started), 40)
            ),
        ));
    }
    let kind = gpu_peak_for(&gpu_name(results))
        .and_then(|p| p.device.split_whitespace().next().map(str::to_lowercase))
        .unwrap_or_else(|| "cpu".into());
    let kind: String = kind.chars().filter(char::is_ascii_alphanumeric).collect();
    Ok(format!(
        "{}-{}{}-{kind}-gpu-session",
        &started[..10],
        &started[11..13],
        &started[14..16]
    ))
}

/// The record's folder for the document `doc` (docs/gpu-results.md →
/// docs/gpu-results/).
pub fn folder_of(doc: &Path) -> PathBuf {
    doc.with_extension("")
}

/// The opening of a record made by its first `fold`.
const FIRST_OPENING: &str = "# GPU results\n\nFigures from `trainbench gpu-session` on real GPUs, generated from the record\nbeside this file (`gpu-results/`) by `trainbench gpu-session fold`.\n";

/// The record's folder made if it is not there, with an opening: the
/// document's text so far (`existing`: a record's first fold keeps what the
/// page said), else a short one.
pub fn create(dir: &Path, existing: Option<&str>) -> AppResult<()> {
    let bad = |e: std::io::Error| {
        AppError::bad(
            "doc",
            format!("doc: its record {} is not allowed: {e}", dir.display()),
        )
    };
    std::fs::create_dir_all(dir).map_err(bad)?;
    let opening = dir.join(OPENING);
    if std::fs::symlink_metadata(&opening).is_err() {
        let text = existing
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(FIRST_OPENING);
        trainbench_app::reports::write_file(&opening, text.as_bytes())?;
    }
    Ok(())
}

/// Every stem in the record (with results, notes or both), in order;
/// errors name `field`.
pub fn stems(field: &str, dir: &Path) -> AppResult<Vec<String>> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        AppError::bad(
            field,
            format!(
                "{field} = {} is not allowed: expected the folder of GPU sessions' results ({e})",
                dir.display()
            ),
        )
    })?;
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| {
            let stem = name
                .strip_suffix(RESULTS_SUFFIX)
                .or_else(|| name.strip_suffix(NOTES_SUFFIX))?;
            Some(stem.to_owned())
        })
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

/// A session's results from the record (`None`: it has none).
pub fn results(field: &str, dir: &Path, stem: &str) -> AppResult<Option<Value>> {
    let path = dir.join(format!("{stem}{RESULTS_SUFFIX}"));
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    doc::parse_results(field, &path).map(Some)
}

/// A session's facts (the defaults when it has no section file).
pub fn facts(dir: &Path, stem: &str) -> AppResult<Facts> {
    let path = dir.join(format!("{stem}{SECTION_SUFFIX}"));
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Facts::default());
    }
    let text = doc::read_text(
        "record",
        &path,
        "a session's section facts",
        MAX_NOTES_BYTES,
    )?;
    serde_json::from_str(&text).map_err(|e| {
        AppError::bad(
            "record",
            format!(
                "record = {} is not allowed: not a section's facts ({e})",
                path.display()
            ),
        )
    })
}

/// A prose file of the record (`None`: there is none).
pub fn prose(dir: &Path, name: &str) -> AppResult<Option<String>> {
    let path = dir.join(name);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    doc::read_text("record", &path, "Markdown text", MAX_NOTES_BYTES).map(Some)
}

/// Every session's results in the record, in order.
pub fn all_results(field: &str, dir: &Path) -> AppResult<Vec<Value>> {
    let mut out = Vec::new();
    for stem in stems(field, dir)? {
        out.extend(results(field, dir, &stem)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stem_sorts_in_time_and_names_the_gpu_kind() {
        let r = serde_json::json!({"session": {"started": "2026-11-27 04:58 UTC",
            "gpus": [{"name": "NVIDIA H200"}], "device": "cuda:0"}});
        assert_eq!(stem_of(&r).unwrap(), "2026-11-27-0458-h200-gpu-session");
        let cpu =
            serde_json::json!({"session": {"started": "2026-11-27 14:05 UTC", "device": "cpu"}});
        assert_eq!(stem_of(&cpu).unwrap(), "2026-11-27-1405-cpu-gpu-session");
        let bad = serde_json::json!({"session": {"started": "../../etc 04:58 UTC"}});
        assert!(stem_of(&bad).is_err());
    }
}

//! A session's output folder added to the record (docs/gpu-results/,
//! [`super::record`]) and the results document rendered again from it
//! ([`super::render`]); its session file imported, so the runs compare and
//! export like local ones. A session already in the record is refused.

use std::path::Path;

use serde_json::Value;

use super::doc;
use super::files::{CHECKS_JSON, RESULTS_JSON, SESSION_FILE};
use super::record::{self, Facts, CHECKS_SUFFIX, RESULTS_SUFFIX, SECTION_SUFFIX, SESSION_SUFFIX};
use trainbench_app::error::{AppError, AppResult};
use trainbench_app::reports::{write_file, Imported};
use trainbench_app::workspace::Workspace;
use trainbench_core::session::MAX_SESSION_FILE_BYTES;

/// What folding did.
#[derive(Debug)]
pub struct Folded {
    /// The session's name in the record.
    pub stem: String,
    /// The session's section of the results document.
    pub section: String,
    pub rows: usize,
    /// The session file imported, when there was one and a workspace.
    pub imported: Option<Imported>,
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

/// Refuses a page that is not what its record gives: folding writes it
/// again from the record, and what was written on it by hand would be lost.
fn check_unchanged(doc: &Path, folder: &Path, existing: Option<&str>) -> AppResult<()> {
    let Some(existing) = existing else {
        return Ok(());
    };
    if existing == super::render::render(folder)? {
        return Ok(());
    }
    Err(AppError::bad(
        "doc",
        format!(
            "doc = {} is not allowed: it is not what its record {} gives (written by hand?): put that text in the record's files, see `trainbench gpu-session render --check`",
            doc.display(),
            folder.display()
        ),
    ))
}

/// Copies `from` into the record as `name` (refused if it is not a
/// regular file; a missing one is skipped).
fn keep(from: &Path, dir: &Path, name: &str, what: &str, max: u64) -> AppResult<()> {
    if std::fs::symlink_metadata(from).is_err() {
        return Ok(());
    }
    let bytes = doc::read_file("dir", from, what, max)?;
    write_file(&dir.join(name), &bytes).map(drop)
}

/// Adds the session in `dir` to the record beside `doc` (docs/gpu-results/
/// beside docs/gpu-results.md), renders `doc` again and imports the session
/// file into `ws`; with `against` (a session's folder from the twin GPU,
/// already in the record), the projections it made for this GPU are
/// checked. A `doc` that is a symbolic link is written through: the file it
/// points to gets the document, the link stays.
pub fn fold(
    dir: &Path,
    doc: &Path,
    ws: Option<&mut Workspace>,
    against: Option<&Path>,
) -> AppResult<Folded> {
    let results = doc::read_results("dir", dir)?;
    let session = session_of(dir)?;
    let stem = record::stem_of(&results)?;
    let folder = record::folder_of(doc);
    let against = match against {
        Some(other_dir) => Some(record::stem_of(&doc::read_results("against", other_dir)?)?),
        None => None,
    };
    // The page as it is (hand-written text would be lost if the record did
    // not give it); checked before anything is written.
    let existing = if std::fs::symlink_metadata(doc).is_ok() {
        Some(doc::read_text(
            "doc",
            doc,
            "the GPU results document",
            doc::MAX_DOC_BYTES,
        )?)
    } else {
        None
    };
    let known = folder.join(record::OPENING).is_file();
    if known {
        check_unchanged(doc, &folder, existing.as_deref())?;
        if record::results("record", &folder, &stem)?.is_some() {
            return Err(AppError::bad(
                "dir",
                format!(
                    "dir = {} is not allowed: this session is already in {} (as {stem})",
                    dir.display(),
                    folder.display()
                ),
            ));
        }
    }
    if let Some(other) = &against {
        if !known || record::results("record", &folder, other)?.is_none() {
            return Err(AppError::bad(
                "against",
                format!(
                    "against = {other} is not allowed: expected a session already in {} (fold it first)",
                    folder.display()
                ),
            ));
        }
    }
    let mut facts = Facts::of(&results, session.as_ref());
    facts.against = against;
    record::create(&folder, existing.as_deref())?;
    let max = doc::MAX_RESULTS_BYTES;
    keep(
        &dir.join(CHECKS_JSON),
        &folder,
        &format!("{stem}{CHECKS_SUFFIX}"),
        "the session's checks",
        max,
    )?;
    keep(
        &dir.join(SESSION_FILE),
        &folder,
        &format!("{stem}{SESSION_SUFFIX}"),
        "a session file",
        MAX_SESSION_FILE_BYTES as u64,
    )?;
    let json = serde_json::to_string_pretty(&facts).unwrap_or_default() + "\n";
    write_file(
        &folder.join(format!("{stem}{SECTION_SUFFIX}")),
        json.as_bytes(),
    )?;
    // The results last: a session is in the record once they are.
    keep(
        &dir.join(RESULTS_JSON),
        &folder,
        &format!("{stem}{RESULTS_SUFFIX}"),
        "a session's results",
        max,
    )?;
    let text = super::render::render(&folder)?;
    // Through a link to the file it names: the link is not replaced.
    let target = if std::fs::symlink_metadata(doc).is_ok() {
        doc.canonicalize().map_err(|e| {
            AppError::bad(
                "doc",
                format!("doc = {} is not allowed: {e}", doc.display()),
            )
        })?
    } else {
        doc.to_path_buf()
    };
    write_file(&target, text.as_bytes())?;
    let rows = results["results"].as_array().map_or(0, Vec::len);
    let section = super::render::section(&results, &facts, &stem);
    let imported = match (ws, session.is_some()) {
        (Some(ws), true) => Some(ws.import_session_file(&dir.join(SESSION_FILE))?),
        _ => None,
    };
    Ok(Folded {
        stem,
        section,
        rows,
        imported,
    })
}

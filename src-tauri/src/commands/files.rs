//! Files out (PDF, CSV, session file) and in (session file), by path.

use std::path::PathBuf;

use tauri::State;
use trainbench_app::reports::Written;
use trainbench_app::SessionRef;
use trainbench_core::session::ChartKind;

use super::dto::{count, ImportResult, ReportSelection};
use crate::error::ApiResult;
use crate::Studio;

/// The PDF report of a comparison or saved session.
#[tauri::command]
#[specta::specta]
pub fn export_pdf(
    studio: State<'_, Studio>,
    selection: ReportSelection,
    path: PathBuf,
) -> ApiResult<Written> {
    studio.with(|w| w.write_export(&path, &w.pdf(&w.select(&selection.into())?, None, &[])?))
}

/// The same report as one self-contained HTML file (interactive charts,
/// nothing fetched when it is opened).
#[tauri::command]
#[specta::specta]
pub fn export_html(
    studio: State<'_, Studio>,
    selection: ReportSelection,
    path: PathBuf,
) -> ApiResult<Written> {
    studio.with(|w| {
        let page = w.html(&w.select(&selection.into())?, None, &[])?;
        w.write_export(&path, page.as_bytes())
    })
}

/// One chart of a comparison as SVG or PNG (by the file's extension), drawn
/// as the PDF and `trainbench export chart` draw it.
#[tauri::command]
#[specta::specta]
pub fn export_chart(
    studio: State<'_, Studio>,
    selection: ReportSelection,
    kind: ChartKind,
    path: PathBuf,
) -> ApiResult<Written> {
    studio.with(|w| w.write_export(&path, &w.chart(&w.select(&selection.into())?, kind, &path)?))
}

/// One run's raw `windows`, `evals` or `telemetry` as CSV (`trainbench
/// export csv --raw`'s columns).
#[tauri::command]
#[specta::specta]
pub fn export_run_csv(
    studio: State<'_, Studio>,
    run_id: i64,
    what: String,
    path: PathBuf,
) -> ApiResult<Written> {
    studio.with(|w| w.write_export(&path, &w.raw_csv(run_id, &what)?))
}

/// Runs with configuration and summary columns as CSV (all runs when `run_ids` is empty).
#[tauri::command]
#[specta::specta]
pub fn export_csv(
    studio: State<'_, Studio>,
    run_ids: Vec<i64>,
    path: PathBuf,
) -> ApiResult<Written> {
    studio.with(|w| {
        let rows = if run_ids.is_empty() {
            w.runs()?
        } else {
            w.runs_by_id(&run_ids)?
        };
        w.write_export(&path, &w.runs_csv(&rows)?)
    })
}

/// A saved session as a portable file (runs, raw data, provenance, chart settings).
#[tauri::command]
#[specta::specta]
pub fn export_session(studio: State<'_, Studio>, id: i64, path: PathBuf) -> ApiResult<Written> {
    studio.with(|w| Ok(w.export_session(&SessionRef::Id(id), &path, None)?.0))
}

/// Imports a session file: all of it in one transaction, or nothing.
#[tauri::command]
#[specta::specta]
pub fn import_session(studio: State<'_, Studio>, path: PathBuf) -> ApiResult<ImportResult> {
    let imported = studio.with(|w| w.import_session_file(&path))?;
    Ok(ImportResult {
        session: imported.session,
        session_created: imported.outcome.session_created,
        runs_imported: count(imported.outcome.runs_imported),
        runs_already_present: count(imported.outcome.runs_already_present),
        from_host: imported.from_host,
    })
}

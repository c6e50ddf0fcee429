//! Settings: the price table, framework environments, database, theme.

use std::path::PathBuf;

use tauri::ipc::Channel;
use tauri::State;
use trainbench_app::envs::{self, FrameworkEnv};
use trainbench_app::frameworks;
use trainbench_app::prices::PriceEntry;
use trainbench_app::AppError;
use trainbench_core::reference::PriceRow;

use crate::error::{ApiError, ApiResult};
use crate::settings::{Settings, Theme};
use crate::Studio;

#[tauri::command]
#[specta::specta]
pub fn prices(studio: State<'_, Studio>) -> ApiResult<Vec<PriceEntry>> {
    studio.with(|w| w.prices())
}

/// Adds or edits a price row, under the one rule set `trainbench prices`
/// uses too (core's `PriceRow::validate`).
#[tauri::command]
#[specta::specta]
pub fn save_price(studio: State<'_, Studio>, row: PriceRow) -> ApiResult<Vec<PriceEntry>> {
    studio.with(|w| {
        w.save_price(&row)?;
        w.prices()
    })
}

#[tauri::command]
#[specta::specta]
pub fn environments() -> ApiResult<Vec<FrameworkEnv>> {
    Ok(envs::list().map_err(AppError::from)?)
}

/// Installs (or repairs) the studio's environment for a Python framework,
/// streaming the installer's output lines (uv, else pip) to `on_line`; its worker must then start.
#[tauri::command]
#[specta::specta]
pub async fn install_framework(
    studio: State<'_, Studio>,
    framework: String,
    on_line: Channel<String>,
) -> ApiResult<FrameworkEnv> {
    let gpu = studio.host.gpu_count() > 0;
    let installed = tauri::async_runtime::spawn_blocking(move || {
        frameworks::install(&framework, gpu, |line| {
            let _ = on_line.send(line.to_owned());
        })
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))??;
    Ok(installed.0)
}

#[tauri::command]
#[specta::specta]
pub fn settings(studio: State<'_, Studio>) -> Settings {
    studio.settings()
}

/// Switches to another database file (created if new); refuses while runs
/// are queued or running, and keeps the current one when the new one cannot
/// be opened.
#[tauri::command]
#[specta::specta]
pub fn set_database(studio: State<'_, Studio>, path: PathBuf) -> ApiResult<Settings> {
    studio.set_database(path)
}

#[tauri::command]
#[specta::specta]
pub fn set_theme(studio: State<'_, Studio>, theme: Theme) -> ApiResult<Settings> {
    studio.set_theme(theme)
}

//! Settings: the price table, framework environments, database, theme.

use std::path::PathBuf;

use tauri::ipc::Channel;
use tauri::State;
use trainbench_app::envs::{self, FrameworkEnv, InstallProgress};
use trainbench_app::prices::PriceEntry;
use trainbench_app::releases::{BudgetPass, BudgetedRelease};
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

/// Deletes a price row; refused while stored runs are priced by it.
#[tauri::command]
#[specta::specta]
pub fn delete_price(studio: State<'_, Studio>, offering: String) -> ApiResult<Vec<PriceEntry>> {
    studio.with(|w| {
        w.delete_price(&offering)?;
        w.prices()
    })
}

#[tauri::command]
#[specta::specta]
pub fn environments() -> ApiResult<Vec<FrameworkEnv>> {
    Ok(envs::list().map_err(AppError::from)?)
}

/// One update of an install for the wizard: the installer's line and the
/// figures so far (packages, bytes, step, seconds).
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct InstallUpdateDto {
    pub line: String,
    pub progress: InstallProgress,
}

/// Installs (or repairs) the studio's environment for a Python framework,
/// streaming each installer line (uv, else pip) with the figures so far to
/// `on_update`; its worker must then start. [`cancel_install`] stops it and
/// leaves the environments as they were.
#[tauri::command]
#[specta::specta]
pub async fn install_framework(
    studio: State<'_, Studio>,
    framework: String,
    on_update: Channel<InstallUpdateDto>,
) -> ApiResult<FrameworkEnv> {
    let gpu = studio.host.gpu_count() > 0;
    let installs = std::sync::Arc::clone(&studio.installs);
    let installed = tauri::async_runtime::spawn_blocking(move || {
        installs.install(&framework, gpu, |u| {
            let _ = on_update.send(InstallUpdateDto {
                line: u.line.to_owned(),
                progress: u.progress.clone(),
            });
        })
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))??;
    Ok(installed.env)
}

/// One installer line of a release made before a sweep starts.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct ReleaseInstallDto {
    /// The release being made (`jax==0.7.2`).
    pub release: String,
    pub line: String,
    pub progress: InstallProgress,
}

/// What Start's installs did: the releases made, the ones removed over the
/// disk budget (the least recently used first) and the ones kept over it
/// because something uses them, each with the sentence the window shows
/// ("removed jax==0.6.1's environment (913 MiB, …): …", "kept jax==0.6.0's
/// environment (…): it is in use …").
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct ReleasesMadeDto {
    /// The releases made (`jax==0.7.2`).
    pub made: Vec<String>,
    pub removed: Vec<BudgetedRelease>,
    pub kept: Vec<BudgetedRelease>,
}

/// Makes the environment of every release the sweep's frameworks name that
/// is not installed (`jax==0.7.2`), one after another, streaming each
/// installer line to `on_update`, then removes the least recently used
/// releases over the disk budget (never one named, nor one in use, which is
/// kept and said): the wizard's Start does this before it starts the
/// sweep, as `trainbench run` does.
/// [`cancel_install`] with the release stops the one under way. Returns the
/// releases made and the ones removed and kept.
#[tauri::command]
#[specta::specta]
pub async fn install_releases(
    studio: State<'_, Studio>,
    frameworks: Vec<String>,
    on_update: Channel<ReleaseInstallDto>,
) -> ApiResult<ReleasesMadeDto> {
    let gpu = studio.host.gpu_count() > 0;
    let installs = std::sync::Arc::clone(&studio.installs);
    let (made, evicted) = tauri::async_runtime::spawn_blocking(move || {
        trainbench_app::releases::install_missing(
            &installs,
            &frameworks,
            gpu,
            |_| {},
            |pin, u| {
                let _ = on_update.send(ReleaseInstallDto {
                    release: pin.to_string(),
                    line: u.line.to_owned(),
                    progress: u.progress.clone(),
                });
            },
        )
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))??;
    let pass = BudgetPass::from(&evicted);
    Ok(ReleasesMadeDto {
        made: made.iter().map(|m| m.pin.to_string()).collect(),
        removed: pass.removed,
        kept: pass.kept,
    })
}

/// The releases of `framework` (jax, pytorch, tensorflow) PyPI lists within
/// the supported range, newest first, each with whether it is installed:
/// what the wizard's version picker offers (`jax==0.7.2`).
#[tauri::command]
#[specta::specta]
pub async fn framework_releases(framework: String) -> ApiResult<super::dto::ReleasesDto> {
    let asked = framework.clone();
    let (releases, supported) =
        tauri::async_runtime::spawn_blocking(move || trainbench_app::releases::releases(&asked))
            .await
            .map_err(|e| ApiError::internal(e.to_string()))??;
    Ok(super::dto::ReleasesDto {
        framework,
        releases,
        supported,
    })
}

/// Cancels the install of `framework`; false when none is under way.
#[tauri::command]
#[specta::specta]
pub fn cancel_install(studio: State<'_, Studio>, framework: String) -> ApiResult<bool> {
    Ok(studio.installs.cancel(&framework)?)
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

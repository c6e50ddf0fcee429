//! Saved comparison sessions.

use tauri::State;
use trainbench_app::SessionRef;
use trainbench_core::session::{SavedSession, SessionSettings};

use crate::error::ApiResult;
use crate::Studio;

#[tauri::command]
#[specta::specta]
pub fn list_sessions(studio: State<'_, Studio>) -> ApiResult<Vec<SavedSession>> {
    studio.with(|w| w.sessions())
}

#[tauri::command]
#[specta::specta]
pub fn save_session(
    studio: State<'_, Studio>,
    name: String,
    run_ids: Vec<i64>,
    baseline: Option<i64>,
    settings: SessionSettings,
) -> ApiResult<SavedSession> {
    studio.with(|w| w.save_session(&name, &run_ids, baseline, &settings))
}

#[tauri::command]
#[specta::specta]
pub fn update_session(
    studio: State<'_, Studio>,
    id: i64,
    run_ids: Vec<i64>,
    baseline: Option<i64>,
    settings: SessionSettings,
) -> ApiResult<SavedSession> {
    studio.with(|w| w.update_session(id, &run_ids, baseline, &settings))
}

#[tauri::command]
#[specta::specta]
pub fn open_session(studio: State<'_, Studio>, id: i64) -> ApiResult<SavedSession> {
    studio.with(|w| w.session(&SessionRef::Id(id)))
}

#[tauri::command]
#[specta::specta]
pub fn rename_session(studio: State<'_, Studio>, id: i64, name: String) -> ApiResult<SavedSession> {
    studio.with(|w| w.rename_session(&SessionRef::Id(id), &name))
}

#[tauri::command]
#[specta::specta]
pub fn delete_session(studio: State<'_, Studio>, id: i64) -> ApiResult<()> {
    studio.with(|w| w.delete_session(&SessionRef::Id(id)).map(drop))
}

//! A person's own model in the wizard: the library names that contain a text,
//! and a library or file model built once by its framework's worker and
//! counted (`trainbench models --search` and `trainbench describe`). Both
//! start worker processes, so both run off the UI thread.

use trainbench_app::describe::{describe_own_model, DescribedModel};
use trainbench_app::model_search::{FoundModels, ModelQuery};
use trainbench_app::models::ModelSearch;
use trainbench_app::sweep::SweepRequest;

use crate::error::{ApiError, ApiResult};

/// Catalogue models and library names (`timm:…`, `hf:…`, `keras:…`) whose
/// name contains `text`; a framework environment that is not installed is
/// said in `libraries_note`.
#[tauri::command]
#[specta::specta]
pub async fn search_models(text: String) -> ApiResult<ModelSearch> {
    tauri::async_runtime::spawn_blocking(move || trainbench_app::models::search(&text))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))
}

/// Models matching a query, the catalogue's first, then the installed
/// libraries' with their family and size (`count`: the matches' sizes not
/// counted yet are counted first, once each), narrowed by family, size and
/// whether a CPU trains them.
#[tauri::command]
#[specta::specta]
pub async fn find_models(query: ModelQuery) -> ApiResult<FoundModels> {
    tauri::async_runtime::spawn_blocking(move || trainbench_app::model_search::find(&query))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(Into::into)
}

/// The request's one model in its one framework, built by the worker and
/// counted: parameters, FLOPs per sample and how the harness trains it. A
/// model file runs here, because the person asked for this check now; what
/// it gets wrong comes back naming the field (with their traceback).
#[tauri::command]
#[specta::specta]
pub async fn describe_model(request: SweepRequest) -> ApiResult<DescribedModel> {
    tauri::async_runtime::spawn_blocking(move || describe_own_model(&request))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(Into::into)
}

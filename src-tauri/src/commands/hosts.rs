//! Remote hosts (Settings): the same use cases as `trainbench host`
//! (`trainbench_app::remote`); adding and checking talk to the host over ssh,
//! on a blocking thread.

use trainbench_app::remote::{self, RemoteHost, SlurmSettings};

use crate::error::{ApiError, ApiResult};

/// A host as Settings adds it.
#[derive(Debug, Clone, serde::Deserialize, specta::Type)]
pub struct AddHostRequest {
    pub name: String,
    /// `ssh://[user@]host[:port][/folder]`.
    pub url: String,
    /// Interpreters on the host (empty: python3).
    pub pythons: Vec<String>,
    /// `KEY=VALUE` exported before every command there.
    pub env: Vec<String>,
    pub slurm: bool,
    pub partition: Option<String>,
    /// More machines for several nodes without Slurm (`ssh://…`).
    #[serde(default)]
    pub peers: Vec<String>,
}

#[tauri::command]
#[specta::specta]
pub fn list_hosts() -> ApiResult<Vec<RemoteHost>> {
    Ok(remote::hosts()?)
}

#[tauri::command]
#[specta::specta]
pub async fn add_host(request: AddHostRequest) -> ApiResult<RemoteHost> {
    tauri::async_runtime::spawn_blocking(move || {
        let slurm = request.slurm.then(|| SlurmSettings {
            partition: request.partition.clone().filter(|p| !p.trim().is_empty()),
        });
        remote::add_host(
            &request.name,
            &request.url,
            &request.pythons,
            &request.env,
            slurm,
            &request.peers,
        )
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?
    .map_err(Into::into)
}

#[tauri::command]
#[specta::specta]
pub async fn check_host(name: String) -> ApiResult<RemoteHost> {
    tauri::async_runtime::spawn_blocking(move || remote::check_host(&name))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map_err(Into::into)
}

#[tauri::command]
#[specta::specta]
pub fn remove_host(name: String) -> ApiResult<Vec<RemoteHost>> {
    remote::remove_host(&name)?;
    Ok(remote::hosts()?)
}

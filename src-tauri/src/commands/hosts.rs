//! Remote hosts (Settings): the same use cases as `trainbench host`
//! (`trainbench_app::remote`); adding and checking talk to the host over ssh,
//! on a blocking thread.

use tauri::State;
use trainbench_app::remote::{self, RemoteHost, SlurmSettings};

use crate::error::{ApiError, ApiResult};
use crate::narration::NarrationStatus;
use crate::Studio;

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

/// Adds a host; its steps show through [`host_steps`] as they start.
#[tauri::command]
#[specta::specta]
pub async fn add_host(studio: State<'_, Studio>, request: AddHostRequest) -> ApiResult<RemoteHost> {
    let steps = std::sync::Arc::clone(&studio.host_steps);
    tauri::async_runtime::spawn_blocking(move || {
        let (_cancel, _running) = steps.begin("adding or checking a host")?;
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
            &mut |s: &str| steps.say(s.to_owned()),
        )
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?
    .map_err(Into::into)
}

/// Checks a host again; its steps show through [`host_steps`].
#[tauri::command]
#[specta::specta]
pub async fn check_host(studio: State<'_, Studio>, name: String) -> ApiResult<RemoteHost> {
    let steps = std::sync::Arc::clone(&studio.host_steps);
    tauri::async_runtime::spawn_blocking(move || {
        let (_cancel, _running) = steps.begin("adding or checking a host")?;
        remote::check_host(&name, &mut |s: &str| steps.say(s.to_owned()))
    })
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

/// The steps of the host add or check under way (or the last one).
#[tauri::command]
#[specta::specta]
pub fn host_steps(studio: State<'_, Studio>) -> NarrationStatus {
    studio.host_steps.status()
}

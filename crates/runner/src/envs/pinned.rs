//! Environments for one framework release (`jax==0.7.2`), made on demand
//! with uv in the studio's `envs/versions/` folder (`jax-0.7.2`), shared by
//! every run that names that release, listed with the disk each takes and
//! when it was last used, and removable. The studio's own environment is
//! used when it already is that release (`jax==0.10.2`).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use trainbench_core::versions::{self, Pin};

use super::install::install_at;
use super::{
    builtin, builtin_env, home, installed_version, sha256_hex, EnvError, FrameworkEnv,
    InstallUpdate, Installed,
};

/// The folder of every release's environment.
pub fn versions_dir() -> PathBuf {
    home().join("envs").join("versions")
}

/// A release's environment with what it costs on disk.
#[derive(Debug, Clone, Serialize)]
pub struct PinnedEnv {
    pub pin: String,
    pub env: FrameworkEnv,
    /// Bytes under its folder (files hard-linked from uv's cache count here too).
    pub bytes: u64,
    /// When a run last used it (milliseconds since 1970), if ever.
    pub last_used_unix_ms: Option<u64>,
}

fn dir_of(pin: Pin) -> PathBuf {
    versions_dir().join(versions::env_name(pin))
}

/// `pin`'s environment: the studio's own when it is that release and
/// installed, else the one in `envs/versions/` (ready or not).
pub fn env_for(pin: Pin) -> FrameworkEnv {
    if let Some(b) = builtin(pin.framework) {
        let own = builtin_env(b);
        if own.ready && own.version.as_deref() == Some(&pin.release.to_string()) {
            return own;
        }
    }
    in_versions(pin)
}

/// `pin`'s environment in `envs/versions/` (never the studio's own): ready
/// when its marker is the requirements' SHA-256.
fn in_versions(pin: Pin) -> FrameworkEnv {
    let dir = dir_of(pin);
    let python = dir.join("bin").join("python");
    let marker = std::fs::read_to_string(dir.join(".trainbench-ready")).unwrap_or_default();
    let ready = python.exists()
        && [false, true]
            .iter()
            .any(|gpu| marker.trim() == sha256_hex(&versions::requirements(pin, *gpu)));
    let import = builtin(pin.framework).map_or("", |b| b.import);
    FrameworkEnv {
        name: pin.to_string(),
        framework: pin.framework,
        version: installed_version(&python, import),
        python,
        builtin: false,
        ready,
    }
}

/// Bytes under `pin`'s folder in `envs/versions/` (`None` when it has none):
/// one release's disk, without walking every other release's folder.
pub fn bytes_of(pin: Pin) -> Option<u64> {
    let dir = dir_of(pin);
    dir.is_dir().then(|| trainbench_files::bytes_under(&dir))
}

/// Notes that a run used `pin`'s environment (for least-recently-used order).
pub fn touch(pin: Pin) {
    let dir = dir_of(pin);
    if dir.is_dir() {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let _ = std::fs::write(dir.join(".trainbench-used"), now.to_string());
    }
}

/// Every release's environment in `envs/versions/`, oldest use first.
pub fn list_pinned() -> Vec<PinnedEnv> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(versions_dir())
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((stem, version)) = name.rsplit_once('-') else {
            continue;
        };
        let framework = if stem == "torch" { "pytorch" } else { stem };
        let Ok(Some(pin)) = versions::parse_pin(&format!("{framework}=={version}")) else {
            continue;
        };
        let dir = entry.path();
        out.push(PinnedEnv {
            pin: pin.to_string(),
            env: in_versions(pin),
            bytes: trainbench_files::bytes_under(&dir),
            last_used_unix_ms: std::fs::read_to_string(dir.join(".trainbench-used"))
                .ok()
                .and_then(|t| t.trim().parse().ok()),
        });
    }
    out.sort_by_key(|p| (p.last_used_unix_ms.unwrap_or(0), p.pin.clone()));
    out
}

/// Makes `pin`'s environment in `envs/versions/` from PyPI (uv), as
/// [`super::install`] does the studio's own: staged, its worker started
/// once, moved into place; cancellable; nothing half-installed.
pub fn install_pinned(
    pin: Pin,
    gpu: bool,
    cancel: &AtomicBool,
    on: impl FnMut(InstallUpdate<'_>),
) -> Result<Installed, EnvError> {
    let requirements = versions::requirements(pin, gpu);
    let (info, progress) = install_at(pin.framework, &dir_of(pin), &requirements, cancel, on)?;
    touch(pin);
    Ok(Installed {
        env: env_for(pin),
        info,
        progress,
    })
}

/// Removes `pin`'s environment from `envs/versions/` (the studio's own is
/// never removed here); its size in bytes.
pub fn remove_pinned(pin: Pin) -> Result<u64, EnvError> {
    let dir = dir_of(pin);
    if !dir.is_dir() {
        let have: Vec<String> = list_pinned().into_iter().map(|p| p.pin).collect();
        return Err(super::bad(
            "version",
            pin,
            if have.is_empty() {
                "an installed release (none is installed)".to_owned()
            } else {
                format!("an installed release: {}", have.join(", "))
            },
        ));
    }
    let bytes = trainbench_files::bytes_under(&dir);
    std::fs::remove_dir_all(&dir)
        .map_err(|e| EnvError::Io(format!("cannot remove {}: {e}", dir.display())))?;
    Ok(bytes)
}

/// The disk the releases' environments may take when none is set: 20 GiB.
pub const DEFAULT_BUDGET_BYTES: u64 = 20 << 30;

fn budget_file() -> PathBuf {
    versions_dir().join(".budget")
}

/// The disk the releases' environments may take together (bytes).
pub fn budget() -> u64 {
    std::fs::read_to_string(budget_file())
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(DEFAULT_BUDGET_BYTES)
}

/// Sets the budget (written whole).
pub fn set_budget(bytes: u64) -> Result<(), EnvError> {
    std::fs::create_dir_all(versions_dir())
        .map_err(|e| EnvError::Io(format!("cannot create {}: {e}", versions_dir().display())))?;
    trainbench_files::write_atomic("budget", &budget_file(), bytes.to_string().as_bytes())
        .map_err(|e| EnvError::Io(e.to_string()))
}

/// Removes the least recently used releases' environments until the rest
/// fit the budget, never one of `keep` (the releases a sweep is about to
/// use); what was removed, with its bytes.
pub fn evict_over_budget(keep: &[Pin]) -> Vec<(String, u64)> {
    let budget = budget();
    let mut all = list_pinned();
    let mut total: u64 = all.iter().map(|p| p.bytes).sum();
    let keep: Vec<String> = keep.iter().map(ToString::to_string).collect();
    let mut removed = Vec::new();
    // Oldest use first (list_pinned's order).
    all.retain(|p| !keep.contains(&p.pin));
    for p in all {
        if total <= budget {
            break;
        }
        let Ok(Some(pin)) = versions::parse_pin(&p.pin) else {
            continue;
        };
        if let Ok(bytes) = remove_pinned(pin) {
            total = total.saturating_sub(bytes);
            removed.push((p.pin, bytes));
        }
    }
    removed
}

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
use trainbench_files::FileLock;

use super::install::{install_at, Target};
use super::{
    builtin, builtin_env, home, installed_version, EnvError, FrameworkEnv, InstallUpdate, Installed,
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
    let ready = super::made_from(
        &dir,
        &[false, true].map(|gpu| versions::requirements(pin, gpu)),
    );
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

/// How to start the worker of `pin`'s environment ([`env_for`]): the
/// runner checks that the worker reports that release, else fails the run.
pub fn worker_command(pin: Pin) -> crate::WorkerCommand {
    crate::WorkerCommand {
        release: Some(pin),
        ..super::worker_command(&env_for(pin))
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
    let label = pin.to_string();
    let target = Target {
        framework: pin.framework,
        dir: &dir_of(pin),
        requirements: &requirements,
        label: &label,
        pin: Some(pin),
    };
    // Kept from the disk budget while it is made and checked.
    let _using = in_use(pin)?;
    let done = install_at(&target, cancel, on)?;
    touch(pin);
    Ok(Installed {
        env: env_for(pin),
        info: done.info,
        progress: done.progress,
        found_ready: done.found_ready,
    })
}

/// Removes `pin`'s environment from `envs/versions/` (the studio's own is
/// never removed here); its size in bytes. Refused while a run, a sweep, a
/// bisection or an install uses it ([`in_use`]), in any process.
pub fn remove_pinned(pin: Pin) -> Result<u64, EnvError> {
    let dir = dir_of(pin);
    if let Some(own) = builtin(pin.framework).filter(|_| !dir.is_dir()) {
        if builtin_env(own).version.as_deref() == Some(&pin.release.to_string()) {
            return Err(super::bad(
                "version",
                pin,
                format!(
                    "a release installed on demand: {pin} is the studio's own {} environment ({}), which `env remove` leaves in place",
                    pin.framework,
                    own.env_name
                ),
            ));
        }
    }
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
    let io = |e: trainbench_files::FileError| EnvError::Io(e.to_string());
    let Some(_alone) = FileLock::try_exclusive(&use_lock(pin)).map_err(io)? else {
        return Err(EnvError::InUse {
            pin: pin.to_string(),
        });
    };
    remove_dir_of(pin)
}

/// Removes `pin`'s folder (its users' lock held by the caller); its bytes.
fn remove_dir_of(pin: Pin) -> Result<u64, EnvError> {
    let dir = dir_of(pin);
    let bytes = trainbench_files::bytes_under(&dir);
    std::fs::remove_dir_all(&dir)
        .map_err(|e| EnvError::Io(format!("cannot remove {}: {e}", dir.display())))?;
    let _ = std::fs::remove_file(evict_later(pin));
    Ok(bytes)
}

/// The file a release's users hold shared for as long as they use its
/// environment, and its removal holds alone (`.jax-0.7.2.use.lock`).
fn use_lock(pin: Pin) -> PathBuf {
    versions_dir().join(format!(".{}.use", versions::env_name(pin)))
}

/// Present while the budget kept `pin`'s environment because it was in
/// use: its last user checks the budget again when it lets go.
fn evict_later(pin: Pin) -> PathBuf {
    versions_dir().join(format!(".{}.evict", versions::env_name(pin)))
}

/// A use of a release's environment (a run's worker, a sweep, a
/// bisection, an install), held until dropped: the disk budget and `env
/// remove` leave the environment alone meanwhile, in every process. When
/// the budget kept it for this reason, the last user's drop checks the
/// budget again, which then removes it if it is still over.
#[derive(Debug)]
pub struct InUse {
    pin: Pin,
    lock: Option<FileLock>,
}

/// Marks `pin`'s environment in use until the guard is dropped (waits only
/// while a removal of it is under way).
pub fn in_use(pin: Pin) -> Result<InUse, EnvError> {
    let lock = FileLock::shared(&use_lock(pin)).map_err(|e| EnvError::Io(e.to_string()))?;
    Ok(InUse {
        pin,
        lock: Some(lock),
    })
}

impl Drop for InUse {
    fn drop(&mut self) {
        drop(self.lock.take());
        if evict_later(self.pin).exists() {
            let _ = evict_over_budget(&[]);
        }
    }
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

/// What a budget check did: the releases' environments removed and the
/// ones kept over the budget because they were in use (each with its bytes).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Eviction {
    pub removed: Vec<(String, u64)>,
    pub in_use: Vec<(String, u64)>,
}

/// Removes the least recently used releases' environments until the rest
/// fit the budget, never one of `keep` (the releases a sweep is about to
/// use) nor one in use in any process ([`in_use`]): those are kept and
/// named, and removed when their last user lets go if the rest are still
/// over the budget then.
pub fn evict_over_budget(keep: &[Pin]) -> Eviction {
    let budget = budget();
    let mut all = list_pinned();
    let mut total: u64 = all.iter().map(|p| p.bytes).sum();
    let keep: Vec<String> = keep.iter().map(ToString::to_string).collect();
    let mut done = Eviction::default();
    // Oldest use first (list_pinned's order).
    all.retain(|p| !keep.contains(&p.pin));
    for p in all {
        let Ok(Some(pin)) = versions::parse_pin(&p.pin) else {
            continue;
        };
        if total <= budget {
            // Within the budget: nothing is waiting to be removed.
            let _ = std::fs::remove_file(evict_later(pin));
            continue;
        }
        match FileLock::try_exclusive(&use_lock(pin)) {
            Ok(Some(_alone)) => {
                if let Ok(bytes) = remove_dir_of(pin) {
                    total = total.saturating_sub(bytes);
                    done.removed.push((p.pin, bytes));
                }
            }
            Ok(None) => {
                let _ = std::fs::write(evict_later(pin), b"");
                done.in_use.push((p.pin, p.bytes));
            }
            Err(_) => {}
        }
    }
    done
}

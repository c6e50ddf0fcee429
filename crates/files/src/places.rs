//! Where the studio keeps things on this machine, decided in one place:
//!
//! - [`studio_home`]: environments, hosts, kits and (unless another is chosen)
//!   the database — `$TRAINBENCH_HOME`, else `$XDG_DATA_HOME/trainbench`,
//!   else `~/.local/share/trainbench`;
//! - [`config_dir`]: the settings file both the CLI and the desktop app read
//!   (`studio.json`) — `$TRAINBENCH_CONFIG_DIR`, else
//!   `$XDG_CONFIG_HOME/trainbench`, else `~/.config/trainbench`;
//! - [`cache_dir`]: what can be recomputed (library models' sizes) —
//!   `$XDG_CACHE_HOME/trainbench`, else `~/.cache/trainbench`.

use std::path::PathBuf;

/// A variable's value when it is set and not empty (an empty `XDG_…` is unset,
/// as the XDG specification says).
fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The studio's home: `$TRAINBENCH_HOME`, else `$XDG_DATA_HOME/trainbench`,
/// else `~/.local/share/trainbench` (`./.trainbench` with no `$HOME`).
pub fn studio_home() -> PathBuf {
    if let Some(h) = var("TRAINBENCH_HOME") {
        return h;
    }
    if let Some(x) = var("XDG_DATA_HOME") {
        return x.join("trainbench");
    }
    var("HOME").map_or_else(
        || PathBuf::from(".trainbench"),
        |h| h.join(".local/share/trainbench"),
    )
}

/// The database when none is chosen: `trainbench.sqlite` in [`studio_home`].
pub fn default_database() -> PathBuf {
    studio_home().join("trainbench.sqlite")
}

/// The folder of the studio's settings file: `$TRAINBENCH_CONFIG_DIR`, else
/// `$XDG_CONFIG_HOME/trainbench`, else `~/.config/trainbench`.
pub fn config_dir() -> PathBuf {
    if let Some(d) = var("TRAINBENCH_CONFIG_DIR") {
        return d;
    }
    var("XDG_CONFIG_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".config")))
        .unwrap_or_else(|| PathBuf::from("."))
        .join("trainbench")
}

/// The settings file both front ends read: `studio.json` in [`config_dir`].
pub fn settings_file() -> PathBuf {
    config_dir().join("studio.json")
}

/// What the studio can recompute and keeps to save time (library models'
/// parameter counts): `$XDG_CACHE_HOME/trainbench`, else
/// `~/.cache/trainbench`.
pub fn cache_dir() -> PathBuf {
    var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(|| PathBuf::from("."))
        .join("trainbench")
}

//! The studio's own settings, kept in `$XDG_CONFIG_HOME/trainbench/studio.json`
//! (`$TRAINBENCH_CONFIG_DIR` overrides the folder): the database location and
//! the theme. Changed under a lock (`studio.json.lock`) and written whole (a
//! temporary file opened exclusively, fsynced, renamed), so two windows or a
//! crash never lose or half-write it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    /// Light or dark as the desktop prefers.
    #[default]
    System,
    Light,
    Dark,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Settings {
    /// The SQLite file every run is stored in.
    pub database: String,
    #[serde(default)]
    pub theme: Theme,
    /// Where these settings are kept (set when loaded, whatever the file says).
    #[serde(default)]
    pub file: String,
}

pub fn config_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("TRAINBENCH_CONFIG_DIR") {
        return PathBuf::from(d);
    }
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(|| PathBuf::from("."))
        .join("trainbench")
}

impl Settings {
    /// The saved settings; defaults where there are none. `$TRAINBENCH_DB`
    /// wins over the saved database (as it does for the CLI).
    pub fn load(dir: &Path) -> Settings {
        let file = dir.join("studio.json");
        let saved: Option<Settings> = std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let mut s = saved.unwrap_or_else(|| Settings {
            database: trainbench_app::workspace::default_database()
                .display()
                .to_string(),
            theme: Theme::System,
            file: String::new(),
        });
        if let Some(db) = std::env::var_os("TRAINBENCH_DB") {
            s.database = PathBuf::from(db).display().to_string();
        }
        s.file = file.display().to_string();
        s
    }

    /// Applies `change` to the settings as saved now (another studio may
    /// have changed them since these were loaded) and writes them whole,
    /// under the settings' lock. Returns the settings as written.
    pub fn update(&self, change: impl FnOnce(&mut Settings)) -> Result<Settings, String> {
        use trainbench_app::files::{write_atomic, FileLock};
        let file = PathBuf::from(&self.file);
        let _lock = FileLock::exclusive(&file).map_err(|e| e.to_string())?;
        let mut next = std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Settings>(&b).ok())
            .map_or_else(
                || self.clone(),
                |mut saved| {
                    // What this studio runs on now, whatever another one saved.
                    saved.database.clone_from(&self.database);
                    saved
                },
            );
        change(&mut next);
        next.file.clone_from(&self.file);
        let bytes = serde_json::to_vec_pretty(&next).map_err(|e| e.to_string())?;
        write_atomic("settings", &file, &bytes).map_err(|e| e.to_string())?;
        Ok(next)
    }
}

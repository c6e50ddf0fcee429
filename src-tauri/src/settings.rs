//! The settings as the window shows them: the database in use (and why that
//! one), the theme, and where the settings file is. The file itself — one for
//! the CLI and the desktop app — is `trainbench_app::settings`'.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use trainbench_app::settings::{self as studio_settings, locate_and_load};
pub use trainbench_app::settings::{DatabaseSource, Theme};
use trainbench_app::AppError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Settings {
    /// The SQLite file every run is stored in.
    pub database: String,
    /// Why this database: set by `$TRAINBENCH_DB`, chosen in Settings, or the
    /// default in the studio's home.
    pub database_source: DatabaseSource,
    pub theme: Theme,
    /// Where these settings are kept (the CLI reads the same file).
    pub file: String,
    /// Why the settings file could not be read (the defaults are in use).
    pub problem: Option<String>,
}

impl Settings {
    /// The settings as saved, and the database every front end started with
    /// this environment uses.
    pub fn load() -> Settings {
        Settings::load_from(&trainbench_app::files::places::settings_file())
    }

    /// [`Settings::load`] with the settings file `file`.
    pub fn load_from(file: &std::path::Path) -> Settings {
        let (at, saved) = locate_and_load(file);
        Settings {
            database: at.path.display().to_string(),
            database_source: at.source,
            theme: saved.theme,
            file: at.settings_file.display().to_string(),
            problem: at.problem,
        }
    }

    /// Settings naming `database` as chosen, kept in `file` (tests, benchmarks).
    pub fn at(database: &std::path::Path, file: &std::path::Path) -> Settings {
        Settings {
            database: database.display().to_string(),
            database_source: DatabaseSource::Settings,
            theme: Theme::System,
            file: file.display().to_string(),
            problem: None,
        }
    }

    /// The settings with the theme changed (saved under the settings' lock).
    pub fn with_theme(&self, theme: Theme) -> Result<Settings, AppError> {
        studio_settings::Settings::update(&PathBuf::from(&self.file), |s| s.theme = theme)?;
        Ok(Settings {
            theme,
            problem: None,
            ..self.clone()
        })
    }

    /// The settings with another database chosen for every front end.
    pub fn with_database(&self, path: &std::path::Path) -> Result<Settings, AppError> {
        let at = studio_settings::choose_database(&PathBuf::from(&self.file), path)?;
        Ok(Settings {
            database: at.path.display().to_string(),
            database_source: at.source,
            problem: None,
            ..self.clone()
        })
    }
}

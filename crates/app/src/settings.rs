//! The studio's settings: one file (`studio.json` in the settings folder,
//! [`trainbench_files::places`]) that the CLI and the desktop app both read,
//! so a database chosen in the app's Settings is the one `trainbench` uses.
//! Changed under a lock (`studio.json.lock`) and written whole, so two
//! windows, a CLI beside them or a crash never lose or half-write it.
//!
//! Which database a command works on, first match wins: the CLI's `--db`;
//! `$TRAINBENCH_DB`; the database chosen in Settings; `trainbench.sqlite` in
//! the studio's home (`$TRAINBENCH_HOME`, else `~/.local/share/trainbench`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use trainbench_files::{places, read_bounded, write_atomic, FileLock};

use crate::error::{AppError, AppResult};

/// The largest settings file read (it holds a path and a word).
const MAX_SETTINGS_BYTES: u64 = 1 << 20;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    /// Light or dark as the desktop prefers.
    #[default]
    System,
    Light,
    Dark,
}

/// What the settings file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// The database a person chose; none: the default in the studio's home.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<PathBuf>,
    /// The desktop app's colours.
    #[serde(default)]
    pub theme: Theme,
}

impl Settings {
    /// The settings in `file`; defaults when there is no file. A file that
    /// cannot be read or is not settings is an error naming it.
    pub fn load(file: &Path) -> AppResult<Settings> {
        if !file.exists() {
            return Ok(Settings::default());
        }
        let bytes = read_bounded("settings", file, "the settings file", MAX_SETTINGS_BYTES)?;
        serde_json::from_slice(&bytes).map_err(|e| {
            AppError::bad(
                "settings",
                format!(
                    "the settings file {} is not valid: {e} (fix it, or delete it to start from the defaults)",
                    file.display()
                ),
            )
        })
    }

    /// Applies `change` to the settings as saved now (another studio may have
    /// changed them since they were read) and writes them whole, under the
    /// settings' lock. Returns the settings as written.
    pub fn update(file: &Path, change: impl FnOnce(&mut Settings)) -> AppResult<Settings> {
        let _lock = FileLock::exclusive(file)?;
        let mut next = Settings::load(file)?;
        change(&mut next);
        let bytes =
            serde_json::to_vec_pretty(&next).map_err(|e| AppError::Internal(e.to_string()))?;
        write_atomic("settings", file, &bytes)?;
        Ok(next)
    }
}

/// Why a command works on the database it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum DatabaseSource {
    /// The CLI's `--db`.
    Flag,
    /// `$TRAINBENCH_DB`.
    Environment,
    /// Chosen in the desktop app's Settings (the settings file).
    Settings,
    /// `trainbench.sqlite` in the studio's home.
    Default,
}

/// The database a command works on, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DatabaseLocation {
    pub path: PathBuf,
    pub source: DatabaseSource,
    /// The settings file that was read (or would be).
    pub settings_file: PathBuf,
    /// Why the settings file was not used, when it could not be read.
    pub problem: Option<String>,
}

impl DatabaseLocation {
    /// Where the database is and why, in a sentence.
    pub fn describe(&self) -> String {
        let why = match self.source {
            DatabaseSource::Flag => "named by --db".to_owned(),
            DatabaseSource::Environment => "set by $TRAINBENCH_DB".to_owned(),
            DatabaseSource::Settings => {
                format!(
                    "chosen in Settings, kept in {}",
                    self.settings_file.display()
                )
            }
            DatabaseSource::Default => "the default, in the studio's home".to_owned(),
        };
        format!("{} ({why})", self.path.display())
    }
}

/// `$TRAINBENCH_DB` when set and not empty.
fn database_from_environment() -> Option<PathBuf> {
    std::env::var_os("TRAINBENCH_DB")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The database a command works on: `flag` (the CLI's `--db`), else
/// `$TRAINBENCH_DB`, else the one chosen in Settings, else the default.
pub fn locate_database(flag: Option<&Path>) -> DatabaseLocation {
    locate_with(&places::settings_file(), flag)
}

/// [`locate_database`] with the settings in `settings_file`.
pub fn locate_with(settings_file: &Path, flag: Option<&Path>) -> DatabaseLocation {
    // The file is read only when neither the flag nor the environment names
    // the database.
    resolve(
        settings_file,
        flag.map(Path::to_owned).or_else(database_from_environment),
        flag.is_some(),
        places::default_database(),
        || Settings::load(settings_file).map_err(|e| e.to_string()),
    )
}

/// [`locate_with`] (no flag), and the settings as saved (the defaults when
/// the file cannot be read): the file read once.
pub fn locate_and_load(settings_file: &Path) -> (DatabaseLocation, Settings) {
    let saved = Settings::load(settings_file).map_err(|e| e.to_string());
    let at = resolve(
        settings_file,
        database_from_environment(),
        false,
        places::default_database(),
        || saved.clone(),
    );
    (at, saved.unwrap_or_default())
}

/// The rule itself: `named` (by the flag when `by_flag`, else by the
/// environment) wins, then the choice in `saved` (the settings file as
/// read), then `default`.
fn resolve(
    settings_file: &Path,
    named: Option<PathBuf>,
    by_flag: bool,
    default: PathBuf,
    saved: impl FnOnce() -> Result<Settings, String>,
) -> DatabaseLocation {
    let at = |path: PathBuf, source| DatabaseLocation {
        path,
        source,
        settings_file: settings_file.to_owned(),
        problem: None,
    };
    if let Some(p) = named {
        let source = if by_flag {
            DatabaseSource::Flag
        } else {
            DatabaseSource::Environment
        };
        return at(p, source);
    }
    match saved() {
        Ok(Settings {
            database: Some(p), ..
        }) => at(p, DatabaseSource::Settings),
        Ok(_) => at(default, DatabaseSource::Default),
        Err(e) => DatabaseLocation {
            problem: Some(e),
            ..at(default, DatabaseSource::Default)
        },
    }
}

/// A database may be chosen unless `$TRAINBENCH_DB` (`fixed`) names another.
fn may_choose(fixed: Option<PathBuf>, path: &Path) -> AppResult<()> {
    match fixed.filter(|p| p != path) {
        Some(fixed) => Err(AppError::bad(
            "database",
            format!(
                "database = {} cannot be chosen here: $TRAINBENCH_DB = {} fixes the database of every front end started with it (unset it to choose one in Settings)",
                path.display(),
                fixed.display()
            ),
        )),
        None => Ok(()),
    }
}

/// Chooses the database every front end uses from now on (saved in the
/// settings file; the default location is saved as no choice, so that
/// `$TRAINBENCH_HOME` keeps moving it). Refused while `$TRAINBENCH_DB` fixes
/// another, since the choice would not be the one used.
pub fn choose_database(settings_file: &Path, path: &Path) -> AppResult<DatabaseLocation> {
    may_choose(database_from_environment(), path)?;
    let chosen = (path != places::default_database()).then(|| path.to_owned());
    Settings::update(settings_file, |s| s.database = chosen)?;
    Ok(locate_with(settings_file, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(file: &Path) -> Result<Settings, String> {
        Settings::load(file).map_err(|e| e.to_string())
    }

    /// A test's own folder, removed with what it holds when the test ends.
    fn scratch(name: &str) -> trainbench_files::OwnedDir {
        let d = std::env::temp_dir().join(format!("tb-settings-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        trainbench_files::OwnedDir::new(d)
    }

    #[test]
    fn the_flag_then_the_environment_then_the_choice_then_the_default() {
        let d = scratch("order");
        let file = d.join("studio.json");
        let default = d.join("home/trainbench.sqlite");
        let none = resolve(&file, None, false, default.clone(), || loaded(&file));
        assert_eq!(
            (none.path, none.source),
            (default.clone(), DatabaseSource::Default)
        );
        Settings::update(&file, |s| s.database = Some(d.join("chosen.sqlite"))).unwrap();
        let chosen = resolve(&file, None, false, default.clone(), || loaded(&file));
        assert_eq!(chosen.path, d.join("chosen.sqlite"));
        assert_eq!(chosen.source, DatabaseSource::Settings);
        assert!(
            chosen.describe().contains("chosen in Settings"),
            "{}",
            chosen.describe()
        );
        let env = resolve(
            &file,
            Some(d.join("env.sqlite")),
            false,
            default.clone(),
            || loaded(&file),
        );
        assert_eq!(env.source, DatabaseSource::Environment);
        let flag = resolve(&file, Some(d.join("flag.sqlite")), true, default, || {
            loaded(&file)
        });
        assert_eq!(
            (flag.path, flag.source),
            (d.join("flag.sqlite"), DatabaseSource::Flag)
        );
    }

    #[test]
    fn a_broken_settings_file_is_named_and_the_default_used() {
        let d = scratch("broken");
        let file = d.join("studio.json");
        std::fs::write(&file, b"{ not json").unwrap();
        let at = resolve(&file, None, false, d.join("default.sqlite"), || {
            loaded(&file)
        });
        assert_eq!(at.source, DatabaseSource::Default);
        let problem = at.problem.expect("the problem is said");
        assert!(problem.contains(&file.display().to_string()), "{problem}");
        // Changing the settings does not write over a file it cannot read.
        assert!(Settings::update(&file, |s| s.theme = Theme::Dark).is_err());
        assert_eq!(std::fs::read(&file).unwrap(), b"{ not json");
    }

    #[test]
    fn a_change_keeps_what_it_does_not_touch() {
        let d = scratch("keep");
        let file = d.join("studio.json");
        Settings::update(&file, |s| s.theme = Theme::Dark).unwrap();
        Settings::update(&file, |s| s.database = Some(d.join("a.sqlite"))).unwrap();
        let saved = Settings::load(&file).unwrap();
        assert_eq!(saved.theme, Theme::Dark);
        assert_eq!(saved.database, Some(d.join("a.sqlite")));
        // Settings saved by an older studio (every key, the default database too) still load.
        std::fs::write(
            &file,
            br#"{"database": "/x/trainbench.sqlite", "theme": "light", "file": "/y"}"#,
        )
        .unwrap();
        let old = Settings::load(&file).unwrap();
        assert_eq!(
            (old.database, old.theme),
            (Some(PathBuf::from("/x/trainbench.sqlite")), Theme::Light)
        );
    }

    #[test]
    fn the_environment_variable_fixes_the_database() {
        let e = may_choose(Some(PathBuf::from("/a.sqlite")), Path::new("/b.sqlite")).unwrap_err();
        assert_eq!(e.field(), Some("database"));
        assert!(e.to_string().contains("$TRAINBENCH_DB = /a.sqlite"), "{e}");
        may_choose(Some(PathBuf::from("/a.sqlite")), Path::new("/a.sqlite")).unwrap();
        may_choose(None, Path::new("/b.sqlite")).unwrap();
    }
}

//! The database a command works on, opened, and run ids as typed.

use std::path::Path;

use trainbench_app::settings::{locate_database, DatabaseLocation};
use trainbench_app::Workspace;

use crate::error::{bad, CliError};

/// The database: `--db`, else `$TRAINBENCH_DB`, else the one chosen in the
/// desktop app's Settings, else the default in the studio's home. A settings
/// file that cannot be read is said on stderr (the default is used).
pub fn locate(flag: Option<&Path>) -> DatabaseLocation {
    let at = locate_database(flag);
    if let Some(problem) = &at.problem {
        eprintln!("trainbench: {problem}; using {}", at.path.display());
    }
    at
}

/// Opens the database, saying so when runs of a studio that stopped were
/// marked interrupted.
pub fn open_workspace(path: &Path) -> Result<Workspace, CliError> {
    let (ws, n) = Workspace::open(path)?;
    if n > 0 {
        eprintln!("trainbench: {n} run(s) left running by a studio that stopped are now marked interrupted");
    }
    Ok(ws)
}

/// Run ids as typed, each a number.
pub fn parse_ids(ids: &[String]) -> Result<Vec<i64>, CliError> {
    ids.iter()
        .map(|s| {
            s.parse::<i64>().map_err(|_| {
                bad(
                    "id",
                    format!(
                        "id = {s} is not allowed: expected a run number (see `trainbench runs`)"
                    ),
                )
            })
        })
        .collect()
}

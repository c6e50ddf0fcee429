//! The database a command works on, opened, and run ids as typed.

use std::path::{Path, PathBuf};

use trainbench_app::Workspace;

use crate::error::{bad, CliError};

/// The database: `--db`, else the studio's default (`$TRAINBENCH_DB`, else the XDG data directory).
pub fn db_path(flag: Option<PathBuf>) -> PathBuf {
    flag.unwrap_or_else(trainbench_app::workspace::default_database)
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

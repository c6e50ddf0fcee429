//! Runs on remote hosts: where each one's folder is on its host and how far
//! its journal has been read (`remote_runs`, migration 0009).

use rusqlite::{params, OptionalExtension};

use crate::{now_unix_ms, Result, Store};

/// A run started on a remote host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRun {
    pub run_id: i64,
    /// The host's name in the studio's host list.
    pub host: String,
    /// Its `ssh://` address when the run started.
    pub url: String,
    /// The run's folder on the host.
    pub dir: String,
    /// Bytes of the journal read and stored.
    pub journal_offset: u64,
    pub finished: bool,
    /// The Slurm job id, on a Slurm host.
    pub slurm_job: Option<String>,
}

impl Store {
    pub fn insert_remote_run(&self, run_id: i64, host: &str, url: &str, dir: &str) -> Result<()> {
        self.conn.execute(
            "INSERT INTO remote_runs (run_id, host, url, dir, created_unix_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![run_id, host, url, dir, now_unix_ms()],
        )?;
        Ok(())
    }

    pub fn remote_run(&self, run_id: i64) -> Result<Option<RemoteRun>> {
        Ok(self
            .conn
            .query_row(
                "SELECT run_id, host, url, dir, journal_offset, finished, slurm_job FROM remote_runs WHERE run_id = ?1",
                params![run_id],
                row,
            )
            .optional()?)
    }

    /// Remote runs whose journal has not been read to its end.
    pub fn unfinished_remote_runs(&self) -> Result<Vec<RemoteRun>> {
        let mut stmt = self.conn.prepare(
            "SELECT run_id, host, url, dir, journal_offset, finished, slurm_job FROM remote_runs WHERE finished = 0 ORDER BY run_id",
        )?;
        let rows = stmt.query_map([], row)?.collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    pub fn set_slurm_job(&self, run_id: i64, job: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE remote_runs SET slurm_job = ?2 WHERE run_id = ?1",
            params![run_id, job],
        )?;
        Ok(())
    }

    pub fn finish_remote_run(&self, run_id: i64) -> Result<()> {
        self.conn.execute(
            "UPDATE remote_runs SET finished = 1 WHERE run_id = ?1",
            params![run_id],
        )?;
        Ok(())
    }
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RemoteRun> {
    Ok(RemoteRun {
        run_id: r.get(0)?,
        host: r.get(1)?,
        url: r.get(2)?,
        dir: r.get(3)?,
        journal_offset: r.get::<_, i64>(4)?.max(0) as u64,
        finished: r.get::<_, i64>(5)? != 0,
        slurm_job: r.get(6)?,
    })
}

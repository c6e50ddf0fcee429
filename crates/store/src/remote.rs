//! Runs on remote hosts: where each one's folder is on its host and how far
//! its journal has been read (`remote_runs`, migration 0009).

use rusqlite::{params, OptionalExtension};
use trainbench_core::protocol::Event;
use trainbench_core::summary::RunStatus;
use trainbench_core::telemetry::TelemetrySample;

use crate::{now_unix_ms, u, Result, Store};

/// How a remote run ended, as its journal's last line says.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalEnd<'a> {
    pub status: RunStatus,
    pub reason: Option<&'a str>,
    pub error_class: Option<&'a str>,
    pub exit_code: Option<i32>,
    pub stderr_tail: &'a str,
}

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
    /// The job as its place knows it: a Slurm job id, a Ray job's
    /// submission id (none for an agent started over ssh).
    pub place_job: Option<String>,
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
                "SELECT run_id, host, url, dir, journal_offset, finished, place_job FROM remote_runs WHERE run_id = ?1",
                params![run_id],
                row,
            )
            .optional()?)
    }

    /// Remote runs whose journal has not been read to its end.
    pub fn unfinished_remote_runs(&self) -> Result<Vec<RemoteRun>> {
        let mut stmt = self.conn.prepare(
            "SELECT run_id, host, url, dir, journal_offset, finished, place_job FROM remote_runs WHERE finished = 0 ORDER BY run_id",
        )?;
        let rows = stmt.query_map([], row)?.collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    pub fn set_place_job(&self, run_id: i64, job: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE remote_runs SET place_job = ?2 WHERE run_id = ?1",
            params![run_id, job],
        )?;
        Ok(())
    }

    /// The last events and samples read from a remote run's journal, the
    /// offset after its outcome, the run's end and "read to the end", in one
    /// transaction: a studio stopped at any moment either stored all of it
    /// or reads the outcome again.
    pub fn finish_journal(
        &mut self,
        run_id: i64,
        events: &[Event],
        telemetry: &[TelemetrySample],
        offset: u64,
        end: &JournalEnd<'_>,
    ) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        crate::measurements::record_in(&tx, run_id, events, telemetry)?;
        tx.execute(
            "UPDATE runs SET status = ?2, status_reason = ?3, error_class = ?4, exit_code = ?5, stderr_tail = ?6,
                 ended_unix_ms = ?7 WHERE id = ?1",
            params![
                run_id,
                end.status.as_str(),
                end.reason,
                end.error_class,
                end.exit_code,
                end.stderr_tail,
                now_unix_ms()
            ],
        )?;
        tx.execute(
            "UPDATE remote_runs SET journal_offset = ?2, finished = 1 WHERE run_id = ?1",
            params![run_id, u(offset)],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// A remote run whose host is gone: stored as `interrupted` with
    /// `reason`, its journal no longer waited for (what was read stays), in
    /// one transaction; it can then be deleted like any ended run.
    pub fn abandon_remote_run(&mut self, run_id: i64, reason: &str) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute(
            "UPDATE runs SET status = 'interrupted', status_reason = ?2, ended_unix_ms = COALESCE(ended_unix_ms, ?3)
             WHERE id = ?1 AND status IN ('queued', 'running')",
            params![run_id, reason, now_unix_ms()],
        )?;
        tx.execute(
            "UPDATE remote_runs SET finished = 1 WHERE run_id = ?1",
            params![run_id],
        )?;
        tx.commit()?;
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
        place_job: r.get(6)?,
    })
}

//! A workspace: one studio database, opened the one way both shells open it
//! (folder created, runs left `running` by a studio that stopped marked
//! interrupted), with the use cases that read and write it.

use std::path::Path;

use serde::Serialize;
use trainbench_core::record::{RunDetail, RunRow};
use trainbench_core::session::{SavedSession, SessionSettings};
use trainbench_core::telemetry::TelemetrySample;
use trainbench_store::{Damaged, Store, StoredBatchSearch};

use crate::error::{AppError, AppResult};

/// A saved session, by id or by name (a number no session is named counts as an id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRef {
    Id(i64),
    Name(String),
}

/// Every stored run that can be read (oldest first), and those left out.
#[derive(Debug, Clone, Default)]
pub struct RunListing {
    pub rows: Vec<RunRow>,
    pub left_out: Vec<LeftOutRun>,
}

/// What [`Workspace::stream_run_list`] hands on: the runs left out, once,
/// then every readable run, one at a time.
#[derive(Debug, Clone)]
pub enum Listed {
    LeftOut(Vec<LeftOutRun>),
    Run(Box<RunRow>),
}

/// A stored run left out of a listing because a column of its row holds a
/// value this studio cannot use (edited by hand, or a damaged file).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LeftOutRun {
    pub run: i64,
    /// The column at fault (`param_count`, `summary`, …).
    pub column: String,
    /// The value found there (cut to 80 bytes, control characters escaped).
    pub value: String,
    /// What the column must hold.
    pub expected: String,
    /// The line both shells show: "run 7 left out: param_count = -7 is
    /// damaged: expected … (the stored row was edited by hand or the file is
    /// damaged)".
    pub message: String,
}

impl From<&Damaged> for LeftOutRun {
    fn from(d: &Damaged) -> LeftOutRun {
        LeftOutRun {
            run: d.run,
            column: d.column.to_owned(),
            value: d.value.clone(),
            expected: d.expected.clone(),
            message: format!(
                "run {} left out: {} = {} is damaged: expected {} (the stored row was edited by hand or the file is damaged)",
                d.run, d.column, d.value, d.expected
            ),
        }
    }
}

#[derive(Debug)]
pub struct Workspace {
    pub(crate) store: Store,
}

impl Workspace {
    /// Opens (or creates) the database at `path`. Also returns how many runs
    /// a studio that stopped had left `running` (now `interrupted`).
    pub fn open(path: &Path) -> AppResult<(Workspace, usize)> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // A folder that cannot be made shows up as the open's error.
            let _ = std::fs::create_dir_all(dir);
        }
        let store = Store::open(path)?;
        let interrupted = store.mark_interrupted()?;
        Ok((Workspace { store }, interrupted))
    }

    /// A database in memory, kept nowhere: what the desktop app works on
    /// while the file it was given cannot be opened and the person picks
    /// another.
    pub fn in_memory() -> AppResult<Workspace> {
        Ok(Workspace {
            store: Store::open_in_memory()?,
        })
    }

    /// A second connection to a database this process already has open (a
    /// batch search beside the run queue): unlike `open`, it leaves running
    /// runs alone.
    pub fn open_beside(path: &Path) -> AppResult<Workspace> {
        Ok(Workspace {
            store: Store::open(path)?,
        })
    }

    pub fn path(&self) -> &Path {
        self.store.path()
    }

    // ------------------------------------------------------------- runs

    /// Every stored run that can be read, oldest first (a damaged row is
    /// left out: [`Workspace::run_list`] says which and why).
    pub fn runs(&self) -> AppResult<Vec<RunRow>> {
        Ok(self.store.list_runs()?)
    }

    /// Every stored run that can be read, and the runs left out because
    /// their row holds a value that cannot be used (run and column named),
    /// each with the line both shells show.
    pub fn run_list(&self) -> AppResult<RunListing> {
        let list = self.store.run_list()?;
        Ok(RunListing {
            rows: list.rows,
            left_out: list.left_out.iter().map(LeftOutRun::from).collect(),
        })
    }

    /// Every stored run that can be read, handed to `each` one at a time,
    /// oldest first (a damaged row is skipped: [`Workspace::stream_run_list`]
    /// names it), so that a listing of any length holds one run in memory.
    /// Stops at the first error `each` returns.
    pub fn each_run<E: From<AppError>>(
        &self,
        mut each: impl FnMut(RunRow) -> Result<(), E>,
    ) -> Result<(), E> {
        self.store
            .each_run(|row| match row {
                Ok(r) => each(r),
                Err(_) => Ok(()),
            })
            .map_err(AppError::from)?
    }

    /// [`Workspace::run_list`] a run at a time, for a listing of any length:
    /// first [`Listed::LeftOut`] (a first reading of every row that keeps
    /// only the damaged ones), then a [`Listed::Run`] for each readable run,
    /// oldest first. Both readings see one state of the database. Stops at
    /// the first error `each` returns.
    pub fn stream_run_list<E: From<AppError>>(
        &self,
        mut each: impl FnMut(Listed) -> Result<(), E>,
    ) -> Result<(), E> {
        let _one_state = self.store.snapshot().map_err(AppError::from)?;
        let damaged = self.store.damaged_runs().map_err(AppError::from)?;
        each(Listed::LeftOut(
            damaged.iter().map(LeftOutRun::from).collect(),
        ))?;
        self.each_run(|r| each(Listed::Run(Box::new(r))))
    }

    /// How many runs the database holds.
    pub fn run_count(&self) -> AppResult<u64> {
        Ok(self.store.run_count()?)
    }

    pub fn run(&self, id: i64) -> AppResult<RunRow> {
        Ok(self.store.run_row(id)?)
    }

    /// Runs by id, in the order given (each must exist).
    pub fn runs_by_id(&self, ids: &[i64]) -> AppResult<Vec<RunRow>> {
        ids.iter().map(|id| self.run(*id)).collect()
    }

    /// The probes of batch search `search` in `sweep` (`--batch-size max`).
    pub fn batch_search(&self, sweep: i64, search: &str) -> AppResult<StoredBatchSearch> {
        Ok(self.store.batch_search(sweep, search)?)
    }

    /// The batch search a run's batch came from; `None` for a given batch.
    pub fn batch_search_of_run(&self, id: i64) -> AppResult<Option<StoredBatchSearch>> {
        Ok(self.store.batch_search_of_run(id)?)
    }

    pub fn run_detail(&self, id: i64) -> AppResult<RunDetail> {
        Ok(self.store.run_detail(id)?)
    }

    pub fn telemetry(&self, id: i64) -> AppResult<Vec<TelemetrySample>> {
        Ok(self.store.telemetry(id)?)
    }

    /// Ends a run as failed (class `internal`) with `reason`: a run whose
    /// loop could not finish (the runner's own error, or a panic the shell's
    /// queue caught).
    pub fn mark_failed(&self, id: i64, reason: &str) -> AppResult<()> {
        Ok(self.store.finish_run(
            id,
            trainbench_core::summary::RunStatus::Failed,
            Some(reason),
            Some(trainbench_core::ErrorClass::Internal.as_str()),
            None,
            "",
        )?)
    }

    /// Deletes runs and all their data (never queued or running ones).
    /// Where run `id` ran when it ran on a remote host.
    pub fn remote_run(&self, id: i64) -> AppResult<Option<trainbench_store::RemoteRun>> {
        Ok(self.store.remote_run(id)?)
    }

    pub fn delete_runs(&mut self, ids: &[i64]) -> AppResult<usize> {
        Ok(self.store.delete_runs(ids)?)
    }

    // --------------------------------------------------------- sessions

    pub fn sessions(&self) -> AppResult<Vec<SavedSession>> {
        Ok(self.store.sessions()?)
    }

    /// [`Workspace::sessions`] handed to `each` one at a time, most recently
    /// changed first. Stops at the first error `each` returns.
    pub fn each_session<E: From<AppError>>(
        &self,
        each: impl FnMut(SavedSession) -> Result<(), E>,
    ) -> Result<(), E> {
        self.store.each_session(each).map_err(AppError::from)?
    }

    pub fn session(&self, which: &SessionRef) -> AppResult<SavedSession> {
        Ok(match which {
            SessionRef::Id(id) => self.store.session(*id)?,
            SessionRef::Name(name) => self.store.find_session(name)?,
        })
    }

    /// Saves runs as a named comparison; the comparison must be valid first
    /// (at least two entries, a baseline among them).
    pub fn save_session(
        &mut self,
        name: &str,
        run_ids: &[i64],
        baseline: Option<i64>,
        settings: &SessionSettings,
    ) -> AppResult<SavedSession> {
        self.store
            .load_comparison(run_ids, settings.grouping, baseline)?;
        Ok(self.store.save_session(name, run_ids, baseline, settings)?)
    }

    pub fn update_session(
        &mut self,
        id: i64,
        run_ids: &[i64],
        baseline: Option<i64>,
        settings: &SessionSettings,
    ) -> AppResult<SavedSession> {
        Ok(self.store.update_session(id, run_ids, baseline, settings)?)
    }

    pub fn rename_session(&mut self, which: &SessionRef, name: &str) -> AppResult<SavedSession> {
        let id = self.session(which)?.id;
        Ok(self.store.rename_session(id, name)?)
    }

    /// Deletes a saved session (its runs stay); returns what it was.
    pub fn delete_session(&mut self, which: &SessionRef) -> AppResult<SavedSession> {
        let s = self.session(which)?;
        self.store.delete_session(s.id)?;
        Ok(s)
    }
}

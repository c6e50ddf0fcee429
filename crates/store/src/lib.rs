//! TrainBench's store: one SQLite file (WAL) holding every run, its timing
//! windows, evaluations, memory peaks, telemetry, summary and provenance, plus
//! the editable price table.
//!
//! Migrations are the SQL files in `migrations/` at the repository root,
//! embedded at build time, applied in order, forward-only. Every write that
//! belongs together happens in one transaction, so a crash leaves either the
//! old or the new state, never half of one.
//!
//! Modules:
//! - [`bisections`]: a bisection's result beside its sweep (`bisections`): the
//!   runs are the sweep's own rows; what the search found is written once, when
//!   it ends.
//! - [`compact`]: long runs' telemetry averaged once their summary is stored:
//!   at most `KEEP_PER_SOURCE` samples per source stay.
//! - [`damaged`]: a stored run whose row holds a value this studio cannot use.
//! - [`fixtures`]: generated runs for tests and benchmarks (feature
//!   `fixtures`): written through the same calls the runner makes.
//! - [`gates`]: a performance gate's verdict beside its sweep (`gates`): the
//!   runs are the sweep's own rows.
//! - [`listing`]: every stored run, read one row at a time: a listing of any
//!   length held in the memory of one run.
//! - [`measurements`]: what a run measured: worker events, telemetry, and the
//!   measurements a summary is computed from.
//! - [`model_files`]: copies of the model files runs trained (`model_files`),
//!   by SHA-256: the bytes are kept as read, to be shown and compared later,
//!   never executed.
//! - [`portable`]: session files: export of a session with its runs' raw data,
//!   and all-or-nothing import; [`portable_searches`]: the searches they
//!   carry, imported as sweeps of their own with their traces.
//! - [`prices`]: the price table cost per epoch is computed from.
//! - [`provenance`]: what the studio notes of how a run was made (a run
//!   shortened in steps) in its provenance, kept when the run starts.
//! - [`query`]: `trainbench query`: one SELECT over the store's `q_` views,
//!   read only.
//! - [`remote`]: runs on remote hosts: where each one's folder is on its host
//!   and how far its journal has been read (`remote_runs`, migration 0009).
//! - [`runs`]: queueing, starting and ending runs, and reading them back.
//! - [`sessions`]: saved comparison sessions: a named set of runs with a
//!   baseline and the view's settings.
//! - [`tunes`]: a search's trace beside its sweep (`tunes`): the runs are the
//!   sweep's own rows.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection};
use trainbench_core::reference::default_prices;
mod bisections;
mod compact;
mod damaged;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
mod gates;
mod listing;
mod measurements;
mod model_files;
mod portable;
mod prices;
mod provenance;
mod query;
mod remote;
mod runs;
pub use model_files::KeptModelFile;
mod portable_searches;
mod sessions;
mod tunes;
pub use bisections::StoredBisection;
pub use compact::Compacted;
pub use damaged::{Damaged, RunList};
pub use gates::StoredGate;
pub use listing::Snapshot;
pub use portable::{hostname, ImportOutcome};
pub use prices::PriceDeletion;
pub use query::{
    query_read_only, query_read_only_each, Cell, QueryAnswer, QueryLimits, QUERY_ALLOWED,
};
pub use remote::{JournalEnd, RemoteRun};
pub use runs::{NewRun, StoredBatchSearch};
pub use sessions::LoadedComparison;
pub use trainbench_core::record::{RunDetail, RunRow, StoredEval, StoredWindow};
pub use trainbench_core::telemetry::TelemetrySample;
pub use tunes::StoredTune;

/// How long a write waits for another connection's lock before it fails as
/// busy, unless [`Store::set_busy_timeout`] says otherwise.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The embedded migrations: (version, file name, SQL).
pub const MIGRATIONS: &[(u32, &str, &str)] = &[
    (
        1,
        "0001_init.sql",
        include_str!("../../../migrations/0001_init.sql"),
    ),
    (
        2,
        "0002_first_step_parts.sql",
        include_str!("../../../migrations/0002_first_step_parts.sql"),
    ),
    (
        3,
        "0003_sessions.sql",
        include_str!("../../../migrations/0003_sessions.sql"),
    ),
    (
        4,
        "0004_gpu_checks.sql",
        include_str!("../../../migrations/0004_gpu_checks.sql"),
    ),
    (
        5,
        "0005_typed_run_columns.sql",
        include_str!("../../../migrations/0005_typed_run_columns.sql"),
    ),
    (
        6,
        "0006_step_breakdown.sql",
        include_str!("../../../migrations/0006_step_breakdown.sql"),
    ),
    (
        7,
        "0007_operator_profile.sql",
        include_str!("../../../migrations/0007_operator_profile.sql"),
    ),
    (
        8,
        "0008_batch_search.sql",
        include_str!("../../../migrations/0008_batch_search.sql"),
    ),
    (
        9,
        "0009_remote_runs.sql",
        include_str!("../../../migrations/0009_remote_runs.sql"),
    ),
    (
        10,
        "0010_telemetry_compaction.sql",
        include_str!("../../../migrations/0010_telemetry_compaction.sql"),
    ),
    (
        11,
        "0011_epoch_size.sql",
        include_str!("../../../migrations/0011_epoch_size.sql"),
    ),
    (
        12,
        "0012_bisections.sql",
        include_str!("../../../migrations/0012_bisections.sql"),
    ),
    (
        13,
        "0013_model_files.sql",
        include_str!("../../../migrations/0013_model_files.sql"),
    ),
    (
        14,
        "0014_tunes.sql",
        include_str!("../../../migrations/0014_tunes.sql"),
    ),
    (
        15,
        "0015_script_values_optional.sql",
        include_str!("../../../migrations/0015_script_values_optional.sql"),
    ),
    (
        16,
        "0016_query_views.sql",
        include_str!("../../../migrations/0016_query_views.sql"),
    ),
    (
        17,
        "0017_gates.sql",
        include_str!("../../../migrations/0017_gates.sql"),
    ),
    (
        18,
        "0018_remote_job_id.sql",
        include_str!("../../../migrations/0018_remote_job_id.sql"),
    ),
    (
        19,
        "0019_script_runs_unknown_settings.sql",
        include_str!("../../../migrations/0019_script_runs_unknown_settings.sql"),
    ),
];

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("database: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("database {path} was written by a newer TrainBench (schema {found}, this build knows up to {known}): update the studio, or choose another file")]
    TooNew {
        path: PathBuf,
        found: u32,
        known: u32,
    },
    #[error("database {path} is not a TrainBench database: the file is not a SQLite database, or it is damaged; choose another file (or move this one away and a new database is made)")]
    NotADatabase { path: PathBuf },
    #[error("database {path} belongs to another program (it holds the tables {tables}, none of TrainBench's): choose another file")]
    Foreign { path: PathBuf, tables: String },
    #[error("{what} {id} does not exist")]
    NotFound { what: &'static str, id: String },
    #[error("stored JSON is unreadable: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{field} = {value:?} is not allowed: {allowed}")]
    Invalid {
        field: &'static str,
        value: String,
        allowed: String,
    },
    #[error(transparent)]
    SessionFile(#[from] trainbench_core::session::SessionFileError),
    #[error(transparent)]
    Compare(#[from] trainbench_core::compare::CompareError),
    #[error("run {id} is {status}: finish or cancel it before deleting")]
    RunActive { id: i64, status: &'static str },
    /// A stored row holds a value this studio cannot use.
    #[error(transparent)]
    Damaged(#[from] Damaged),
}

pub type Result<T> = std::result::Result<T, StoreError>;

impl StoreError {
    fn sqlite_code(&self) -> Option<rusqlite::ErrorCode> {
        match self {
            StoreError::Sql(rusqlite::Error::SqliteFailure(e, _))
            | StoreError::Open {
                source: rusqlite::Error::SqliteFailure(e, _),
                ..
            } => Some(e.code),
            _ => None,
        }
    }

    /// Another connection holds the write lock (a long import or delete in a
    /// second process): trying again later succeeds.
    pub fn is_busy(&self) -> bool {
        matches!(
            self.sqlite_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    }

    /// The disk (or the file-size limit) is full: trying again once there is
    /// space succeeds; nothing half-written was kept.
    pub fn is_disk_full(&self) -> bool {
        matches!(self.sqlite_code(), Some(rusqlite::ErrorCode::DiskFull))
    }
}

/// A bad value with its field and what is allowed.
pub(crate) fn invalid(
    field: &'static str,
    value: impl ToString,
    allowed: impl Into<String>,
) -> StoreError {
    StoreError::Invalid {
        field,
        value: value.to_string(),
        allowed: allowed.into(),
    }
}

pub fn now_unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Brings the schema up to date, all in one write transaction taken before
/// the version is read (`BEGIN IMMEDIATE`): when several processes open a new
/// or old database at once, one migrates and the others wait, then find
/// nothing left to do. Default prices are seeded into an empty table in the
/// same transaction. A file another program made (tables, but none of ours)
/// is refused before anything is written to it.
fn apply_migrations(conn: &mut Connection, path: &Path) -> Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current = usable_schema(&tx, path)?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_unix_ms INTEGER NOT NULL)",
    )?;
    for (version, name, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
        tx.execute_batch(sql)?;
        if *version == 5 {
            runs::fill_typed_columns(&tx, None)?;
        }
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_unix_ms) VALUES (?1, ?2, ?3)",
            params![version, name, now_unix_ms()],
        )?;
    }
    let prices: i64 = tx.query_row("SELECT COUNT(*) FROM prices", [], |r| r.get(0))?;
    if prices == 0 {
        for p in default_prices() {
            prices::upsert_price_on(&tx, &p, false)?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// The schema version of a database this studio can use (0 for an empty
/// file); a file another program made (tables, but none of ours) or one from
/// a newer studio is refused. Reads only.
fn usable_schema(conn: &Connection, path: &Path) -> Result<u32> {
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if tables.is_empty() {
        return Ok(0);
    }
    if !tables.iter().any(|t| t == "schema_migrations") {
        return Err(StoreError::Foreign {
            path: path.to_owned(),
            tables: tables.join(", "),
        });
    }
    let current: u32 = conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
        [],
        |r| r.get(0),
    )?;
    let known = MIGRATIONS.last().map_or(0, |m| m.0);
    if current > known {
        return Err(StoreError::TooNew {
            path: path.to_owned(),
            found: current,
            known,
        });
    }
    Ok(current)
}

/// Sets WAL mode. Changing the journal mode needs the database to itself for
/// a moment and SQLite does not wait for that (no busy handler), so a second
/// process opening a new database at the same instant retries for a while.
fn set_wal(conn: &Connection) -> Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return Ok(other?),
        }
    }
}

/// What opening `path` failed with, said so a person knows what to do: a
/// file that is not a SQLite database (or a damaged one) is named as such.
fn open_error(path: &Path, e: StoreError) -> StoreError {
    match e {
        StoreError::Sql(rusqlite::Error::SqliteFailure(f, _))
            if matches!(
                f.code,
                rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt
            ) =>
        {
            StoreError::NotADatabase {
                path: path.to_owned(),
            }
        }
        other => other,
    }
}

fn u(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Store {
    /// Opens (creating if needed) the database at `path`: WAL mode, foreign
    /// keys on, migrations applied, default prices seeded into an empty table.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                path: path.to_owned(),
                source: rusqlite::Error::ToSqlConversionFailure(Box::new(e)),
            })?;
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Open {
            path: path.to_owned(),
            source,
        })?;
        Store::init(conn, path.to_owned())
    }

    pub fn open_in_memory() -> Result<Store> {
        Store::init(Connection::open_in_memory()?, PathBuf::from(":memory:"))
    }

    fn init(mut conn: Connection, path: PathBuf) -> Result<Store> {
        let setup = |conn: &mut Connection| -> Result<()> {
            conn.busy_timeout(BUSY_TIMEOUT)?;
            // Refused before anything is written (WAL mode changes the file).
            usable_schema(conn, &path)?;
            set_wal(conn)?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            conn.pragma_update(None, "foreign_keys", true)?;
            apply_migrations(conn, &path)
        };
        setup(&mut conn).map_err(|e| open_error(&path, e))?;
        Ok(Store { conn, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How long a write waits for another connection's lock before it fails
    /// as busy (10 s unless changed). The runner waits briefly while a worker
    /// trains, so a flush never holds up reading its output. [`BUSY_TIMEOUT`]
    /// restores the default.
    pub fn set_busy_timeout(&self, wait: std::time::Duration) -> Result<()> {
        Ok(self.conn.busy_timeout(wait)?)
    }

    pub fn schema_version(&self) -> Result<u32> {
        Ok(self
            .conn
            .query_row("SELECT MAX(version) FROM schema_migrations", [], |r| {
                r.get(0)
            })?)
    }

    /// `PRAGMA integrity_check` → "ok" on a sound file.
    pub fn integrity_check(&self) -> Result<String> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_and_match_the_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        files.sort();
        let embedded: Vec<&str> = MIGRATIONS.iter().map(|m| m.1).collect();
        assert_eq!(
            files, embedded,
            "every migration file is embedded, in order"
        );
        for (i, (version, name, _)) in MIGRATIONS.iter().enumerate() {
            assert_eq!(*version as usize, i + 1);
            assert!(name.starts_with(&format!("{version:04}_")), "{name}");
        }
    }

    #[test]
    fn migrating_an_empty_database_gives_the_latest_schema_and_is_idempotent() {
        let mut store = Store::open_in_memory().unwrap();
        assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as u32);
        apply_migrations(&mut store.conn, Path::new(":memory:")).unwrap();
        assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as u32);
        assert_eq!(store.integrity_check().unwrap(), "ok");
        assert_eq!(
            store.prices().unwrap().len(),
            trainbench_core::reference::default_prices().len(),
            "default prices seeded"
        );
    }

    #[test]
    fn runs_stored_before_the_typed_columns_get_them_and_group_with_new_runs() {
        // A database at schema 4 with two runs queued the old way: the key was
        // the person's settings as given, the spec JSON minimal.
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (
                 version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_unix_ms INTEGER NOT NULL)",
        )
        .unwrap();
        for (version, name, sql) in &MIGRATIONS[..4] {
            conn.execute_batch(sql).unwrap();
            conn.execute(
                "INSERT INTO schema_migrations VALUES (?1, ?2, 0)",
                params![version, name],
            )
            .unwrap();
        }
        let legacy = [
            (
                r#"{"environment":"nightly","framework":"pytorch","spec":{"batch_size":8,"compile":"on","devices":2,"model":"resnet_mini","parallel":"fsdp","steps":10}}"#,
                r#"{"batch_size":8,"compile":"on","devices":2,"model":"resnet_mini","parallel":"fsdp","steps":10}"#,
                2,
            ),
            (
                r#"{"environment":"nightly","framework":"pytorch","spec":{"batch_size":8,"compile":"on","devices":1,"model":"resnet_mini","steps":10}}"#,
                r#"{"batch_size":8,"compile":"on","devices":1,"model":"resnet_mini","steps":10}"#,
                1,
            ),
        ];
        for (key, spec, devices) in legacy {
            conn.execute(
                "INSERT INTO runs (config_key, framework, model, precision, device, devices, batch_size, data,
                     spec_json, status, created_unix_ms)
                 VALUES (?1, 'pytorch', 'resnet_mini', 'fp32', 'cpu', ?3, 8, 'synthetic', ?2, 'completed', 0)",
                params![key, spec, devices],
            )
            .unwrap();
        }
        apply_migrations(&mut conn, Path::new(":memory:")).unwrap();
        let store = Store {
            conn,
            path: PathBuf::from(":memory:"),
        };
        let rows = store.list_runs().unwrap();
        assert_eq!(rows[0].environment.as_deref(), Some("nightly"));
        assert_eq!(rows[0].compile, trainbench_core::spec::Compile::On);
        assert_eq!(rows[0].parallel, trainbench_core::spec::Parallel::Fsdp);
        assert_eq!(rows[1].parallel, trainbench_core::spec::Parallel::Ddp);
        assert_eq!(
            rows[0].scaling_key, rows[1].scaling_key,
            "one scaling series"
        );
        assert_ne!(rows[0].config_key, rows[1].config_key);
        // The same configuration queued now has the same keys as the old run.
        let now = trainbench_core::spec::CheckedSpec::new(
            serde_json::from_str(
                r#"{"model":"resnet_mini","batch_size":8,"steps":10,"compile":"on","precision":"fp32"}"#,
            )
            .unwrap(),
        )
        .unwrap();
        let id = store
            .insert_run(&NewRun::of_spec(
                trainbench_core::Framework::Pytorch,
                Some("nightly".into()),
                &now,
            ))
            .unwrap();
        let new = store.run_row(id).unwrap();
        assert_eq!(new.config_key, rows[1].config_key);
        assert_eq!(new.scaling_key, rows[1].scaling_key);
        assert_eq!(
            trainbench_core::compare::config_label(&new),
            trainbench_core::compare::config_label(&rows[1])
        );
    }
}

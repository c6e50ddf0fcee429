//! TrainBench's store: one SQLite file (WAL) holding every run, its timing
//! windows, evaluations, memory peaks, telemetry, summary and provenance, plus
//! the editable price table.
//!
//! Migrations are the SQL files in `migrations/` at the repository root,
//! embedded at build time, applied in order, forward-only. Every write that
//! belongs together happens in one transaction, so a crash leaves either the
//! old or the new state, never half of one.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use trainbench_core::protocol::Event;
use trainbench_core::reference::{default_prices, PriceRow};
use trainbench_core::spec::Precision;
use trainbench_core::stats::WindowTiming;
use trainbench_core::summary::{MemoryPeak, RunMeasurements, RunStatus, RunSummary};
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
mod sessions;
pub use sessions::{hostname, ImportOutcome, LoadedComparison};
pub use trainbench_core::record::{RunDetail, RunRow, StoredEval, StoredWindow};
pub use trainbench_core::telemetry::TelemetrySample;

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
    #[error("database {path} was written by a newer TrainBench (schema {found}, this build knows up to {known})")]
    TooNew {
        path: PathBuf,
        found: u32,
        known: u32,
    },
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
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// The studio's database: `$TRAINBENCH_DB`, else
/// `$XDG_DATA_HOME/trainbench/trainbench.sqlite` (`~/.local/share/…`). The CLI
/// and the desktop app use the same one unless told otherwise.
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("TRAINBENCH_DB") {
        return PathBuf::from(p);
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("trainbench").join("trainbench.sqlite")
}

pub fn now_unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A run to be queued.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub sweep_id: Option<i64>,
    pub config_key: String,
    pub repeat_index: u32,
    pub framework: String,
    pub model: String,
    pub precision: String,
    pub device: String,
    pub devices: u32,
    pub batch_size: u64,
    pub data: String,
    pub spec_json: String,
    pub price_offering: Option<String>,
}

#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

fn apply_migrations(conn: &mut Connection, path: &Path) -> Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_unix_ms INTEGER NOT NULL)",
    )?;
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
    for (version, name, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, applied_unix_ms) VALUES (?1, ?2, ?3)",
            params![version, name, now_unix_ms()],
        )?;
        tx.commit()?;
    }
    Ok(())
}

fn status_of(s: &str) -> rusqlite::Result<RunStatus> {
    RunStatus::parse(s).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            format!("unknown status {s}").into(),
        )
    })
}

const RUN_COLUMNS: &str = "r.id, r.sweep_id, r.config_key, r.repeat_index, r.framework, r.model, r.precision, r.device,
    r.devices, r.batch_size, r.data, r.status, r.status_reason, r.error_class, r.exit_code, r.created_unix_ms,
    r.started_unix_ms, r.ended_unix_ms, r.param_count, r.price_offering, s.summary_json, r.origin_json";

fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
    let status: String = r.get(11)?;
    let summary: Option<String> = r.get(20)?;
    let origin: Option<String> = r.get(21)?;
    Ok(RunRow {
        id: r.get(0)?,
        sweep_id: r.get(1)?,
        config_key: r.get(2)?,
        repeat_index: r.get(3)?,
        framework: r.get(4)?,
        model: r.get(5)?,
        precision: r.get(6)?,
        device: r.get(7)?,
        devices: r.get(8)?,
        batch_size: r.get(9)?,
        data: r.get(10)?,
        status: status_of(&status)?,
        status_reason: r.get(12)?,
        error_class: r.get(13)?,
        exit_code: r.get(14)?,
        created_unix_ms: r.get(15)?,
        started_unix_ms: r.get(16)?,
        ended_unix_ms: r.get(17)?,
        param_count: r.get(18)?,
        price_offering: r.get(19)?,
        origin: origin.and_then(|o| serde_json::from_str(&o).ok()),
        summary: summary.and_then(|s| serde_json::from_str(&s).ok()),
    })
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
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        apply_migrations(&mut conn, &path)?;
        let store = Store { conn, path };
        let prices: i64 = store
            .conn
            .query_row("SELECT COUNT(*) FROM prices", [], |r| r.get(0))?;
        if prices == 0 {
            for p in default_prices() {
                store.upsert_price(&p, false)?;
            }
        }
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
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

    /// Marks runs left `running` or `queued` by a studio process that no longer
    /// exists as `interrupted` (runs of a studio still alive are left alone).
    /// Returns how many.
    pub fn mark_interrupted(&self) -> Result<usize> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, runner_pid FROM runs WHERE status IN ('running', 'queued')")?;
        let open: Vec<(i64, Option<u32>)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let me = std::process::id();
        let mut n = 0;
        for (id, pid) in open {
            let alive = pid.is_some_and(|p| p != me && Path::new(&format!("/proc/{p}")).exists());
            if !alive {
                n += self.conn.execute(
                    "UPDATE runs SET status = 'interrupted',
                         status_reason = COALESCE(status_reason, 'the studio stopped while this run was ' || status),
                         ended_unix_ms = COALESCE(ended_unix_ms, ?2)
                     WHERE id = ?1",
                    params![id, now_unix_ms()],
                )?;
            }
        }
        Ok(n)
    }

    pub fn create_sweep(&self, command: &str, configurations: u32, repeats: u32) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO sweeps (created_unix_ms, command, configurations, repeats) VALUES (?1, ?2, ?3, ?4)",
            params![now_unix_ms(), command, configurations, repeats],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    pub fn insert_run(&self, r: &NewRun) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO runs (sweep_id, config_key, repeat_index, framework, model, precision, device, devices,
                 batch_size, data, spec_json, price_offering, status, created_unix_ms, runner_pid, uid)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'queued', ?13, ?14, lower(hex(randomblob(16))))",
            params![
                r.sweep_id,
                r.config_key,
                r.repeat_index,
                r.framework,
                r.model,
                r.precision,
                r.device,
                r.devices,
                u(r.batch_size),
                r.data,
                r.spec_json,
                r.price_offering,
                now_unix_ms(),
                std::process::id()
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    pub fn start_run(&self, id: i64, provenance: &serde_json::Value) -> Result<()> {
        let n = self.conn.execute(
            "UPDATE runs SET status = 'running', started_unix_ms = ?2, provenance_json = ?3 WHERE id = ?1",
            params![id, now_unix_ms(), provenance.to_string()],
        )?;
        if n == 0 {
            return Err(StoreError::NotFound {
                what: "run",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    /// Stores a batch of worker events and telemetry samples in one transaction.
    pub fn record(
        &mut self,
        id: i64,
        events: &[Event],
        telemetry: &[TelemetrySample],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        for e in events {
            record_event(&tx, id, e)?;
        }
        if !telemetry.is_empty() {
            let mut stmt = tx.prepare_cached(
                "INSERT OR REPLACE INTO telemetry (run_id, t_ns, source, cpu_percent, rss_bytes, host_cpu_percent,
                     mem_used_bytes, util_percent, power_w, energy_mj, sm_clock_mhz, mem_clock_mhz, throttle_reasons,
                     other_processes)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?;
            for t in telemetry {
                stmt.execute(params![
                    id,
                    u(t.t_ns),
                    t.source,
                    t.cpu_percent,
                    t.rss_bytes.map(u),
                    t.host_cpu_percent,
                    t.mem_used_bytes.map(u),
                    t.util_percent,
                    t.power_w,
                    t.energy_mj.map(u),
                    t.sm_clock_mhz,
                    t.mem_clock_mhz,
                    t.throttle_reasons.map(u),
                    t.other_processes,
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Ends a run with its status and why.
    pub fn finish_run(
        &self,
        id: i64,
        status: RunStatus,
        reason: Option<&str>,
        error_class: Option<&str>,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> Result<()> {
        self.conn.execute(
            "UPDATE runs SET status = ?2, status_reason = ?3, error_class = ?4, exit_code = ?5, stderr_tail = ?6,
                 ended_unix_ms = ?7 WHERE id = ?1",
            params![id, status.as_str(), reason, error_class, exit_code, stderr_tail, now_unix_ms()],
        )?;
        Ok(())
    }

    pub fn save_summary(&self, id: i64, summary: &RunSummary) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO summaries (run_id, computed_unix_ms, summary_json) VALUES (?1, ?2, ?3)",
            params![id, now_unix_ms(), serde_json::to_string(summary)?],
        )?;
        Ok(())
    }

    pub fn list_runs(&self) -> Result<Vec<RunRow>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs r LEFT JOIN summaries s ON s.run_id = r.id ORDER BY r.id"
        ))?;
        let rows = stmt
            .query_map([], run_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    pub fn run_row(&self, id: i64) -> Result<RunRow> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs r LEFT JOIN summaries s ON s.run_id = r.id WHERE r.id = ?1"),
                params![id],
                run_row,
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound { what: "run", id: id.to_string() })
    }

    pub fn run_detail(&self, id: i64) -> Result<RunDetail> {
        let row = self.run_row(id)?;
        type Texts = (String, Option<String>, Option<String>, Option<String>);
        type Figures = (Option<f64>, Option<f64>, Option<f64>);
        let ((spec, hello, provenance, stderr_tail), (first_step_train_s, compile_s, loss_scale)): (
            Texts,
            Figures,
        ) = self.conn.query_row(
            "SELECT spec_json, hello_json, provenance_json, stderr_tail, first_step_train_s, compile_s, loss_scale
             FROM runs WHERE id = ?1",
            params![id],
            |r| {
                Ok((
                    (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?),
                    (r.get(4)?, r.get(5)?, r.get(6)?),
                ))
            },
        )?;
        let telemetry_samples: u64 = self.conn.query_row(
            "SELECT COUNT(*) FROM telemetry WHERE run_id = ?1",
            params![id],
            |r| r.get(0),
        )?;
        Ok(RunDetail {
            row,
            spec: serde_json::from_str(&spec)?,
            hello: hello.map(|h| serde_json::from_str(&h)).transpose()?,
            provenance: provenance.map(|p| serde_json::from_str(&p)).transpose()?,
            stderr_tail,
            first_step_train_s,
            compile_s,
            loss_scale,
            windows: self.windows(id)?,
            evals: self.evals(id)?,
            memory: self.memory(id)?,
            telemetry_samples,
        })
    }

    pub fn windows(&self, id: i64) -> Result<Vec<StoredWindow>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT idx, first_step, steps, samples, start_ns, end_ns, loss_mean, lr FROM windows WHERE run_id = ?1 ORDER BY idx",
        )?;
        let rows = stmt
            .query_map(params![id], |r| {
                Ok(StoredWindow {
                    index: r.get(0)?,
                    first_step: r.get(1)?,
                    steps: r.get(2)?,
                    samples: r.get(3)?,
                    start_ns: r.get(4)?,
                    end_ns: r.get(5)?,
                    loss_mean: r.get(6)?,
                    lr: r.get(7)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    pub fn evals(&self, id: i64) -> Result<Vec<StoredEval>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT step, epoch, elapsed_s, accuracy, loss FROM evals WHERE run_id = ?1 ORDER BY step",
        )?;
        let rows = stmt
            .query_map(params![id], |r| {
                Ok(StoredEval {
                    step: r.get(0)?,
                    epoch: r.get(1)?,
                    elapsed_s: r.get(2)?,
                    accuracy: r.get(3)?,
                    loss: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    pub fn memory(&self, id: i64) -> Result<Vec<MemoryPeak>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT device, source, peak_bytes FROM memory_peaks WHERE run_id = ?1 ORDER BY device, source")?;
        let rows = stmt
            .query_map(params![id], |r| {
                Ok(MemoryPeak {
                    device: r.get(0)?,
                    source: r.get(1)?,
                    peak_bytes: r.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Peak of the worker's RSS as the runner sampled it (a second, independent
    /// view beside the worker's own VmHWM).
    pub fn sampled_peak_rss(&self, id: i64) -> Result<Option<u64>> {
        Ok(self.conn.query_row(
            "SELECT MAX(rss_bytes) FROM telemetry WHERE run_id = ?1 AND source = 'host'",
            params![id],
            |r| r.get(0),
        )?)
    }

    /// What a summary needs, read back from the stored run.
    pub fn measurements(&self, id: i64) -> Result<RunMeasurements> {
        let (spec, hello, first_step_s, price, price_json): (
            String,
            Option<String>,
            Option<f64>,
            Option<String>,
            Option<String>,
        ) = self.conn.query_row(
            "SELECT spec_json, hello_json, first_step_s, price_offering, price_json FROM runs WHERE id = ?1",
            params![id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
        // An imported run keeps the price row it was costed with.
        let price = match price_json {
            Some(p) => Some(serde_json::from_str::<PriceRow>(&p)?),
            None => price.map(|p| self.price(&p)).transpose()?.flatten(),
        };
        let spec: serde_json::Value = serde_json::from_str(&spec)?;
        let hello: Option<serde_json::Value> =
            hello.map(|h| serde_json::from_str(&h)).transpose()?;
        let row = self.run_row(id)?;
        let windows: Vec<WindowTiming> = self
            .windows(id)?
            .iter()
            .map(|w| WindowTiming {
                samples: w.samples,
                start_ns: w.start_ns,
                end_ns: w.end_ns,
            })
            .collect();
        let data = hello.as_ref().and_then(|h| h.get("data"));
        let real_epoch_samples = data
            .filter(|d| d.get("source").and_then(|s| s.as_str()) != Some("synthetic"))
            .and_then(|d| d.get("samples_per_epoch"))
            .and_then(|v| v.as_u64());
        let mut memory = self.memory(id)?;
        if let Some(rss) = self.sampled_peak_rss(id)? {
            if !memory.iter().any(|m| m.source == "process_rss") {
                memory.push(MemoryPeak {
                    device: "cpu".into(),
                    source: "process_rss_sampled".into(),
                    peak_bytes: rss,
                });
            }
        }
        Ok(RunMeasurements {
            param_count: row.param_count,
            flops_per_sample: hello
                .as_ref()
                .and_then(|h| h.get("flops_per_sample"))
                .and_then(|v| v.as_f64()),
            batch_size: row.batch_size,
            devices: row.devices,
            precision: Precision::parse(&row.precision).ok(),
            real_epoch_samples,
            windows,
            first_step_s,
            evals: self
                .evals(id)?
                .iter()
                .map(|e| (e.elapsed_s, e.accuracy))
                .collect(),
            target_accuracy: spec.get("target_accuracy").and_then(|v| v.as_f64()),
            memory,
            gpu: None,
            device_name: None,
            device_peak: None,
            price,
        })
    }

    pub fn prices(&self) -> Result<Vec<(PriceRow, bool)>> {
        let mut stmt = self.conn.prepare(
            "SELECT offering, devices, device, usd_per_hour, usd_per_device_hour, as_of, source, edited_by_user
             FROM prices ORDER BY offering",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    PriceRow {
                        offering: r.get(0)?,
                        devices: r.get(1)?,
                        device: r.get(2)?,
                        usd_per_hour: r.get(3)?,
                        usd_per_device_hour: r.get(4)?,
                        as_of: r.get(5)?,
                        source: r.get(6)?,
                    },
                    r.get::<_, bool>(7)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    pub fn price(&self, offering: &str) -> Result<Option<PriceRow>> {
        Ok(self
            .prices()?
            .into_iter()
            .map(|p| p.0)
            .find(|p| p.offering == offering))
    }

    pub fn upsert_price(&self, p: &PriceRow, by_user: bool) -> Result<()> {
        self.conn.execute(
            "INSERT INTO prices (offering, devices, device, usd_per_hour, usd_per_device_hour, as_of, source, edited_by_user)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (offering) DO UPDATE SET devices = ?2, device = ?3, usd_per_hour = ?4,
                 usd_per_device_hour = ?5, as_of = ?6, source = ?7, edited_by_user = ?8",
            params![p.offering, p.devices, p.device, p.usd_per_hour, p.usd_per_device_hour, p.as_of, p.source, by_user],
        )?;
        Ok(())
    }
}

fn record_event(tx: &Transaction<'_>, id: i64, e: &Event) -> Result<()> {
    match e {
        Event::Hello {
            param_count,
            flops_per_sample,
            train_start_ns,
            ..
        } => {
            tx.execute(
                "UPDATE runs SET hello_json = ?2, param_count = ?3, flops_per_sample = ?4, train_start_ns = ?5 WHERE id = ?1",
                params![id, serde_json::to_string(e)?, u(*param_count), flops_per_sample, u(*train_start_ns)],
            )?;
        }
        Event::FirstStep {
            since_process_start_s,
            since_train_start_s,
            compile_s,
            ..
        } => {
            tx.execute(
                "UPDATE runs SET first_step_s = ?2, first_step_train_s = ?3, compile_s = ?4 WHERE id = ?1",
                params![id, since_process_start_s, since_train_start_s, compile_s],
            )?;
        }
        Event::Window {
            index,
            first_step,
            steps,
            samples,
            start_ns,
            end_ns,
            loss_mean,
            lr,
        } => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO windows (run_id, idx, first_step, steps, samples, start_ns, end_ns, loss_mean, lr)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![id, u(*index), u(*first_step), u(*steps), u(*samples), u(*start_ns), u(*end_ns), loss_mean, lr])?;
        }
        Event::Eval {
            step,
            epoch,
            elapsed_s,
            accuracy,
            loss,
            samples,
            t_ns,
        } => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO evals (run_id, step, epoch, elapsed_s, accuracy, loss, samples, t_ns)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![id, u(*step), epoch, elapsed_s, accuracy, loss, u(*samples), u(*t_ns)])?;
        }
        Event::Memory {
            device,
            source,
            peak_bytes,
            reserved_peak_bytes,
        } => {
            tx.execute(
                "INSERT OR REPLACE INTO memory_peaks (run_id, device, source, peak_bytes, reserved_peak_bytes)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, device, source, u(*peak_bytes), reserved_peak_bytes.map(u)],
            )?;
        }
        Event::Done {
            reason, loss_scale, ..
        } => {
            tx.execute(
                "UPDATE runs SET done_reason = ?2, loss_scale = ?3 WHERE id = ?1",
                params![id, reason, loss_scale],
            )?;
        }
        Event::Error { class, message, .. } => {
            tx.execute(
                "UPDATE runs SET error_class = ?2, status_reason = ?3 WHERE id = ?1",
                params![id, class.as_str(), message],
            )?;
        }
    }
    Ok(())
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
        assert_eq!(store.prices().unwrap().len(), 5, "default prices seeded");
    }
}

//! Runs: queueing, starting and ending them, and reading them back.

use std::path::Path;

use rusqlite::{params, OptionalExtension, Transaction};
use trainbench_core::batch_search::{BatchProbe, ProbeOutcome};
use trainbench_core::record::{MeasuredOn, RunDetail, RunRow};
use trainbench_core::spec::{
    CheckedSpec, Compile, ConfigKeys, DataSource, Device, Framework, Parallel, Precision, RunSpec,
    SpecError,
};
use trainbench_core::summary::{RunStatus, RunSummary};

use crate::damaged::{self, Damaged, Expected};
use crate::{invalid, now_unix_ms, u, Result, Store, StoreError};

/// A run to be queued: its configuration as typed values and the keys it is
/// grouped by.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub sweep_id: Option<i64>,
    pub keys: ConfigKeys,
    pub repeat_index: u32,
    pub framework: Framework,
    /// A registered environment of a Python framework; `None`: its own.
    pub environment: Option<String>,
    pub model: String,
    pub precision: Precision,
    pub compile: Compile,
    pub device: Device,
    pub devices: u32,
    pub parallel: Parallel,
    pub batch_size: u64,
    pub data: DataSource,
    /// The spec as the worker reads it.
    pub spec_json: String,
    pub price_offering: Option<String>,
    /// Samples in the epoch cost per epoch is priced for, when one was asked.
    pub epoch_samples: Option<u64>,
    /// The batch search its batch came from (`--batch-size max`).
    pub batch_search: Option<String>,
}

/// A stored batch search (`--batch-size max`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoredBatchSearch {
    pub sweep_id: i64,
    /// The configuration searched, batch left out.
    pub search: String,
    pub memory_limit_bytes: Option<u64>,
    pub probes: Vec<BatchProbe>,
}

impl NewRun {
    /// The run of `spec` (validated from `raw`) with `framework` in
    /// `environment`, outside any sweep, unpriced, repeat 0.
    pub fn of_spec(
        framework: Framework,
        environment: Option<String>,
        checked: &CheckedSpec,
    ) -> NewRun {
        let spec = &checked.spec;
        NewRun {
            sweep_id: None,
            keys: ConfigKeys::of(framework, environment.as_deref(), spec),
            repeat_index: 0,
            framework,
            environment,
            // `--model-name` where given: runs named alike compare as one model.
            model: checked
                .raw
                .model_name
                .clone()
                .unwrap_or_else(|| spec.row_model()),
            precision: spec.precision,
            compile: spec.compile,
            device: spec.device,
            // Every device of the run, on all its nodes (throughput per
            // device, MFU and scaling count them all).
            devices: spec.world_size(),
            parallel: spec.parallel,
            batch_size: spec.batch_size,
            data: spec.data,
            spec_json: checked.raw.to_json(),
            price_offering: None,
            epoch_samples: None,
            batch_search: None,
        }
    }
}

/// A stored text that must be one of a typed setting's values.
fn typed<T>(
    column: usize,
    text: &str,
    parse: impl Fn(&str) -> std::result::Result<T, SpecError>,
) -> rusqlite::Result<T> {
    parse(text).map_err(|e| unusable(column, e.allowed))
}

/// The row's reader's error for a stored value of `column` that does not
/// parse, with what is allowed there ([`damaged::of`] names the column).
fn unusable(column: usize, expected: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        column,
        rusqlite::types::Type::Text,
        Box::new(Expected(expected)),
    )
}

fn status_of(s: &str) -> rusqlite::Result<RunStatus> {
    RunStatus::parse(s).ok_or_else(|| {
        unusable(
            11,
            "a run status (queued, running, completed, failed, cancelled, timeout, interrupted)"
                .into(),
        )
    })
}

pub(crate) const RUN_COLUMNS: &str = "r.id, r.sweep_id, r.config_key, r.repeat_index, r.framework, r.model, r.precision, r.device,
    r.devices, r.batch_size, r.data, r.status, r.status_reason, r.error_class, r.exit_code, r.created_unix_ms,
    r.started_unix_ms, r.ended_unix_ms, r.param_count, r.price_offering, s.summary_json, r.origin_json,
    r.scaling_key, r.environment, r.compile, r.parallel,
    CASE WHEN json_valid(r.provenance_json) THEN json_extract(r.provenance_json, '$.hostname') END,
    CASE WHEN json_valid(r.provenance_json) THEN json_extract(r.provenance_json, '$.gpus[0].name') END,
    CASE WHEN json_valid(r.hello_json) THEN json_extract(r.hello_json, '$.framework_version') END,
    CASE WHEN json_valid(r.spec_json) THEN json_extract(r.spec_json, '$.env') END,
    CASE WHEN json_valid(r.spec_json) THEN json_extract(r.spec_json, '$.threads') END,
    CASE WHEN json_valid(r.spec_json) THEN json_extract(r.spec_json, '$.cudnn_benchmark') END";

/// A JSON value read out of a stored document: text as it is, a number or
/// anything else as its JSON text, nothing as `None`.
fn text_of(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(x) => Some(x.to_string()),
        ValueRef::Blob(_) => None,
    })
}

fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
    let status: String = r.get(11)?;
    let summary: Option<String> = r.get(20)?;
    let origin: Option<String> = r.get(21)?;
    Ok(RunRow {
        id: r.get(0)?,
        sweep_id: r.get(1)?,
        config_key: r.get(2)?,
        scaling_key: r.get(22)?,
        repeat_index: r.get(3)?,
        framework: typed(4, &r.get::<_, String>(4)?, Framework::parse)?,
        environment: r.get(23)?,
        model: r.get(5)?,
        precision: typed(6, &r.get::<_, String>(6)?, Precision::parse)?,
        compile: typed(24, &r.get::<_, String>(24)?, Compile::parse)?,
        device: typed(7, &r.get::<_, String>(7)?, Device::parse)?,
        devices: r.get(8)?,
        parallel: typed(25, &r.get::<_, String>(25)?, Parallel::parse)?,
        batch_size: r.get(9)?,
        data: typed(10, &r.get::<_, String>(10)?, DataSource::parse)?,
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
        measured_on: MeasuredOn {
            hostname: text_of(r, 26)?,
            gpu: text_of(r, 27)?,
            framework_version: text_of(r, 28)?,
        },
        summary: summary
            .map(|s| serde_json::from_str(&s))
            .transpose()
            .map_err(|e| unusable(20, format!("a run summary this studio can read ({e})")))?,
        env: text_of(r, 29)?
            .and_then(|e| serde_json::from_str(&e).ok())
            .unwrap_or_default(),
        threads: text_of(r, 30)?.and_then(|t| t.parse().ok()),
        // SQLite's JSON booleans come back as 1 and 0.
        cudnn_benchmark: text_of(r, 31)?.map(|b| b == "1" || b == "true"),
    })
}

/// Run `id`'s row, or the column at fault when a stored value cannot be
/// used; `Err` only for an error of the database itself.
pub(crate) fn checked_row(
    r: &rusqlite::Row<'_>,
) -> rusqlite::Result<std::result::Result<RunRow, Damaged>> {
    let id: i64 = r.get(0)?;
    match run_row(r) {
        Ok(row) => Ok(Ok(row)),
        Err(e) => damaged::of(r, id, &e).map(Err).ok_or(e),
    }
}

impl Store {
    /// Marks runs left `running` or `queued` by a studio process that no longer
    /// exists as `interrupted` (runs of a studio still alive are left alone).
    /// Returns how many.
    pub fn mark_interrupted(&self) -> Result<usize> {
        // A run on a remote host may still be training there: it waits for
        // `attach`, not marked.
        let mut stmt = self.conn.prepare(
            "SELECT id, runner_pid FROM runs WHERE status IN ('running', 'queued')
                 AND id NOT IN (SELECT run_id FROM remote_runs WHERE finished = 0)",
        )?;
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
            "INSERT INTO runs (sweep_id, config_key, scaling_key, repeat_index, framework, environment, model,
                 precision, compile, device, devices, parallel, batch_size, data, spec_json, price_offering, status,
                 created_unix_ms, runner_pid, uid, batch_search, epoch_samples)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, 'queued', ?17, ?18,
                 lower(hex(randomblob(16))), ?19, ?20)",
            params![
                r.sweep_id,
                r.keys.config,
                r.keys.scaling,
                r.repeat_index,
                r.framework.as_str(),
                r.environment,
                r.model,
                r.precision.as_str(),
                r.compile.as_str(),
                r.device.to_string(),
                r.devices,
                r.parallel.as_str(),
                u(r.batch_size),
                r.data.as_str(),
                r.spec_json,
                r.price_offering,
                now_unix_ms(),
                std::process::id(),
                r.batch_search,
                r.epoch_samples.map(u)
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Stores one probe of a batch search (`--batch-size max`) of `sweep`.
    pub fn insert_batch_probe(
        &self,
        sweep: i64,
        search: &str,
        memory_limit_bytes: Option<u64>,
        p: &BatchProbe,
    ) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO batch_probes (sweep_id, search, batch_size, outcome, peak_memory_bytes, peak_memory_source,
                 seconds, reason, memory_limit_bytes, created_unix_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                sweep,
                search,
                p.batch_size,
                p.outcome.as_str(),
                p.peak_memory_bytes.map(u),
                p.peak_memory_source,
                p.seconds,
                p.reason,
                memory_limit_bytes.map(u),
                now_unix_ms()
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The batch search a run's batch came from: its key, the memory limit
    /// and its probes in the order they ran; `None` for a batch that was given.
    pub fn batch_search_of_run(&self, run_id: i64) -> Result<Option<StoredBatchSearch>> {
        let found: Option<(Option<i64>, Option<String>)> = self
            .conn
            .query_row(
                "SELECT sweep_id, batch_search FROM runs WHERE id = ?1",
                params![run_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((sweep, search)) = found else {
            return Err(StoreError::NotFound {
                what: "run",
                id: run_id.to_string(),
            });
        };
        let (Some(sweep), Some(search)) = (sweep, search) else {
            return Ok(None);
        };
        self.batch_search(sweep, &search).map(Some)
    }

    /// The probes of the search `search` in `sweep`, in the order they ran.
    pub fn batch_search(&self, sweep: i64, search: &str) -> Result<StoredBatchSearch> {
        let mut stmt = self.conn.prepare(
            "SELECT batch_size, outcome, peak_memory_bytes, peak_memory_source, seconds, reason, memory_limit_bytes
             FROM batch_probes WHERE sweep_id = ?1 AND search = ?2 ORDER BY id",
        )?;
        let mut limit = None;
        let mut probes = Vec::new();
        let mut rows = stmt.query(params![sweep, search])?;
        while let Some(r) = rows.next()? {
            let outcome: String = r.get(1)?;
            let peak: Option<i64> = r.get(2)?;
            let l: Option<i64> = r.get(6)?;
            limit = limit.or(l.map(|x| x as u64));
            probes.push(BatchProbe {
                batch_size: r.get::<_, i64>(0)? as u32,
                outcome: ProbeOutcome::parse(&outcome).ok_or_else(|| {
                    invalid(
                        "outcome",
                        &outcome,
                        "fits, out_of_memory, over_limit or failed",
                    )
                })?,
                peak_memory_bytes: peak.map(|x| x as u64),
                peak_memory_source: r.get(3)?,
                seconds: r.get(4)?,
                reason: r.get(5)?,
            });
        }
        Ok(StoredBatchSearch {
            sweep_id: sweep,
            search: search.to_owned(),
            memory_limit_bytes: limit,
            probes,
        })
    }

    /// Marks run `id` running with the machine's `provenance`; keys noted
    /// before it started (`note_provenance`) are kept beside it.
    pub fn start_run(&self, id: i64, provenance: &serde_json::Value) -> Result<()> {
        let provenance = self.with_noted_provenance(id, provenance)?;
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

    /// How many runs are stored (without reading them).
    pub fn run_count(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    pub fn run_row(&self, id: i64) -> Result<RunRow> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs r LEFT JOIN summaries s ON s.run_id = r.id WHERE r.id = ?1"),
                params![id],
                checked_row,
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound { what: "run", id: id.to_string() })?
            .map_err(StoreError::Damaged)
    }

    pub fn run_detail(&self, id: i64) -> Result<RunDetail> {
        let row = self.run_row(id)?;
        type Texts = (String, Option<String>, Option<String>, Option<String>);
        type Figures = (Option<f64>, Option<f64>, Option<f64>);
        type Later = (Option<String>, Option<String>, Option<String>);
        let (
            (spec, hello, provenance, stderr_tail),
            (first_step_train_s, compile_s, loss_scale),
            (step_timings, compiles, profile),
        ): (Texts, Figures, Later) = self.conn.query_row(
            "SELECT spec_json, hello_json, provenance_json, stderr_tail, first_step_train_s, compile_s, loss_scale,
                    step_timings_json, compiles_json, profile_json
             FROM runs WHERE id = ?1",
            params![id],
            |r| {
                Ok((
                    (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?),
                    (r.get(4)?, r.get(5)?, r.get(6)?),
                    (r.get(7)?, r.get(8)?, r.get(9)?),
                ))
            },
        )?;
        let (telemetry_samples, telemetry_raw_samples): (u64, Option<u64>) = self.conn.query_row(
            "SELECT (SELECT COUNT(*) FROM telemetry WHERE run_id = ?1), telemetry_raw_samples FROM runs WHERE id = ?1",
            params![id],
            |r| Ok((r.get(0)?, r.get(1)?)),
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
            step_timings: step_timings.map(|t| serde_json::from_str(&t)).transpose()?,
            compiles: compiles.map(|c| serde_json::from_str(&c)).transpose()?,
            profile: profile.map(|p| serde_json::from_str(&p)).transpose()?,
            windows: self.windows(id)?,
            evals: self.evals(id)?,
            memory: self.memory(id)?,
            telemetry_samples,
            telemetry_raw_samples,
        })
    }

    /// Deletes finished runs with everything stored about them (sessions lose
    /// them). Refuses, deleting nothing, when one is queued or running or does
    /// not exist.
    pub fn delete_runs(&mut self, ids: &[i64]) -> Result<usize> {
        let tx = self.conn.transaction()?;
        for id in ids {
            let status: Option<String> = tx
                .query_row("SELECT status FROM runs WHERE id = ?1", params![id], |r| {
                    r.get(0)
                })
                .optional()?;
            let status = status.ok_or_else(|| StoreError::NotFound {
                what: "run",
                id: id.to_string(),
            })?;
            let status = status_of(&status)?;
            if matches!(status, RunStatus::Queued | RunStatus::Running) {
                return Err(StoreError::RunActive {
                    id: *id,
                    status: status.as_str(),
                });
            }
            tx.execute("DELETE FROM runs WHERE id = ?1", params![id])?;
        }
        tx.commit()?;
        Ok(ids.len())
    }
}

/// The typed configuration columns of a run stored before they existed, or
/// imported from a session file (which carries only the config key and spec).
struct LegacyConfig {
    environment: Option<String>,
    compile: Compile,
    parallel: Parallel,
    keys: ConfigKeys,
}

/// From the run's spec when it still validates (canonical keys, so old and new
/// runs of one configuration group together); else from the key it was stored
/// with, whose shape (`{"framework", "environment", "spec": {…}}`) every
/// version of the studio wrote.
fn legacy_config(framework: &str, config_key: &str, spec_json: &str) -> LegacyConfig {
    let key: serde_json::Value = serde_json::from_str(config_key).unwrap_or_default();
    let environment = key["environment"].as_str().map(str::to_owned);
    if let (Ok(f), Ok(spec)) = (Framework::parse(framework), RunSpec::from_json(spec_json)) {
        return LegacyConfig {
            keys: ConfigKeys::of(f, environment.as_deref(), &spec),
            compile: spec.compile,
            parallel: spec.parallel,
            environment,
        };
    }
    let setting = |name: &str| key["spec"][name].as_str().map(str::to_owned);
    let compile = setting("compile")
        .and_then(|c| Compile::parse(&c).ok())
        .unwrap_or(Compile::Off);
    let parallel = setting("parallel")
        .and_then(|p| Parallel::parse(&p).ok())
        .unwrap_or(Parallel::Ddp);
    let mut stripped = key.clone();
    let scaling = match stripped.get_mut("spec").and_then(|s| s.as_object_mut()) {
        Some(spec) => {
            spec.remove("devices");
            spec.remove("parallel");
            stripped.to_string()
        }
        None => config_key.to_owned(),
    };
    LegacyConfig {
        environment,
        compile,
        parallel,
        keys: ConfigKeys {
            config: config_key.to_owned(),
            scaling,
        },
    }
}

/// Fills the typed configuration columns and keys of run `only` (every run
/// when `None`) from its stored key and spec; see [`legacy_config`].
pub(crate) fn fill_typed_columns(tx: &Transaction<'_>, only: Option<i64>) -> Result<()> {
    let rows: Vec<(i64, String, String, String)> = tx
        .prepare(
            "SELECT id, framework, config_key, spec_json FROM runs WHERE ?1 IS NULL OR id = ?1",
        )?
        .query_map(params![only], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut update = tx.prepare(
        "UPDATE runs SET environment = ?2, compile = ?3, parallel = ?4, config_key = ?5, scaling_key = ?6
         WHERE id = ?1",
    )?;
    for (id, framework, key, spec) in rows {
        let c = legacy_config(&framework, &key, &spec);
        update.execute(params![
            id,
            c.environment,
            c.compile.as_str(),
            c.parallel.as_str(),
            c.keys.config,
            c.keys.scaling
        ])?;
    }
    Ok(())
}

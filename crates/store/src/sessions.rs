//! Saved comparison sessions, deleting runs, and session files: export of a
//! session with its runs' raw data, and all-or-nothing import.

use rusqlite::{params, OptionalExtension, Transaction};
use trainbench_core::compare::{compare, Comparison, Grouping};
use trainbench_core::record::{RunDetail, RunOrigin};
use trainbench_core::reference::PriceRow;
use trainbench_core::session::{
    check_session_name, MachineInfo, PortableEval, PortableMemory, PortableRun, PortableSession,
    SavedSession, SessionFile, SessionSettings, SESSION_FORMAT, SESSION_VERSION,
};
use trainbench_core::summary::RunStatus;
use trainbench_core::telemetry::TelemetrySample;

use crate::{now_unix_ms, status_of, u, Result, Store, StoreError};

/// What an import did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ImportOutcome {
    pub session_id: i64,
    pub session_name: String,
    /// `false` when the file's session was already here (nothing changed).
    pub session_created: bool,
    pub runs_imported: usize,
    /// Runs of the file that were already in this database (by uid).
    pub runs_already_present: usize,
}

fn invalid(field: &'static str, value: impl ToString, allowed: impl Into<String>) -> StoreError {
    StoreError::Invalid {
        field,
        value: value.to_string(),
        allowed: allowed.into(),
    }
}

/// This machine's host name, for provenance in exported files.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown host".into())
}

fn session_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(SavedSession, String)> {
    let settings: String = r.get(4)?;
    Ok((
        SavedSession {
            id: r.get(0)?,
            uid: r.get(1)?,
            name: r.get(2)?,
            run_ids: Vec::new(),
            baseline_run_id: r.get(3)?,
            settings: SessionSettings::default(),
            created_unix_ms: r.get(5)?,
            updated_unix_ms: r.get(6)?,
            imported_from: r.get(7)?,
        },
        settings,
    ))
}

const SESSION_COLUMNS: &str = "id, uid, name, baseline_run_id, settings_json, created_unix_ms, updated_unix_ms, imported_from";

fn check_runs_exist(tx: &Transaction<'_>, run_ids: &[i64]) -> Result<()> {
    if run_ids.is_empty() {
        return Err(invalid("runs", "", "expected at least one run"));
    }
    let mut seen = std::collections::HashSet::new();
    for id in run_ids {
        if !seen.insert(id) {
            return Err(invalid("runs", id, "each run once"));
        }
        let exists: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM runs WHERE id = ?1)",
            params![id],
            |r| r.get(0),
        )?;
        if !exists {
            return Err(StoreError::NotFound {
                what: "run",
                id: id.to_string(),
            });
        }
    }
    Ok(())
}

fn set_session_runs(tx: &Transaction<'_>, session_id: i64, run_ids: &[i64]) -> Result<()> {
    tx.execute(
        "DELETE FROM session_runs WHERE session_id = ?1",
        params![session_id],
    )?;
    for (pos, id) in run_ids.iter().enumerate() {
        tx.execute(
            "INSERT INTO session_runs (session_id, run_id, position) VALUES (?1, ?2, ?3)",
            params![session_id, id, pos as i64],
        )?;
    }
    Ok(())
}

fn check_baseline(run_ids: &[i64], baseline: Option<i64>) -> Result<()> {
    match baseline {
        Some(b) if !run_ids.contains(&b) => {
            Err(invalid("baseline", b, "expected one of the session's runs"))
        }
        _ => Ok(()),
    }
}

fn name_taken(tx: &Transaction<'_>, name: &str, except: Option<i64>) -> Result<bool> {
    Ok(tx
        .query_row(
            "SELECT id FROM sessions WHERE name = ?1",
            params![name],
            |r| r.get::<_, i64>(0),
        )
        .optional()?
        .is_some_and(|id| Some(id) != except))
}

/// A comparison with everything needed to show or report it.
#[derive(Debug, Clone)]
pub struct LoadedComparison {
    pub comparison: Comparison,
    /// Every compared run in full, in the order given.
    pub runs: Vec<RunDetail>,
    /// The price rows the runs' costs used (each once).
    pub prices: Vec<PriceRow>,
}

impl Store {
    /// Loads runs and compares them (see [`trainbench_core::compare::compare`]).
    pub fn load_comparison(
        &self,
        run_ids: &[i64],
        grouping: Grouping,
        baseline: Option<i64>,
    ) -> Result<LoadedComparison> {
        let runs = run_ids
            .iter()
            .map(|id| self.run_detail(*id))
            .collect::<Result<Vec<_>>>()?;
        let rows: Vec<_> = runs.iter().map(|r| r.row.clone()).collect();
        let comparison = compare(&rows, grouping, baseline)?;
        let mut prices: Vec<PriceRow> = Vec::new();
        for id in run_ids {
            let price_json: Option<String> = self.conn.query_row(
                "SELECT COALESCE(r.price_json, (SELECT json_object('offering', p.offering, 'devices', p.devices,
                     'device', p.device, 'usd_per_hour', p.usd_per_hour, 'usd_per_device_hour', p.usd_per_device_hour,
                     'as_of', p.as_of, 'source', p.source) FROM prices p WHERE p.offering = r.price_offering))
                 FROM runs r WHERE r.id = ?1",
                params![id],
                |r| r.get(0),
            )?;
            if let Some(p) = price_json {
                let p: PriceRow = serde_json::from_str(&p)?;
                if !prices.contains(&p) {
                    prices.push(p);
                }
            }
        }
        Ok(LoadedComparison {
            comparison,
            runs,
            prices,
        })
    }

    /// This database's random machine id (created by migration 3).
    pub fn machine_id(&self) -> Result<String> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'machine_id'", [], |r| {
                r.get(0)
            })?)
    }

    /// Saves a new session. Its name must be unused; its runs must exist.
    pub fn save_session(
        &mut self,
        name: &str,
        run_ids: &[i64],
        baseline: Option<i64>,
        settings: &SessionSettings,
    ) -> Result<SavedSession> {
        check_session_name(name)?;
        check_baseline(run_ids, baseline)?;
        let tx = self.conn.transaction()?;
        check_runs_exist(&tx, run_ids)?;
        if name_taken(&tx, name, None)? {
            return Err(invalid("name", name, "a name no other session has"));
        }
        let now = now_unix_ms();
        tx.execute(
            "INSERT INTO sessions (uid, name, baseline_run_id, settings_json, created_unix_ms, updated_unix_ms)
             VALUES (lower(hex(randomblob(16))), ?1, ?2, ?3, ?4, ?4)",
            params![name, baseline, serde_json::to_string(settings)?, now],
        )?;
        let id = tx.last_insert_rowid();
        set_session_runs(&tx, id, run_ids)?;
        tx.commit()?;
        self.session(id)
    }

    /// Replaces a session's runs, baseline and chart settings.
    pub fn update_session(
        &mut self,
        id: i64,
        run_ids: &[i64],
        baseline: Option<i64>,
        settings: &SessionSettings,
    ) -> Result<SavedSession> {
        check_baseline(run_ids, baseline)?;
        self.session(id)?;
        let tx = self.conn.transaction()?;
        check_runs_exist(&tx, run_ids)?;
        tx.execute(
            "UPDATE sessions SET baseline_run_id = ?2, settings_json = ?3, updated_unix_ms = ?4 WHERE id = ?1",
            params![id, baseline, serde_json::to_string(settings)?, now_unix_ms()],
        )?;
        set_session_runs(&tx, id, run_ids)?;
        tx.commit()?;
        self.session(id)
    }

    pub fn rename_session(&mut self, id: i64, name: &str) -> Result<SavedSession> {
        check_session_name(name)?;
        self.session(id)?;
        let tx = self.conn.transaction()?;
        if name_taken(&tx, name, Some(id))? {
            return Err(invalid("name", name, "a name no other session has"));
        }
        tx.execute(
            "UPDATE sessions SET name = ?2, updated_unix_ms = ?3 WHERE id = ?1",
            params![id, name, now_unix_ms()],
        )?;
        tx.commit()?;
        self.session(id)
    }

    /// Deletes a session (its runs stay).
    pub fn delete_session(&self, id: i64) -> Result<()> {
        let n = self
            .conn
            .execute("DELETE FROM sessions WHERE id = ?1", params![id])?;
        if n == 0 {
            return Err(StoreError::NotFound {
                what: "session",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    pub fn session(&self, id: i64) -> Result<SavedSession> {
        let found = self
            .conn
            .query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"),
                params![id],
                session_from_row,
            )
            .optional()?;
        let (mut s, settings) = found.ok_or_else(|| StoreError::NotFound {
            what: "session",
            id: id.to_string(),
        })?;
        self.fill_session(&mut s, &settings)?;
        Ok(s)
    }

    /// A session by name, or by id when `name_or_id` is a number no session
    /// is named.
    pub fn find_session(&self, name_or_id: &str) -> Result<SavedSession> {
        let by_name: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM sessions WHERE name = ?1",
                params![name_or_id],
                |r| r.get(0),
            )
            .optional()?;
        match (by_name, name_or_id.parse::<i64>()) {
            (Some(id), _) | (None, Ok(id)) => self.session(id),
            (None, Err(_)) => Err(StoreError::NotFound {
                what: "session",
                id: name_or_id.to_string(),
            }),
        }
    }

    fn fill_session(&self, s: &mut SavedSession, settings: &str) -> Result<()> {
        s.settings = serde_json::from_str(settings)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT run_id FROM session_runs WHERE session_id = ?1 ORDER BY position",
        )?;
        s.run_ids = stmt
            .query_map(params![s.id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(())
    }

    pub fn sessions(&self) -> Result<Vec<SavedSession>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions ORDER BY updated_unix_ms DESC, id DESC"
        ))?;
        let rows = stmt
            .query_map([], session_from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut out = Vec::with_capacity(rows.len());
        for (mut s, settings) in rows {
            self.fill_session(&mut s, &settings)?;
            out.push(s);
        }
        Ok(out)
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

    /// Every telemetry sample of a run, in time order per source.
    pub fn telemetry(&self, id: i64) -> Result<Vec<TelemetrySample>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT t_ns, source, cpu_percent, rss_bytes, host_cpu_percent, mem_used_bytes, util_percent,
                    power_w, energy_mj, sm_clock_mhz, mem_clock_mhz, throttle_reasons, other_processes
             FROM telemetry WHERE run_id = ?1 ORDER BY t_ns, source",
        )?;
        let rows = stmt
            .query_map(params![id], |r| {
                Ok(TelemetrySample {
                    t_ns: r.get(0)?,
                    source: r.get(1)?,
                    cpu_percent: r.get(2)?,
                    rss_bytes: r.get(3)?,
                    host_cpu_percent: r.get(4)?,
                    mem_used_bytes: r.get(5)?,
                    util_percent: r.get(6)?,
                    power_w: r.get(7)?,
                    energy_mj: r.get(8)?,
                    sm_clock_mhz: r.get(9)?,
                    mem_clock_mhz: r.get(10)?,
                    throttle_reasons: r.get(11)?,
                    other_processes: r.get(12)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    fn portable_run(&self, id: i64) -> Result<PortableRun> {
        let d = self.run_detail(id)?;
        if matches!(d.row.status, RunStatus::Queued | RunStatus::Running) {
            return Err(StoreError::RunActive {
                id,
                status: d.row.status.as_str(),
            });
        }
        type Extra = (
            String,
            Option<f64>,
            Option<u64>,
            Option<String>,
            Option<String>,
        );
        let (uid, flops_per_sample, train_start_ns, done_reason, price_json): Extra =
            self.conn.query_row(
                "SELECT uid, flops_per_sample, train_start_ns, done_reason, price_json FROM runs WHERE id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )?;
        let first_step_s: Option<f64> = self.conn.query_row(
            "SELECT first_step_s FROM runs WHERE id = ?1",
            params![id],
            |r| r.get(0),
        )?;
        let price: Option<PriceRow> = match price_json {
            Some(p) => Some(serde_json::from_str(&p)?),
            None => match &d.row.price_offering {
                Some(o) => self.price(o)?,
                None => None,
            },
        };
        let mut evals_stmt = self.conn.prepare_cached(
            "SELECT step, epoch, elapsed_s, accuracy, loss, samples, t_ns FROM evals WHERE run_id = ?1 ORDER BY step",
        )?;
        let evals = evals_stmt
            .query_map(params![id], |r| {
                Ok(PortableEval {
                    step: r.get(0)?,
                    epoch: r.get(1)?,
                    elapsed_s: r.get(2)?,
                    accuracy: r.get(3)?,
                    loss: r.get(4)?,
                    samples: r.get(5)?,
                    t_ns: r.get(6)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut mem_stmt = self.conn.prepare_cached(
            "SELECT device, source, peak_bytes, reserved_peak_bytes FROM memory_peaks WHERE run_id = ?1 ORDER BY device, source",
        )?;
        let memory = mem_stmt
            .query_map(params![id], |r| {
                Ok(PortableMemory {
                    device: r.get(0)?,
                    source: r.get(1)?,
                    peak_bytes: r.get(2)?,
                    reserved_peak_bytes: r.get(3)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(PortableRun {
            uid,
            id,
            origin: d.row.origin.clone(),
            config_key: d.row.config_key.clone(),
            repeat_index: d.row.repeat_index,
            framework: d.row.framework.clone(),
            model: d.row.model.clone(),
            precision: d.row.precision.clone(),
            device: d.row.device.clone(),
            devices: d.row.devices,
            batch_size: d.row.batch_size,
            data: d.row.data.clone(),
            spec: d.spec.clone(),
            price_offering: d.row.price_offering.clone(),
            price,
            status: d.row.status,
            status_reason: d.row.status_reason.clone(),
            error_class: d.row.error_class.clone(),
            exit_code: d.row.exit_code,
            stderr_tail: d.stderr_tail.clone(),
            created_unix_ms: d.row.created_unix_ms,
            started_unix_ms: d.row.started_unix_ms,
            ended_unix_ms: d.row.ended_unix_ms,
            hello: d.hello.clone(),
            param_count: d.row.param_count,
            flops_per_sample,
            first_step_s,
            first_step_train_s: d.first_step_train_s,
            compile_s: d.compile_s,
            train_start_ns,
            done_reason,
            loss_scale: d.loss_scale,
            provenance: d.provenance.clone(),
            windows: d.windows.clone(),
            evals,
            memory,
            telemetry: self.telemetry(id)?,
            summary: d.row.summary.clone(),
        })
    }

    /// A session with everything measured about its runs, ready to write.
    pub fn export_session(&self, id: i64, exported_by: &str) -> Result<SessionFile> {
        let s = self.session(id)?;
        let runs = s
            .run_ids
            .iter()
            .map(|&r| self.portable_run(r))
            .collect::<Result<Vec<_>>>()?;
        let baseline_run_uid = s
            .baseline_run_id
            .and_then(|b| runs.iter().find(|r| r.id == b).map(|r| r.uid.clone()));
        let file = SessionFile {
            format: SESSION_FORMAT.into(),
            version: SESSION_VERSION,
            exported_unix_ms: now_unix_ms(),
            exported_by: exported_by.into(),
            machine: MachineInfo {
                machine_id: self.machine_id()?,
                hostname: hostname(),
            },
            session: PortableSession {
                uid: s.uid,
                name: s.name,
                baseline_run_uid,
                settings: s.settings,
                created_unix_ms: s.created_unix_ms,
            },
            runs,
        };
        // What we write must be what we would accept.
        file.validate()?;
        Ok(file)
    }

    /// Imports a session file in one transaction: on any error nothing is
    /// changed. Runs already here (same uid) are not duplicated; a uid that
    /// belongs to a different local run is refused.
    pub fn import_session(
        &mut self,
        file: &SessionFile,
        file_name: Option<&str>,
    ) -> Result<ImportOutcome> {
        file.validate()?;
        let here = self.machine_id()?;
        let now = now_unix_ms();
        let tx = self.conn.transaction()?;
        if let Some((id, name)) = tx
            .query_row(
                "SELECT id, name FROM sessions WHERE uid = ?1",
                params![file.session.uid],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
            )
            .optional()?
        {
            // Same session again: check its runs are the ones here, change nothing.
            for (i, r) in file.runs.iter().enumerate() {
                let local: Option<i64> = tx
                    .query_row("SELECT id FROM runs WHERE uid = ?1", params![r.uid], |x| {
                        x.get(0)
                    })
                    .optional()?;
                if local.is_none() {
                    return Err(invalid(
                        "session.uid",
                        &file.session.uid,
                        format!("the session is already here as {name:?} but without runs[{i}] ({}); delete the local session to import this file", r.uid),
                    ));
                }
            }
            return Ok(ImportOutcome {
                session_id: id,
                session_name: name,
                session_created: false,
                runs_imported: 0,
                runs_already_present: file.runs.len(),
            });
        }
        let mut local_ids = Vec::with_capacity(file.runs.len());
        let (mut imported, mut present) = (0, 0);
        for (i, r) in file.runs.iter().enumerate() {
            let existing: Option<(i64, Option<String>)> = tx
                .query_row(
                    "SELECT id, origin_json FROM runs WHERE uid = ?1",
                    params![r.uid],
                    |x| Ok((x.get(0)?, x.get(1)?)),
                )
                .optional()?;
            let measured_on = r
                .origin
                .as_ref()
                .map_or(file.machine.machine_id.as_str(), |o| o.machine_id.as_str());
            if let Some((local, origin)) = existing {
                let local_machine = match origin {
                    Some(o) => serde_json::from_str::<RunOrigin>(&o)?.machine_id,
                    None => here.clone(),
                };
                if local_machine != measured_on {
                    return Err(invalid(
                        "runs[].uid",
                        &r.uid,
                        format!(
                            "runs[{i}] claims the uid of local run {local}, which was measured on another machine; the file is not consistent with this database"
                        ),
                    ));
                }
                local_ids.push(local);
                present += 1;
                continue;
            }
            let origin = match &r.origin {
                Some(o) => RunOrigin {
                    imported_unix_ms: now,
                    file: file_name.map(str::to_string),
                    ..o.clone()
                },
                None => RunOrigin {
                    machine_id: file.machine.machine_id.clone(),
                    hostname: file.machine.hostname.clone(),
                    source_run_id: r.id,
                    imported_unix_ms: now,
                    file: file_name.map(str::to_string),
                },
            };
            local_ids.push(insert_portable_run(&tx, r, &origin)?);
            imported += 1;
        }
        let mut name = file.session.name.clone();
        let mut n = 1;
        while name_taken(&tx, &name, None)? {
            n += 1;
            name = format!(
                "{} (imported from {}{})",
                file.session.name,
                file.machine.hostname,
                if n > 2 {
                    format!(", {}", n - 1)
                } else {
                    String::new()
                }
            );
        }
        let baseline = file.session.baseline_run_uid.as_ref().and_then(|b| {
            file.runs
                .iter()
                .position(|r| &r.uid == b)
                .map(|i| local_ids[i])
        });
        tx.execute(
            "INSERT INTO sessions (uid, name, baseline_run_id, settings_json, created_unix_ms, updated_unix_ms, imported_from)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                file.session.uid,
                name,
                baseline,
                serde_json::to_string(&file.session.settings)?,
                file.session.created_unix_ms,
                now,
                file.machine.hostname
            ],
        )?;
        let session_id = tx.last_insert_rowid();
        set_session_runs(&tx, session_id, &local_ids)?;
        tx.commit()?;
        Ok(ImportOutcome {
            session_id,
            session_name: name,
            session_created: true,
            runs_imported: imported,
            runs_already_present: present,
        })
    }
}

fn insert_portable_run(tx: &Transaction<'_>, r: &PortableRun, origin: &RunOrigin) -> Result<i64> {
    let json = |v: &Option<serde_json::Value>| v.as_ref().map(serde_json::Value::to_string);
    tx.execute(
        "INSERT INTO runs (config_key, repeat_index, framework, model, precision, device, devices, batch_size, data,
             spec_json, price_offering, status, status_reason, error_class, exit_code, stderr_tail, created_unix_ms,
             started_unix_ms, ended_unix_ms, hello_json, param_count, flops_per_sample, first_step_s, train_start_ns,
             done_reason, provenance_json, first_step_train_s, compile_s, uid, origin_json, price_json, loss_scale)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
             ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32)",
        params![
            r.config_key,
            r.repeat_index,
            r.framework,
            r.model,
            r.precision,
            r.device,
            r.devices,
            u(r.batch_size),
            r.data,
            r.spec.to_string(),
            r.price_offering,
            r.status.as_str(),
            r.status_reason,
            r.error_class,
            r.exit_code,
            r.stderr_tail,
            r.created_unix_ms,
            r.started_unix_ms,
            r.ended_unix_ms,
            json(&r.hello),
            r.param_count.map(u),
            r.flops_per_sample,
            r.first_step_s,
            r.train_start_ns.map(u),
            r.done_reason,
            json(&r.provenance),
            r.first_step_train_s,
            r.compile_s,
            r.uid,
            serde_json::to_string(origin)?,
            r.price.as_ref().map(serde_json::to_string).transpose()?,
            r.loss_scale,
        ],
    )?;
    let id = tx.last_insert_rowid();
    {
        let mut w = tx.prepare_cached(
            "INSERT INTO windows (run_id, idx, first_step, steps, samples, start_ns, end_ns, loss_mean, lr)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        for x in &r.windows {
            w.execute(params![
                id,
                u(x.index),
                u(x.first_step),
                u(x.steps),
                u(x.samples),
                u(x.start_ns),
                u(x.end_ns),
                x.loss_mean,
                x.lr
            ])?;
        }
        let mut e = tx.prepare_cached(
            "INSERT INTO evals (run_id, step, epoch, elapsed_s, accuracy, loss, samples, t_ns)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        for x in &r.evals {
            e.execute(params![
                id,
                u(x.step),
                x.epoch,
                x.elapsed_s,
                x.accuracy,
                x.loss,
                u(x.samples),
                u(x.t_ns)
            ])?;
        }
        let mut m = tx.prepare_cached(
            "INSERT INTO memory_peaks (run_id, device, source, peak_bytes, reserved_peak_bytes) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for x in &r.memory {
            m.execute(params![
                id,
                x.device,
                x.source,
                u(x.peak_bytes),
                x.reserved_peak_bytes.map(u)
            ])?;
        }
        let mut t = tx.prepare_cached(
            "INSERT INTO telemetry (run_id, t_ns, source, cpu_percent, rss_bytes, host_cpu_percent, mem_used_bytes,
                 util_percent, power_w, energy_mj, sm_clock_mhz, mem_clock_mhz, throttle_reasons, other_processes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?;
        for x in &r.telemetry {
            t.execute(params![
                id,
                u(x.t_ns),
                x.source,
                x.cpu_percent,
                x.rss_bytes.map(u),
                x.host_cpu_percent,
                x.mem_used_bytes.map(u),
                x.util_percent,
                x.power_w,
                x.energy_mj.map(u),
                x.sm_clock_mhz,
                x.mem_clock_mhz,
                x.throttle_reasons.map(u),
                x.other_processes
            ])?;
        }
    }
    if let Some(s) = &r.summary {
        tx.execute(
            "INSERT INTO summaries (run_id, computed_unix_ms, summary_json) VALUES (?1, ?2, ?3)",
            params![id, now_unix_ms(), serde_json::to_string(s)?],
        )?;
    }
    Ok(id)
}

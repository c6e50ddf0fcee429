//! Session files: export of a session with its runs' raw data, and
//! all-or-nothing import.

use rusqlite::{params, OptionalExtension, Transaction};
use trainbench_core::record::RunOrigin;
use trainbench_core::reference::PriceRow;
use trainbench_core::session::{
    MachineInfo, PortableEval, PortableMemory, PortableModelFile, PortableRun, PortableSession,
    SessionFile, SessionFileError, SESSION_FORMAT,
};
use trainbench_core::summary::RunStatus;

use crate::runs::fill_typed_columns;
use crate::sessions::{name_taken, set_session_runs};
use crate::{invalid, now_unix_ms, u, Result, Store, StoreError};

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

/// This machine's host name, for provenance in exported files.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown host".into())
}

impl Store {
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
        let (first_step_s, epoch_samples): (Option<f64>, Option<u64>) = self.conn.query_row(
            "SELECT first_step_s, epoch_samples FROM runs WHERE id = ?1",
            params![id],
            |r| Ok((r.get(0)?, r.get(1)?)),
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
            framework: d.row.framework,
            model: d.row.model.clone(),
            precision: d.row.precision,
            device: d.row.device,
            devices: d.row.devices,
            batch_size: d.row.batch_size,
            data: d.row.data,
            spec: d.spec.clone(),
            price_offering: d.row.price_offering.clone(),
            price,
            epoch_samples,
            status: d.row.status,
            status_reason: d.row.status_reason.clone(),
            error_class: d.row.error_class.clone(),
            exit_code: d.row.exit_code,
            stderr_tail: d
                .stderr_tail
                .clone()
                .map(|t| trainbench_core::text::cut(t, trainbench_core::session::MAX_STDERR_TAIL)),
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
            step_timings: d.step_timings.clone(),
            compiles: d.compiles.clone(),
            profile: d.profile.clone(),
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
        let model_files = self.portable_model_files(&runs)?;
        let searches = self.portable_searches(&runs)?;
        let baseline_run_uid = s
            .baseline_run_id
            .and_then(|b| runs.iter().find(|r| r.id == b).map(|r| r.uid.clone()));
        let mut file = SessionFile {
            format: SESSION_FORMAT.into(),
            version: 0,
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
            model_files,
            searches,
        };
        // A file that needs nothing newer stays readable by older studios.
        file.version = file.version_needed();
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
        if let Some(outcome) = already_imported(&tx, file)? {
            return Ok(outcome);
        }
        let mut local_ids = Vec::with_capacity(file.runs.len());
        let mut added = std::collections::HashSet::new();
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
            added.insert(r.id);
            imported += 1;
        }
        keep_portable_model_files(&tx, file)?;
        let local: std::collections::HashMap<i64, i64> = file
            .runs
            .iter()
            .map(|r| r.id)
            .zip(local_ids.iter().copied())
            .collect();
        crate::portable_searches::import_searches(&tx, file, &local, &added)?;
        let mut name = file.session.name.clone();
        let mut n = 1;
        while name_taken(&tx, &name, None)? {
            n += 1;
            name = trainbench_core::session::imported_name(
                &file.session.name,
                &file.machine.hostname,
                n,
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

impl Store {
    /// The kept copies of the model files `runs` trained, each once, in the
    /// order first named (a run whose copy is not kept here travels without).
    fn portable_model_files(&self, runs: &[PortableRun]) -> Result<Vec<PortableModelFile>> {
        let mut out: Vec<PortableModelFile> = Vec::new();
        for r in runs {
            let Some(sha) = r.spec.get("model_sha256").and_then(|v| v.as_str()) else {
                continue;
            };
            if out.iter().any(|m| m.sha256 == sha) {
                continue;
            }
            if let Some(kept) = self.model_file(sha)? {
                let text = String::from_utf8(kept.bytes).map_err(|_| {
                    invalid(
                        "model_files[].text",
                        sha,
                        format!("the kept copy of {} is not UTF-8 text", kept.reference),
                    )
                })?;
                out.push(PortableModelFile {
                    sha256: kept.sha256,
                    reference: kept.reference,
                    text,
                });
            }
        }
        Ok(out)
    }
}

/// Lowercase hexadecimal SHA-256 of `bytes`.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Keeps the file's model files as copies (as text, never run), each checked
/// to hash to the SHA-256 it claims: a copy that does not is refused, naming
/// the runs that would show it.
fn keep_portable_model_files(tx: &Transaction<'_>, file: &SessionFile) -> Result<()> {
    for (i, m) in file.model_files.iter().enumerate() {
        let actual = sha256_hex(m.text.as_bytes());
        if actual != m.sha256 {
            return Err(SessionFileError::Invalid {
                field: format!("model_files[{i}].sha256"),
                message: format!(
                    "= {} does not match the copy of {} carried for {}: its text hashes to {actual}, so it is not the file they trained; nothing imported",
                    m.sha256,
                    m.reference,
                    file.runs_of_model_file(&m.sha256).join(", ")
                ),
            }
            .into());
        }
        tx.execute(
            "INSERT OR IGNORE INTO model_files (sha256, reference, bytes, stored_unix_ms)
             VALUES (?1, ?2, ?3, ?4)",
            params![m.sha256, m.reference, m.text.as_bytes(), now_unix_ms()],
        )?;
    }
    Ok(())
}

fn insert_portable_run(tx: &Transaction<'_>, r: &PortableRun, origin: &RunOrigin) -> Result<i64> {
    let json = |v: &Option<serde_json::Value>| v.as_ref().map(serde_json::Value::to_string);
    tx.execute(
        "INSERT INTO runs (config_key, repeat_index, framework, model, precision, device, devices, batch_size, data,
             spec_json, price_offering, status, status_reason, error_class, exit_code, stderr_tail, created_unix_ms,
             started_unix_ms, ended_unix_ms, hello_json, param_count, flops_per_sample, first_step_s, train_start_ns,
             done_reason, provenance_json, first_step_train_s, compile_s, uid, origin_json, price_json, loss_scale,
             step_timings_json, compiles_json, profile_json, epoch_samples)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
             ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36)",
        params![
            r.config_key,
            r.repeat_index,
            r.framework.as_str(),
            r.model,
            r.precision.as_str(),
            r.device.to_string(),
            r.devices,
            u(r.batch_size),
            r.data.as_str(),
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
            r.step_timings.as_ref().map(serde_json::to_string).transpose()?,
            r.compiles.as_ref().map(serde_json::to_string).transpose()?,
            r.profile.as_ref().map(serde_json::to_string).transpose()?,
            r.epoch_samples.map(u),
        ],
    )?;
    let id = tx.last_insert_rowid();
    fill_typed_columns(tx, Some(id))?;
    insert_raw_rows(tx, id, r)?;
    if let Some(s) = &r.summary {
        tx.execute(
            "INSERT INTO summaries (run_id, computed_unix_ms, summary_json) VALUES (?1, ?2, ?3)",
            params![id, now_unix_ms(), serde_json::to_string(s)?],
        )?;
    }
    Ok(id)
}

/// A portable run's windows, evaluations, memory peaks and telemetry under
/// its new id.
fn insert_raw_rows(tx: &Transaction<'_>, id: i64, r: &PortableRun) -> Result<()> {
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
    Ok(())
}

/// The file's session when it is here already (its runs checked to be the
/// ones here; nothing changed), or `None`.
fn already_imported(tx: &Transaction<'_>, file: &SessionFile) -> Result<Option<ImportOutcome>> {
    let Some((id, name)) = tx
        .query_row(
            "SELECT id, name FROM sessions WHERE uid = ?1",
            params![file.session.uid],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
        )
        .optional()?
    else {
        return Ok(None);
    };
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
    Ok(Some(ImportOutcome {
        session_id: id,
        session_name: name,
        session_created: false,
        runs_imported: 0,
        runs_already_present: file.runs.len(),
    }))
}

//! What a run measured: worker events, telemetry, and the measurements a
//! summary is computed from.

use rusqlite::{params, Transaction};
use trainbench_core::protocol::Event;
use trainbench_core::record::{StoredEval, StoredWindow};
use trainbench_core::reference::PriceRow;
use trainbench_core::spec::RunSpec;
use trainbench_core::stats::WindowTiming;
use trainbench_core::summary::{MemoryPeak, RunMeasurements};
use trainbench_core::telemetry::TelemetrySample;

use crate::{u, Result, Store};

impl Store {
    /// Stores a batch of worker events and telemetry samples in one transaction.
    pub fn record(
        &mut self,
        id: i64,
        events: &[Event],
        telemetry: &[TelemetrySample],
    ) -> Result<()> {
        // IMMEDIATE: the write lock is taken (or waited for) up front.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        record_in(&tx, id, events, telemetry)?;
        tx.commit()?;
        Ok(())
    }

    /// Events and samples read from a remote run's journal, and how far the
    /// journal has been read, in one transaction: a studio that stops between
    /// two reads re-attaches exactly after what it stored.
    pub fn record_journal(
        &mut self,
        id: i64,
        events: &[Event],
        telemetry: &[TelemetrySample],
        offset: u64,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        record_in(&tx, id, events, telemetry)?;
        tx.execute(
            "UPDATE remote_runs SET journal_offset = ?2 WHERE run_id = ?1",
            params![id, u(offset)],
        )?;
        tx.commit()?;
        Ok(())
    }
}

pub(crate) fn record_in(
    tx: &Transaction<'_>,
    id: i64,
    events: &[Event],
    telemetry: &[TelemetrySample],
) -> Result<()> {
    {
        for e in events {
            record_event(tx, id, e)?;
        }
        insert_telemetry(tx, id, telemetry)?;
    }
    Ok(())
}

/// Telemetry samples of run `id`, as they are (a row replaces one with the
/// same time and source).
pub(crate) fn insert_telemetry(
    tx: &rusqlite::Connection,
    id: i64,
    telemetry: &[TelemetrySample],
) -> Result<()> {
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
    Ok(())
}

/// Run `id`'s telemetry in time order (of one source, or of all).
pub(crate) fn telemetry_of(
    conn: &rusqlite::Connection,
    id: i64,
    source: Option<&str>,
) -> Result<Vec<TelemetrySample>> {
    let mut stmt = conn.prepare_cached(
        "SELECT t_ns, source, cpu_percent, rss_bytes, host_cpu_percent, mem_used_bytes, util_percent,
                power_w, energy_mj, sm_clock_mhz, mem_clock_mhz, throttle_reasons, other_processes
         FROM telemetry WHERE run_id = ?1 AND (?2 IS NULL OR source = ?2) ORDER BY t_ns, source",
    )?;
    let rows = stmt
        .query_map(params![id, source], |r| {
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

impl Store {
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

    /// What a summary needs, read back from the stored run (its
    /// [`Store::run_detail`], the one read of a run, plus the first-step time,
    /// the price and the epoch size asked).
    pub fn measurements(&self, id: i64) -> Result<RunMeasurements> {
        let d = self.run_detail(id)?;
        let (first_step_s, price_json, asked_epoch_samples): (
            Option<f64>,
            Option<String>,
            Option<u64>,
        ) = self.conn.query_row(
            "SELECT first_step_s, price_json, epoch_samples FROM runs WHERE id = ?1",
            params![id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        // An imported run keeps the price row it was costed with.
        let price = match price_json {
            Some(p) => Some(serde_json::from_str::<PriceRow>(&p)?),
            None => d
                .row
                .price_offering
                .as_deref()
                .map(|p| self.price(p))
                .transpose()?
                .flatten(),
        };
        let hello = d.hello.as_ref();
        let data = hello.and_then(|h| h.get("data"));
        let real_epoch_samples = data
            .filter(|d| d.get("source").and_then(|s| s.as_str()) != Some("synthetic"))
            .and_then(|d| d.get("samples_per_epoch"))
            .and_then(|v| v.as_u64());
        let mut memory = d.memory.clone();
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
            param_count: d.row.param_count,
            flops_per_sample: hello
                .and_then(|h| h.get("flops_per_sample"))
                .and_then(|v| v.as_f64()),
            batch_size: d.row.batch_size,
            devices: d.row.devices,
            precision: Some(d.row.precision),
            real_epoch_samples,
            asked_epoch_samples,
            image_model: trainbench_core::models::lookup(&d.row.model)
                .is_some_and(|e| e.family.is_image()),
            on_cpu: d.row.device == trainbench_core::spec::Device::Cpu,
            windows: d.windows.iter().map(WindowTiming::from).collect(),
            first_step_s,
            evals: d.evals.iter().map(|e| (e.elapsed_s, e.accuracy)).collect(),
            eval_losses: d
                .evals
                .iter()
                .filter_map(|e| Some((e.elapsed_s, e.loss?)))
                .collect(),
            target_accuracy: d.spec.get("target_accuracy").and_then(|v| v.as_f64()),
            target_loss: d.spec.get("target_loss").and_then(|v| v.as_f64()),
            memory,
            gpu: None,
            device_name: None,
            device_peak: None,
            price,
            step_timings: d.step_timings.clone(),
            compiles: d.compiles.clone(),
            profile: d.profile.clone(),
            error: d
                .row
                .error_class
                .clone()
                .map(|c| (c, d.row.status_reason.clone().unwrap_or_default())),
            execution: hello
                .and_then(|h| h.get("execution"))
                .and_then(|v| v.as_str())
                .map(str::to_owned),
            // The spec's, else what the worker said of the model it built
            // (a Hugging Face decoder).
            tokens_per_sample: RunSpec::from_json(&d.spec.to_string())
                .ok()
                .and_then(|s| s.model_config.tokens_per_sample())
                .or_else(|| {
                    hello
                        .and_then(|h| h.get("tokens_per_sample"))
                        .and_then(serde_json::Value::as_u64)
                }),
        })
    }

    /// Every telemetry sample of a run, in time order per source.
    pub fn telemetry(&self, id: i64) -> Result<Vec<TelemetrySample>> {
        telemetry_of(&self.conn, id, None)
    }
}

fn record_event(tx: &Transaction<'_>, id: i64, e: &Event) -> Result<()> {
    match e {
        Event::Hello {
            param_count,
            flops_per_sample,
            train_start_ns,
            batch_size,
            ..
        } => {
            // A training script's batch (stored as 0: its own) is what its
            // first step trained on.
            tx.execute(
                "UPDATE runs SET hello_json = ?2, param_count = ?3, flops_per_sample = ?4, train_start_ns = ?5,
                     batch_size = CASE WHEN batch_size = 0 THEN ?6 ELSE batch_size END WHERE id = ?1",
                params![id, serde_json::to_string(e)?, param_count.map(u), flops_per_sample, u(*train_start_ns), u(*batch_size)],
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
        Event::Breakdown(timings) => {
            tx.execute(
                "UPDATE runs SET step_timings_json = ?2 WHERE id = ?1",
                params![id, serde_json::to_string(timings)?],
            )?;
        }
        Event::Profile(profile) => {
            tx.execute(
                "UPDATE runs SET profile_json = ?2 WHERE id = ?1",
                params![id, serde_json::to_string(profile)?],
            )?;
        }
        Event::Done {
            reason,
            loss_scale,
            compiles,
            ..
        } => {
            tx.execute(
                "UPDATE runs SET done_reason = ?2, loss_scale = ?3, compiles_json = ?4 WHERE id = ?1",
                params![
                    id,
                    reason,
                    loss_scale,
                    compiles.as_ref().map(serde_json::to_string).transpose()?
                ],
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

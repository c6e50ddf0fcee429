//! The largest batch that fits (`--batch-size max`): before a sweep's runs
//! are queued, each configuration planned with a batch search is probed at
//! powers of two (`trainbench_core::batch_search`), each probe a short run in
//! a fresh worker process through the same runner as every run, kept in a
//! scratch database so that its few steps never count as a measurement. Each
//! probe is stored in the sweep's `batch_probes` as it ends; the
//! configuration then runs at the largest batch that fitted, or is refused
//! with the reason when none did.

use std::time::Instant;

use tokio::sync::watch;
use trainbench_core::batch_search::{
    largest_fit, next_probe, within_limit, BatchProbe, BatchSearch, ProbeOutcome, PROBE_STEPS,
};
use trainbench_core::spec::{CheckedSpec, RawSpec};
use trainbench_core::summary::RunStatus;
use trainbench_core::ErrorClass;
use trainbench_runner::{Runner, RunnerOptions, MEMORY_LIMIT_REASON};
use trainbench_store::{NewRun, Store};

use crate::error::{AppError, AppResult};
use crate::execute::Silent;
use crate::host::Host;
use crate::job::{Job, Rejected};
use crate::sweep::{PlannedConfig, SweepPlan};
use crate::workspace::Workspace;

/// What the search reports as it goes.
pub trait SearchProgress {
    /// A probe is about to start.
    fn probing(&mut self, config: &str, batch: u32);
    /// A probe ended.
    fn probed(&mut self, config: &str, probe: &BatchProbe);
    /// The configuration's search ended: the batch it runs at, or why none.
    fn chosen(&mut self, config: &str, batch: Result<u32, &str>);
}

/// Progress that shows nothing.
pub struct Quiet;

impl SearchProgress for Quiet {
    fn probing(&mut self, _config: &str, _batch: u32) {}
    fn probed(&mut self, _config: &str, _probe: &BatchProbe) {}
    fn chosen(&mut self, _config: &str, _batch: Result<u32, &str>) {}
}

/// The probe's spec: the configuration at `batch`, [`PROBE_STEPS`] steps,
/// one-step windows, no evaluation target, no profile.
fn probe_spec(cfg: &PlannedConfig, batch: u32) -> Result<CheckedSpec, String> {
    let mut raw = at_batch(&cfg.spec.raw, batch);
    raw.steps = Some(i64::from(PROBE_STEPS));
    raw.epochs = None;
    raw.window_steps = 1;
    raw.target_accuracy = None;
    raw.target_loss = None;
    raw.stop_at_target = false;
    raw.profile = false;
    CheckedSpec::new(raw).map_err(|e| e.to_string())
}

/// `raw` at `batch`. Generated (synthetic) data grows to hold one global
/// batch when it holds fewer samples: the search asks what fits in memory,
/// and the size of a generated set is no limit of the model or the device.
/// Real data keeps its size (a batch larger than it is refused, which ends
/// the search).
fn at_batch(raw: &RawSpec, batch: u32) -> RawSpec {
    let mut raw = raw.clone();
    raw.batch_size = i64::from(batch);
    if raw.data == "synthetic" {
        let global = raw.batch_size * raw.devices.max(1) * raw.nodes.unwrap_or(1).max(1);
        raw.synthetic_samples = raw.synthetic_samples.max(global);
    }
    raw
}

/// One probe (`spec`, from [`probe_spec`]), run to its end in a scratch
/// database.
async fn probe(
    cfg: &PlannedConfig,
    spec: &CheckedSpec,
    host: &Host,
    search: &BatchSearch,
    opts: RunnerOptions,
    cancel: watch::Receiver<bool>,
) -> AppResult<BatchProbe> {
    let started = Instant::now();
    let mut scratch = Store::open_in_memory()?;
    let run_id = scratch.insert_run(&NewRun::of_spec(cfg.framework, cfg.env.clone(), spec))?;
    let runner = Runner {
        worker: cfg.worker.clone(),
        gpu: &host.gpu,
        opts: RunnerOptions {
            memory_limit_bytes: search.memory_limit_bytes,
            ..opts
        },
    };
    let out = runner
        .run(&mut scratch, run_id, spec, &mut Silent, cancel)
        .await
        .map_err(|e| AppError::Internal(e.to_string()))?;
    let seconds = started.elapsed().as_secs_f64();
    let peak = out.summary.peak_memory_bytes;
    let source = out.summary.peak_memory_source.clone();
    let class = out.error_class.as_deref().and_then(ErrorClass::parse);
    let outcome = match (out.status, class) {
        (RunStatus::Completed, _) if within_limit(peak, search.memory_limit_bytes) => {
            ProbeOutcome::Fits
        }
        (RunStatus::Completed, _) => ProbeOutcome::OverLimit,
        (RunStatus::Failed, Some(ErrorClass::Oom))
            if out
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with(MEMORY_LIMIT_REASON)) =>
        {
            ProbeOutcome::OverLimit
        }
        (RunStatus::Failed, Some(ErrorClass::Oom)) => ProbeOutcome::OutOfMemory,
        (RunStatus::Cancelled, _) => return Err(AppError::Cancelled),
        _ => ProbeOutcome::Failed,
    };
    let reason = match outcome {
        ProbeOutcome::OverLimit if out.reason.is_none() => Some(format!(
            "{MEMORY_LIMIT_REASON}: peak resident memory {} bytes ({}) against the limit of {} bytes",
            peak.map_or("not measured".to_owned(), |p| p.to_string()),
            source.as_deref().unwrap_or("no source"),
            search.memory_limit_bytes.unwrap_or_default()
        )),
        _ => out.reason.clone(),
    };
    Ok(BatchProbe {
        batch_size: spec.spec.batch_size as u32,
        outcome,
        peak_memory_bytes: peak,
        peak_memory_source: source,
        seconds,
        reason,
    })
}

impl Workspace {
    /// Searches the batch of every configuration of `plan` planned with a
    /// batch search, storing each probe under `sweep` as it ends, and sets
    /// the largest batch that fitted; a configuration where none fitted (or a
    /// probe failed for another reason) moves to the plan's refusals with
    /// the reason. Cancelling stops the search (`AppError::Cancelled`); the
    /// probes that ended stay stored.
    pub async fn search_batches(
        &mut self,
        host: &Host,
        plan: &mut SweepPlan,
        sweep: i64,
        opts: RunnerOptions,
        cancel: watch::Receiver<bool>,
        progress: &mut dyn SearchProgress,
    ) -> AppResult<()> {
        let mut kept = Vec::with_capacity(plan.configs.len());
        for mut cfg in std::mem::take(&mut plan.configs) {
            let Some(search) = cfg.batch_search else {
                kept.push(cfg);
                continue;
            };
            let key = cfg.label.clone();
            let mut probes: Vec<BatchProbe> = Vec::new();
            // A batch the spec does not allow (more than the data set holds)
            // ends the search like the cap.
            let mut beyond: Option<String> = None;
            while let Some(batch) = next_probe(&probes, &search) {
                if *cancel.borrow() {
                    return Err(AppError::Cancelled);
                }
                let spec = match probe_spec(&cfg, batch) {
                    Ok(s) => s,
                    Err(e) => {
                        beyond = Some(e);
                        break;
                    }
                };
                progress.probing(&key, batch);
                let p = probe(&cfg, &spec, host, &search, opts, cancel.clone()).await?;
                self.store
                    .insert_batch_probe(sweep, &key, search.memory_limit_bytes, &p)?;
                progress.probed(&key, &p);
                probes.push(p);
            }
            let Some(best) = largest_fit(&probes) else {
                let message = match (probes.last(), &beyond) {
                    (Some(p), _) => format!(
                        "batch_size = max: not even batch {} fits: {}",
                        p.batch_size,
                        p.reason.as_deref().unwrap_or(p.outcome.label())
                    ),
                    (None, Some(e)) => format!(
                        "batch_size = max: batch {} is not allowed: {e}",
                        search.from
                    ),
                    (None, None) => format!(
                        "batch_size = max: nothing to try under the cap of {}",
                        search.cap
                    ),
                };
                progress.chosen(&key, Err(&message));
                plan.rejected
                    .push(Rejected::combination(key, "batch_size", message));
                continue;
            };
            // The run itself: the request's spec at the batch found.
            let raw = at_batch(&cfg.spec.raw, best);
            cfg.spec = CheckedSpec::new(raw).map_err(|e| AppError::Internal(e.to_string()))?;
            progress.chosen(&key, Ok(best));
            cfg.label = key.replacen(" bmax", &format!(" b{best} (max)"), 1);
            cfg.searched = Some(key);
            kept.push(cfg);
        }
        plan.configs = kept;
        Ok(())
    }
    /// The sweep of a plan with batch searches, in both shells: the sweep
    /// created, every search run (probes stored as they end), then the runs
    /// queued in that sweep at the batches found. Refuses (the first
    /// refusal) when no configuration is left; the ones refused beside the
    /// ones that run stay in `plan.rejected` for the shell to show.
    #[allow(clippy::too_many_arguments)]
    pub async fn search_then_queue(
        &mut self,
        host: &Host,
        plan: &mut SweepPlan,
        command: &str,
        price: Option<&str>,
        opts: RunnerOptions,
        cancel: watch::Receiver<bool>,
        progress: &mut dyn SearchProgress,
    ) -> AppResult<(i64, Vec<Job>)> {
        let sweep = self.create_sweep(plan, command)?;
        self.search_batches(host, plan, sweep, opts, cancel, progress)
            .await?;
        if plan.configs.is_empty() {
            if let Some(r) = plan.rejected.first() {
                return Err(r.clone().into());
            }
        }
        self.queue_into(sweep, plan, price)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe larger than the generated data set: the set grows to one
    /// global batch (the GPU session's search stopped at 1024, the default
    /// set's size, with "batch 2048 failed: larger than the 1024 training
    /// samples" although memory was the question).
    #[test]
    fn generated_data_grows_to_hold_the_batch_probed() {
        let mut raw = RawSpec::new("vit_base_patch16_224", 64);
        raw.steps = Some(3);
        assert_eq!(raw.synthetic_samples, 1024);
        let big = at_batch(&raw, 2048);
        assert_eq!((big.batch_size, big.synthetic_samples), (2048, 2048));
        let checked = CheckedSpec::new(big).map_err(|e| e.to_string());
        assert!(checked.is_ok(), "{checked:?}");
        // Small batches keep the set as it was.
        assert_eq!(at_batch(&raw, 16).synthetic_samples, 1024);
        // Two devices on two machines: four batches a step.
        let mut wide = raw.clone();
        wide.devices = 2;
        wide.nodes = Some(2);
        assert_eq!(at_batch(&wide, 512).synthetic_samples, 2048);
        // Real data keeps its size.
        let mut mnist = raw;
        mnist.data = "mnist".into();
        assert_eq!(at_batch(&mnist, 4096).synthetic_samples, 1024);
    }
}

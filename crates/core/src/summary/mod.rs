//! A run's summary, exactly as `docs/metrics.md` defines each number. Inputs
//! are what was measured and stored; anything that was not measured stays
//! `None` and is shown as *not measured* — nothing here estimates.

use serde::{Deserialize, Serialize};

use crate::breakdown::{breakdown, StepBreakdown};
use crate::checks::{validity_checks, CheckInputs, CheckStatus, ValidityCheck};
use crate::protocol::{CompileCount, StepTimings};
use crate::reference::{GpuPeak, PriceRow};
use crate::spec::Precision;
use crate::stats::{mean_ci95, steady_throughput, Interval, SteadyThroughput, WindowTiming};
use crate::telemetry::GpuDigest;

mod epoch;
pub use epoch::IMAGENET_1K_TRAIN;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Queued,
    Running,
    Completed,
    Failed,
    Timeout,
    Cancelled,
    Interrupted,
}

impl RunStatus {
    pub const ALL: [RunStatus; 7] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Timeout,
        RunStatus::Cancelled,
        RunStatus::Interrupted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Timeout => "timeout",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// A peak memory figure with its source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MemoryPeak {
    pub device: String,
    /// `allocator`, `nvml_process`, `process_rss` (the worker's VmHWM) or
    /// `process_rss_sampled` (the runner's 10 Hz samples of VmRSS).
    pub source: String,
    pub peak_bytes: u64,
}

/// Everything measured about one run that its summary needs. Window samples
/// are global: every device of the run together (protocol v1).
#[derive(Debug, Clone, Default)]
pub struct RunMeasurements {
    pub param_count: Option<u64>,
    pub flops_per_sample: Option<f64>,
    pub batch_size: u64,
    pub devices: u32,
    pub precision: Option<Precision>,
    /// Samples in one epoch of the run's data set, when it is a real one.
    pub real_epoch_samples: Option<u64>,
    /// The epoch size asked for cost per epoch (`--epoch-size`).
    pub asked_epoch_samples: Option<u64>,
    /// An image model (priced for an ImageNet-1k epoch on synthetic data
    /// unless another size is asked).
    pub image_model: bool,
    /// The run trained on the CPU (a GPU offering's price is then flagged).
    pub on_cpu: bool,
    pub windows: Vec<WindowTiming>,
    pub first_step_s: Option<f64>,
    /// (elapsed seconds since training start, accuracy) per evaluation.
    pub evals: Vec<(f64, f64)>,
    /// (elapsed seconds since training start, held-out loss) per evaluation.
    pub eval_losses: Vec<(f64, f64)>,
    pub target_accuracy: Option<f64>,
    pub target_loss: Option<f64>,
    pub memory: Vec<MemoryPeak>,
    /// What NVML saw on the run's GPUs during the steady windows (GPU runs
    /// with NVML samples only).
    pub gpu: Option<GpuDigest>,
    /// Name of the accelerator, when there is one (for MFU).
    pub device_name: Option<String>,
    pub device_peak: Option<GpuPeak>,
    pub price: Option<PriceRow>,
    /// The worker's step breakdown (its `breakdown` event).
    pub step_timings: Option<StepTimings>,
    /// Recompilations after step 1, where the worker counted them.
    pub compiles: Option<CompileCount>,
    /// The operator profile, where the run asked for one.
    pub profile: Option<crate::protocol::OperatorProfile>,
    /// The worker's error class and message, for a failed run.
    pub error: Option<(String, String)>,
    /// How the step ran (the hello event's `execution`).
    pub execution: Option<String>,
    /// Tokens per sample (a decoder's sequence length), for tokens/s.
    pub tokens_per_sample: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunSummary {
    pub throughput_samples_per_s: Option<f64>,
    pub throughput_ci95: Option<Interval>,
    pub windows_total: usize,
    pub windows_warmup: usize,
    pub warmup_rule: String,
    pub time_to_first_step_s: Option<f64>,
    pub peak_memory_bytes: Option<u64>,
    pub peak_memory_source: Option<String>,
    pub peak_memory_device: Option<String>,
    pub target_accuracy: Option<f64>,
    pub best_accuracy: Option<f64>,
    /// `None` with `target_reached == Some(false)` means "not reached".
    pub time_to_accuracy_s: Option<f64>,
    /// Whichever target the run had (accuracy or loss) was reached.
    pub target_reached: Option<bool>,
    /// A held-out loss to reach (time-to-loss), and the lowest one seen.
    #[serde(default)]
    pub target_loss: Option<f64>,
    #[serde(default)]
    pub best_loss: Option<f64>,
    /// Seconds from the start of training to the first evaluation at or
    /// under `target_loss`; `None` with `target_reached == Some(false)`: not
    /// reached.
    #[serde(default)]
    pub time_to_loss_s: Option<f64>,
    pub epoch_time_s: Option<f64>,
    /// The samples of the epoch `epoch_time_s` is for (what a projection
    /// to other hardware divides by its throughput; `None` in runs stored
    /// before it was kept).
    #[serde(default)]
    pub epoch_samples: Option<u64>,
    /// How the epoch time was obtained, in words.
    pub epoch_basis: Option<String>,
    pub cost_per_epoch_usd: Option<f64>,
    pub cost_is_projected: Option<bool>,
    pub price_offering: Option<String>,
    pub price_as_of: Option<String>,
    pub energy_j_per_sample: Option<f64>,
    pub mfu: Option<f64>,
    /// Why MFU is missing, or the peak it divides by.
    pub mfu_note: String,
    pub param_count: Option<u64>,
    pub global_batch: u64,
    /// How energy per sample was measured, or why it was not.
    #[serde(default)]
    pub energy_note: String,
    /// NVML during the steady windows, for GPU runs.
    #[serde(default)]
    pub gpu: Option<GpuDigest>,
    /// What makes this run's numbers less trustworthy, with the evidence:
    /// the failing validity checks.
    #[serde(default)]
    pub warnings: Vec<RunWarning>,
    /// Where the step's time goes (absent from runs measured before it).
    #[serde(default)]
    pub breakdown: Option<StepBreakdown>,
    /// The operator profile per sample (runs made with `--profile`); named
    /// apart from `RunDetail::profile`, which `show --json` puts beside it.
    #[serde(default)]
    pub profile_per_sample: Option<crate::profile::ProfileSummary>,
    /// Every validity check, passing or not, as a badge with its evidence.
    #[serde(default)]
    pub checks: Vec<ValidityCheck>,
    /// Each steady window's throughput, samples/s (what the bootstrap of a
    /// comparison resamples; empty in summaries older than it).
    #[serde(default)]
    pub steady_window_throughputs: Vec<f64>,
    /// Tokens per sample of a language model (its sequence length); `None`
    /// for models whose samples are not token sequences.
    #[serde(default)]
    pub tokens_per_sample: Option<u64>,
    /// Steady throughput in tokens/s (samples/s × tokens per sample: every
    /// position of a sequence is trained on), with its interval.
    #[serde(default)]
    pub tokens_per_s: Option<f64>,
    #[serde(default)]
    pub tokens_per_s_ci95: Option<Interval>,
}

/// A reason to doubt a run's numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunWarning {
    /// Stable: the failing check's [`crate::checks::CheckKind::warning_code`]
    /// (`gpu_slowdown`, `other_gpu_processes`, `window_spread`, …), or
    /// [`PRICE_FOR_ANOTHER_DEVICE`].
    pub code: String,
    pub message: String,
}

/// A warning's code: a GPU offering's price was applied to a CPU run.
pub const PRICE_FOR_ANOTHER_DEVICE: &str = "price_for_another_device";

/// The best accuracy and loss of the evaluations and when each target was
/// first reached.
struct Goals {
    best_accuracy: Option<f64>,
    time_to_accuracy_s: Option<f64>,
    best_loss: Option<f64>,
    time_to_loss_s: Option<f64>,
    target_reached: Option<bool>,
}

fn goals(m: &RunMeasurements) -> Goals {
    let best_accuracy = m
        .evals
        .iter()
        .map(|e| e.1)
        .fold(None, |acc: Option<f64>, a| {
            Some(acc.map_or(a, |b| b.max(a)))
        });
    let (time_to_accuracy_s, reached_accuracy) = match m.target_accuracy {
        Some(t) if !m.evals.is_empty() => {
            let hit = m.evals.iter().find(|e| e.1 >= t).map(|e| e.0);
            (hit, Some(hit.is_some()))
        }
        _ => (None, None),
    };
    let best_loss = m
        .eval_losses
        .iter()
        .map(|e| e.1)
        .fold(None, |acc: Option<f64>, l| {
            Some(acc.map_or(l, |b| b.min(l)))
        });
    let (time_to_loss_s, reached_loss) = match m.target_loss {
        Some(t) if !m.eval_losses.is_empty() => {
            let hit = m.eval_losses.iter().find(|e| e.1 <= t).map(|e| e.0);
            (hit, Some(hit.is_some()))
        }
        _ => (None, None),
    };
    let target_reached = reached_accuracy.or(reached_loss);

    Goals {
        best_accuracy,
        time_to_accuracy_s,
        best_loss,
        time_to_loss_s,
        target_reached,
    }
}

/// Energy per sample over the steady windows, from the GPU's counter.
fn energy_per_sample(m: &RunMeasurements, steady: Option<&SteadyThroughput>) -> Option<f64> {
    let energy_j = m.gpu.as_ref().and_then(|g| g.energy_j);
    match (energy_j, steady) {
        (Some(j), Some(s)) => {
            let steady_samples: u64 = m.windows[s.windows_warmup..]
                .iter()
                .map(|w| w.samples)
                .sum();
            (steady_samples > 0).then(|| j / steady_samples as f64)
        }
        _ => None,
    }
}

/// MFU against the device's dense peak at the precision in effect, with
/// what it was measured against (or why not).
fn mfu_of(m: &RunMeasurements, throughput: Option<f64>, devices: u32) -> (Option<f64>, String) {
    match (&m.device_peak, m.precision, m.flops_per_sample, throughput) {
        (Some(peak), Some(p), Some(f), Some(tp)) => {
            let peak_flops = peak.tflops(p) * 1e12 * f64::from(devices);
            (
                Some(f * tp / peak_flops),
                format!(
                    "dense {p} peak of {} ({} TFLOP/s per device)",
                    peak.device,
                    peak.tflops(p)
                ),
            )
        }
        (None, _, _, _) => (
            None,
            match &m.device_name {
                Some(n) => format!("unknown device: no dense peak on record for {n}"),
                None => "unknown device: no accelerator (CPU run)".into(),
            },
        ),
        _ => (None, "not measured: no steady throughput".into()),
    }
}

/// Why energy is what it is (or is not measured).
fn energy_note(m: &RunMeasurements) -> String {
    match (&m.gpu, m.device_name.is_some()) {
        (Some(g), _) => g.energy_note.clone(),
        (None, true) => "not measured: no NVML sample of the GPU during the steady windows".into(),
        (None, false) => "not measured: no GPU (NVML energy counters only)".into(),
    }
}

/// Prefers the accelerator allocator's peak, then NVML's process view, then the
/// worker's own peak RSS, then the runner's sampled RSS.
fn headline_memory(memory: &[MemoryPeak]) -> Option<&MemoryPeak> {
    [
        "allocator",
        "nvml_process",
        "process_rss",
        "process_rss_sampled",
    ]
    .iter()
    .find_map(|src| {
        memory
            .iter()
            .filter(|m| m.source == *src)
            .max_by_key(|m| m.peak_bytes)
    })
}

pub fn summarize(m: &RunMeasurements) -> RunSummary {
    let steady = steady_throughput(&m.windows);
    let throughput = steady.as_ref().map(|s| s.median_samples_per_s);
    let devices = m.devices.max(1);
    let global_batch = m.batch_size * u64::from(devices);

    let memory = headline_memory(&m.memory);

    let goals = goals(m);
    let epoch = epoch::epoch_and_cost(m, throughput, devices);
    let cost_per_epoch_usd = epoch.cost_per_epoch_usd;
    let energy_j_per_sample = energy_per_sample(m, steady.as_ref());
    let (mfu, mfu_note) = mfu_of(m, throughput, devices);
    let step_breakdown = m
        .step_timings
        .as_ref()
        .and_then(|t| breakdown(t, global_batch, throughput));
    let steady_windows = steady
        .as_ref()
        .map_or(&m.windows[..0], |s| &m.windows[s.windows_warmup..]);
    let checks = validity_checks(&CheckInputs {
        steady_windows,
        error: m.error.as_ref().map(|(c, msg)| (c.as_str(), msg.as_str())),
        gpu_run: m.device_name.is_some(),
        gpu: m.gpu.as_ref(),
        mfu,
        mfu_note: &mfu_note,
        breakdown: step_breakdown.as_ref(),
        compiles: m.compiles.as_ref(),
        execution: m.execution.as_deref(),
    });

    RunSummary {
        throughput_samples_per_s: throughput,
        throughput_ci95: steady.as_ref().and_then(|s| s.ci95),
        windows_total: steady.as_ref().map_or(m.windows.len(), |s| s.windows_total),
        windows_warmup: steady.as_ref().map_or(0, |s| s.windows_warmup),
        warmup_rule: crate::stats::WARMUP_RULE.into(),
        time_to_first_step_s: m.first_step_s,
        peak_memory_bytes: memory.map(|x| x.peak_bytes),
        peak_memory_source: memory.map(|x| x.source.clone()),
        peak_memory_device: memory.map(|x| x.device.clone()),
        target_accuracy: m.target_accuracy,
        target_loss: m.target_loss,
        best_loss: goals.best_loss,
        time_to_loss_s: goals.time_to_loss_s,
        best_accuracy: goals.best_accuracy,
        time_to_accuracy_s: goals.time_to_accuracy_s,
        target_reached: goals.target_reached,
        epoch_time_s: epoch.epoch_time_s,
        epoch_samples: epoch.samples,
        epoch_basis: epoch.basis,
        cost_per_epoch_usd,
        cost_is_projected: cost_per_epoch_usd.and(epoch.projected),
        price_offering: m.price.as_ref().map(|p| p.offering.clone()),
        price_as_of: m.price.as_ref().map(|p| p.as_of.clone()),
        energy_j_per_sample,
        mfu,
        mfu_note,
        param_count: m.param_count,
        global_batch,
        energy_note: energy_note(m),
        gpu: m.gpu.clone(),
        warnings: checks
            .iter()
            .filter(|c| c.status == CheckStatus::Fail)
            .map(|c| RunWarning {
                code: c.kind.warning_code().into(),
                message: c.evidence.clone(),
            })
            .chain(epoch::price_warning(m).map(|message| RunWarning {
                code: PRICE_FOR_ANOTHER_DEVICE.into(),
                message,
            }))
            .collect(),
        breakdown: step_breakdown,
        profile_per_sample: m
            .profile
            .as_ref()
            .and_then(|p| crate::profile::summarize(p, global_batch)),
        checks,
        steady_window_throughputs: steady_windows
            .iter()
            .map(WindowTiming::throughput)
            .filter(|t| t.is_finite())
            .collect(),
        tokens_per_sample: m.tokens_per_sample,
        tokens_per_s: m
            .tokens_per_sample
            .zip(throughput)
            .map(|(t, x)| x * t as f64),
        tokens_per_s_ci95: m
            .tokens_per_sample
            .zip(steady.as_ref().and_then(|s| s.ci95))
            .map(|(t, c)| Interval {
                low: c.low * t as f64,
                high: c.high * t as f64,
            }),
    }
}

/// Repeats of one configuration, aggregated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RepeatSummary {
    pub runs: usize,
    pub runs_with_throughput: usize,
    /// Mean of the repeats' median throughputs.
    pub throughput_mean_samples_per_s: Option<f64>,
    /// Student-t 95 % CI of that mean (needs ≥ 2 repeats).
    pub throughput_ci95: Option<Interval>,
}

pub fn aggregate_repeats(summaries: &[RunSummary]) -> RepeatSummary {
    let tps: Vec<f64> = summaries
        .iter()
        .filter_map(|s| s.throughput_samples_per_s)
        .collect();
    let (mean, ci) = match mean_ci95(&tps) {
        Some((m, ci)) => (Some(m), Some(ci)),
        None => (tps.first().copied(), None),
    };
    RepeatSummary {
        runs: summaries.len(),
        runs_with_throughput: tps.len(),
        throughput_mean_samples_per_s: mean,
        throughput_ci95: ci,
    }
}

/// Scaling efficiency of a data-parallel run: throughput(N) ÷ (N × throughput(1)),
/// both global samples per second of the same configuration. `None` when
/// either is missing or the single-device figure is not positive.
pub fn scaling_efficiency(
    throughput_n: Option<f64>,
    devices: u32,
    throughput_1: Option<f64>,
) -> Option<f64> {
    match (throughput_n, throughput_1) {
        (Some(n), Some(one)) if one > 0.0 && devices >= 1 && n.is_finite() => {
            Some(n / (f64::from(devices) * one))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;

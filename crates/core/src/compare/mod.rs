//! A comparison of stored runs: the numbers side by side with their intervals,
//! deltas against a baseline, the winner of each metric (the "decision
//! matrix"), scaling over device count, and warnings where the runs are not
//! comparable. The CLI, the desktop app and the PDF report all show this one
//! model, so they cannot disagree.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::record::RunRow;
use crate::spec::{Compile, Parallel};
use crate::stats::{mean_ci95, Interval};
use crate::summary::{aggregate_repeats, scaling_efficiency, RunStatus, RunSummary};

mod build;
mod labels;
mod releases;
pub mod speedup;
mod values;

pub use build::compare;
pub use speedup::Speedup;
pub use values::{config_label, cudnn_benchmark_words, threads_words};
use values::{decide, metric_value};

/// The four headline metrics of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Throughput,
    PeakMemory,
    CostPerEpoch,
    TimeToAccuracy,
    /// Seconds of training until the held-out loss first reached the run's
    /// target loss (a decoder's loss per token on real text).
    TimeToLoss,
}

impl Metric {
    pub const ALL: [Metric; 5] = [
        Metric::Throughput,
        Metric::PeakMemory,
        Metric::CostPerEpoch,
        Metric::TimeToAccuracy,
        Metric::TimeToLoss,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput",
            Metric::PeakMemory => "peak_memory",
            Metric::CostPerEpoch => "cost_per_epoch",
            Metric::TimeToAccuracy => "time_to_accuracy",
            Metric::TimeToLoss => "time_to_loss",
        }
    }

    pub fn parse(s: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.key() == s)
    }

    pub fn title(self) -> &'static str {
        match self {
            Metric::Throughput => "Throughput",
            Metric::PeakMemory => "Peak memory",
            Metric::CostPerEpoch => "Cost per epoch",
            Metric::TimeToAccuracy => "Time to accuracy",
            Metric::TimeToLoss => "Time to loss",
        }
    }

    /// The unit values are expressed in (memory in MiB, not bytes).
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Throughput => "samples/s",
            Metric::PeakMemory => "MiB",
            Metric::CostPerEpoch => "USD",
            Metric::TimeToAccuracy | Metric::TimeToLoss => "s",
        }
    }

    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Throughput)
    }

    /// This metric of a run's summary, in [`Metric::unit`].
    pub fn of(self, s: &RunSummary) -> Option<f64> {
        match self {
            Metric::Throughput => s.throughput_samples_per_s,
            Metric::PeakMemory => s.peak_memory_bytes.map(|b| b as f64 / MIB),
            Metric::CostPerEpoch => s.cost_per_epoch_usd,
            Metric::TimeToAccuracy => s.time_to_accuracy_s,
            Metric::TimeToLoss => s.time_to_loss_s,
        }
    }
}

const MIB: f64 = 1_048_576.0;

/// Whether each entry is one run or all repeats of one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Grouping {
    #[default]
    Runs,
    Configurations,
}

impl Grouping {
    pub fn parse(s: &str) -> Option<Grouping> {
        match s {
            "runs" => Some(Grouping::Runs),
            "configurations" => Some(Grouping::Configurations),
            _ => None,
        }
    }
}

/// One metric of one entry. `value` is `None` when it was not measured (or the
/// target was not reached); `note` then says which.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MetricValue {
    pub value: Option<f64>,
    pub ci95: Option<Interval>,
    /// How the value came about or why it is missing: "projected",
    /// "mean of 3 repeats", "not reached", "not measured", "no price chosen".
    pub note: Option<String>,
    /// Relative difference against the baseline entry, (value − base) ÷ base.
    pub delta_vs_baseline: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CompareEntry {
    /// Stable key of the entry: the run id (runs) or the configuration key.
    pub key: String,
    /// What sets the entry apart from the others (the parts of its
    /// configuration that differ; its run id when entries are runs): the
    /// rest is the comparison's `shared_label`.
    pub label: String,
    /// The whole configuration as a person reads it.
    #[serde(default)]
    pub full_label: String,
    pub run_ids: Vec<i64>,
    pub runs_completed: usize,
    pub framework: String,
    pub model: String,
    pub precision: String,
    pub devices: u32,
    pub batch_size: u64,
    pub global_batch: u64,
    pub data: String,
    pub param_count: Option<u64>,
    pub metrics: BTreeMap<Metric, MetricValue>,
    /// Throughput(N) ÷ (N × throughput(1)) against the entry of the same
    /// configuration on one device, when the comparison holds one.
    pub scaling_efficiency: Option<f64>,
    pub single_device_entry: Option<String>,
    /// Where the entry's step time goes: its run's step breakdown, or its
    /// repeats' averaged (`breakdown::average`); absent where none was measured.
    #[serde(default)]
    pub breakdown: Option<crate::breakdown::StepBreakdown>,
    /// The operator profile per sample: its run's, or its repeats' averaged;
    /// absent where no run was profiled.
    #[serde(default)]
    pub profile: Option<crate::profile::ProfileSummary>,
}

/// How sure a winner is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// The winner's 95 % interval does not overlap the runner-up's.
    Clear,
    /// The intervals overlap: the data do not separate the two.
    Overlapping,
    /// At least one of the two has no interval (one run, or a single figure
    /// such as peak memory), so the ranking rests on point values.
    PointValues,
    /// Only one entry has the metric.
    Alone,
}

/// One row of the decision matrix: which entry wins a metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Decision {
    pub metric: Metric,
    /// Index into `entries`; `None` when no entry has the metric.
    pub winner: Option<usize>,
    pub runner_up: Option<usize>,
    /// How much better the winner is than the runner-up, relative (0.12 = 12 %).
    pub margin: Option<f64>,
    pub confidence: Option<Confidence>,
}

/// Throughput over device count for entries that differ only in devices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ScalingSeries {
    /// The shared configuration without its device count.
    pub label: String,
    /// (devices, entry index) in increasing device order.
    pub points: Vec<(u32, usize)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Comparison {
    pub grouping: Grouping,
    /// The configuration parts every entry shares, said once ("" when
    /// nothing is shared); each entry's label holds the rest.
    #[serde(default)]
    pub shared_label: String,
    /// Index into `entries`.
    pub baseline: usize,
    pub entries: Vec<CompareEntry>,
    pub decisions: Vec<Decision>,
    pub scaling: Vec<ScalingSeries>,
    pub warnings: Vec<String>,
    /// Each entry's throughput against the baseline's, with its interval and
    /// verdict ([`speedup`]).
    #[serde(default)]
    pub speedups: Vec<Speedup>,
    /// For each entry with a step breakdown (the baseline's too), how its
    /// gap in time per sample to the baseline splits over the step's parts.
    #[serde(default)]
    pub explanations: Vec<EntryExplanation>,
    /// For each entry with an operator profile (the baseline's too), its gap
    /// to the baseline category by category.
    #[serde(default)]
    pub profile_gaps: Vec<EntryProfileGap>,
}

impl Comparison {
    /// The parts of the step any entry's breakdown has, in [`Part::ALL`]
    /// order (the columns of a breakdown table).
    ///
    /// [`Part::ALL`]: crate::breakdown::Part::ALL
    pub fn breakdown_parts(&self) -> Vec<crate::breakdown::Part> {
        crate::breakdown::Part::ALL
            .into_iter()
            .filter(|p| {
                self.entries
                    .iter()
                    .any(|e| e.breakdown.as_ref().is_some_and(|b| b.part(*p).is_some()))
            })
            .collect()
    }
}

/// An entry's gap to the baseline over the operator profile's categories
/// ([`crate::profile::profile_gap`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct EntryProfileGap {
    /// Index into `entries`.
    pub entry: usize,
    pub gap: crate::profile::ProfileGap,
}

/// An entry's gap to the baseline, part by part ([`crate::breakdown::explain`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct EntryExplanation {
    /// Index into `entries`.
    pub entry: usize,
    pub explanation: crate::breakdown::Explanation,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("runs = {given} run(s): expected at least 2 to compare")]
    TooFew { given: usize },
    #[error("baseline = {0}: not among the compared runs")]
    BaselineNotCompared(i64),
}

#[cfg(test)]
mod tests;

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

pub mod speedup;

pub use speedup::Speedup;

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

    fn of(self, s: &RunSummary) -> Option<f64> {
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
    /// The configuration as a person reads it.
    pub label: String,
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

/// The configuration as a person reads it: framework (with its environment),
/// model, precision, compile mode, devices, batch, data.
pub fn config_label(r: &RunRow) -> String {
    let framework = match &r.environment {
        Some(env) => format!("{}@{env}", r.framework),
        None => r.framework.to_string(),
    };
    let compile = match r.compile {
        Compile::Off => String::new(),
        c => format!(" compile={c}"),
    };
    let sharded = match r.parallel {
        Parallel::Fsdp => " fsdp",
        Parallel::Ddp => "",
    };
    format!(
        "{framework} {} {}{compile} ×{}{sharded} b{} {}",
        r.model,
        r.precision,
        r.devices,
        r.batch_size,
        r.data.as_str()
    )
}

fn metric_value(metric: Metric, runs: &[&RunRow]) -> MetricValue {
    let summaries: Vec<&RunSummary> = runs.iter().filter_map(|r| r.summary.as_ref()).collect();
    let values: Vec<f64> = summaries
        .iter()
        .filter_map(|s| metric.of(s))
        .filter(|v| v.is_finite())
        .collect();
    let missing_note = || -> Option<String> {
        match metric {
            Metric::TimeToAccuracy => {
                if summaries.iter().any(|s| s.target_reached == Some(false)) {
                    let not = summaries
                        .iter()
                        .filter(|s| s.target_reached == Some(false))
                        .count();
                    Some(format!("not reached in {not} of {} runs", runs.len()))
                } else if summaries.iter().all(|s| s.target_accuracy.is_none()) {
                    Some("no target set".into())
                } else {
                    Some("not measured".into())
                }
            }
            Metric::TimeToLoss => {
                let not = summaries
                    .iter()
                    .filter(|s| s.target_loss.is_some() && s.time_to_loss_s.is_none())
                    .count();
                if not > 0 {
                    Some(format!("not reached in {not} of {} runs", runs.len()))
                } else if summaries.iter().all(|s| s.target_loss.is_none()) {
                    Some("no target set".into())
                } else {
                    Some("not measured".into())
                }
            }
            Metric::CostPerEpoch if runs.iter().all(|r| r.price_offering.is_none()) => {
                Some("no price chosen".into())
            }
            _ => Some("not measured".into()),
        }
    };
    // An entry has a value only when every run of it has one: a mean over the
    // repeats that happened to reach a target would flatter the configuration.
    if values.is_empty() || values.len() < runs.len() {
        let mut note = missing_note();
        if !values.is_empty() {
            note =
                note.map(|n| format!("{n} (measured in {} of {} runs)", values.len(), runs.len()));
        }
        return MetricValue {
            value: None,
            ci95: None,
            note,
            delta_vs_baseline: None,
        };
    }
    if runs.len() == 1 {
        let s = summaries[0];
        let value = values[0];
        let (ci95, note) = match metric {
            Metric::Throughput => (s.throughput_ci95, None),
            // A projected epoch is samples ÷ throughput, so its cost has the
            // throughput's interval, inverted.
            Metric::CostPerEpoch if s.cost_is_projected == Some(true) => (
                match (s.throughput_samples_per_s, s.throughput_ci95) {
                    (Some(tp), Some(ci)) if ci.low > 0.0 => Some(Interval {
                        low: value * tp / ci.high,
                        high: value * tp / ci.low,
                    }),
                    _ => None,
                },
                Some("projected".to_string()),
            ),
            _ => (None, None),
        };
        return MetricValue {
            value: Some(value),
            ci95,
            note,
            delta_vs_baseline: None,
        };
    }
    let projected = metric == Metric::CostPerEpoch
        && summaries.iter().any(|s| s.cost_is_projected == Some(true));
    let (value, ci95) = if metric == Metric::Throughput {
        let owned: Vec<RunSummary> = summaries.iter().map(|s| (*s).clone()).collect();
        let agg = aggregate_repeats(&owned);
        (agg.throughput_mean_samples_per_s, agg.throughput_ci95)
    } else {
        match mean_ci95(&values) {
            Some((m, ci)) => (Some(m), Some(ci)),
            None => (values.first().copied(), None),
        }
    };
    let mut note = format!("mean of {} runs", values.len());
    if projected {
        note.push_str(", projected");
    }
    MetricValue {
        value,
        ci95,
        note: Some(note),
        delta_vs_baseline: None,
    }
}

fn decide(metric: Metric, entries: &[CompareEntry]) -> Decision {
    let mut ranked: Vec<(usize, f64, Option<Interval>)> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let m = e.metrics.get(&metric)?;
            Some((i, m.value?, m.ci95))
        })
        .collect();
    ranked.sort_by(|a, b| {
        let ord = a.1.total_cmp(&b.1);
        if metric.higher_is_better() {
            ord.reverse()
        } else {
            ord
        }
    });
    let winner = ranked.first().copied();
    let runner = ranked.get(1).copied();
    let margin = match (winner, runner) {
        (Some(w), Some(r)) if r.1 != 0.0 => Some(((w.1 - r.1) / r.1).abs()),
        _ => None,
    };
    let confidence = match (winner, runner) {
        (None, _) => None,
        (Some(_), None) => Some(Confidence::Alone),
        (Some((_, _, Some(a))), Some((_, _, Some(b)))) => {
            if a.low > b.high || b.low > a.high {
                Some(Confidence::Clear)
            } else {
                Some(Confidence::Overlapping)
            }
        }
        _ => Some(Confidence::PointValues),
    };
    Decision {
        metric,
        winner: winner.map(|w| w.0),
        runner_up: runner.map(|r| r.0),
        margin,
        confidence,
    }
}

/// Builds the comparison of `rows` (in the order given), each run an entry or
/// the repeats of each configuration one entry. The baseline is the entry that
/// holds `baseline_run` (the first entry when `None`).
pub fn compare(
    rows: &[RunRow],
    grouping: Grouping,
    baseline_run: Option<i64>,
) -> Result<Comparison, CompareError> {
    let mut groups: Vec<(String, Vec<&RunRow>)> = Vec::new();
    for r in rows {
        let key = match grouping {
            Grouping::Runs => r.id.to_string(),
            Grouping::Configurations => r.config_key.clone(),
        };
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    if groups.len() < 2 {
        return Err(CompareError::TooFew {
            given: groups.len(),
        });
    }
    let baseline = match baseline_run {
        None => 0,
        Some(id) => groups
            .iter()
            .position(|g| g.1.iter().any(|r| r.id == id))
            .ok_or(CompareError::BaselineNotCompared(id))?,
    };
    let mut entries: Vec<CompareEntry> = groups
        .iter()
        .map(|(key, runs)| {
            let first = runs[0];
            let mut label = config_label(first);
            if grouping == Grouping::Runs {
                label = format!("#{} {label}", first.id);
            } else if runs.len() > 1 {
                label = format!("{label} ({} runs)", runs.len());
            }
            CompareEntry {
                key: key.clone(),
                label,
                run_ids: runs.iter().map(|r| r.id).collect(),
                runs_completed: runs
                    .iter()
                    .filter(|r| r.status == RunStatus::Completed)
                    .count(),
                framework: first.framework.to_string(),
                model: first.model.clone(),
                precision: first.precision.to_string(),
                devices: first.devices,
                batch_size: first.batch_size,
                global_batch: first.batch_size * u64::from(first.devices),
                data: first.data.as_str().to_owned(),
                param_count: first.param_count,
                metrics: Metric::ALL
                    .into_iter()
                    .map(|m| (m, metric_value(m, runs)))
                    .collect(),
                scaling_efficiency: None,
                single_device_entry: None,
                breakdown: crate::breakdown::average(
                    &runs
                        .iter()
                        .filter(|r| r.status == RunStatus::Completed)
                        .filter_map(|r| r.summary.as_ref()?.breakdown.as_ref())
                        .collect::<Vec<_>>(),
                ),
                profile: crate::profile::average(
                    &runs
                        .iter()
                        .filter(|r| r.status == RunStatus::Completed)
                        .filter_map(|r| r.summary.as_ref()?.profile_per_sample.as_ref())
                        .collect::<Vec<_>>(),
                ),
            }
        })
        .collect();

    let base_values: BTreeMap<Metric, Option<f64>> = entries[baseline]
        .metrics
        .iter()
        .map(|(m, v)| (*m, v.value))
        .collect();
    for e in &mut entries {
        for (m, v) in e.metrics.iter_mut() {
            v.delta_vs_baseline = match (v.value, base_values.get(m).copied().flatten()) {
                (Some(a), Some(b)) if b != 0.0 => Some((a - b) / b),
                _ => None,
            };
        }
    }

    // Scaling: entries equal but for their device count.
    let stripped: Vec<&str> = groups
        .iter()
        .map(|(_, runs)| runs[0].scaling_key.as_str())
        .collect();
    let mut scaling: Vec<ScalingSeries> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, &key) in stripped.iter().enumerate() {
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let mut points: Vec<(u32, usize)> = stripped
            .iter()
            .enumerate()
            .filter(|(_, &k)| k == key)
            .map(|(j, _)| (entries[j].devices, j))
            .collect();
        points.sort_unstable();
        points.dedup_by_key(|p| p.0);
        if points.len() < 2 {
            continue;
        }
        let one = points
            .iter()
            .find(|p| p.0 == 1)
            .map(|p| p.1)
            .filter(|&j| entries[j].runs_completed > 0);
        if let Some(one) = one {
            let tp1 = entries[one].metrics[&Metric::Throughput].value;
            let one_key = entries[one].key.clone();
            for &(devices, j) in points.iter().filter(|p| p.0 > 1) {
                let tp = entries[j].metrics[&Metric::Throughput].value;
                entries[j].scaling_efficiency = scaling_efficiency(tp, devices, tp1);
                entries[j].single_device_entry = Some(one_key.clone());
            }
        }
        let e = &entries[i];
        scaling.push(ScalingSeries {
            label: format!(
                "{} {} {} b{}/device {}",
                e.framework, e.model, e.precision, e.batch_size, e.data
            ),
            points,
        });
    }

    let mut warnings = Vec::new();
    let base = &entries[baseline];
    for e in entries.iter().filter(|e| e.key != base.key) {
        if e.param_count != base.param_count {
            warnings.push(format!(
                "{} has {} parameters, the baseline {} has {}: different models are being compared",
                e.label,
                count_text(e.param_count),
                base.label,
                count_text(base.param_count)
            ));
        }
        if e.global_batch != base.global_batch {
            warnings.push(format!(
                "{} has global batch {}, the baseline has {}",
                e.label, e.global_batch, base.global_batch
            ));
        }
        if e.data != base.data {
            warnings.push(format!(
                "{} trains on {}, the baseline on {}",
                e.label, e.data, base.data
            ));
        }
    }
    for r in rows.iter().filter(|r| r.status != RunStatus::Completed) {
        warnings.push(format!(
            "run {} is {}{}: its numbers are partial",
            r.id,
            r.status.as_str(),
            r.status_reason
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default()
        ));
    }
    for r in rows {
        for w in r.summary.iter().flat_map(|s| &s.warnings) {
            warnings.push(format!("run {}: {}", r.id, w.message));
        }
    }
    let mut machines: Vec<String> = rows
        .iter()
        .map(|r| match &r.origin {
            Some(o) => format!("{} (imported)", o.hostname),
            None => "this machine".to_string(),
        })
        .collect();
    machines.sort();
    machines.dedup();
    if machines.len() > 1 {
        warnings.push(format!(
            "the runs were measured on different machines: {}",
            machines.join(", ")
        ));
    }

    let decisions = Metric::ALL
        .into_iter()
        .map(|m| decide(m, &entries))
        .collect();
    // Speed-ups against the baseline, from the runs' own throughputs.
    let throughputs = |runs: &[&RunRow]| -> Vec<(f64, Option<Interval>)> {
        runs.iter()
            .filter_map(|r| {
                let s = r.summary.as_ref()?;
                Some((s.throughput_samples_per_s?, s.throughput_ci95))
            })
            .collect()
    };
    let has_throughput = |e: &CompareEntry| {
        e.metrics
            .get(&Metric::Throughput)
            .is_some_and(|m| m.value.is_some())
    };
    let base_tp = throughputs(&groups[baseline].1);
    // A single run's steady window throughputs (for the bootstrap).
    let windows_of = |runs: &[&RunRow]| -> Vec<f64> {
        match runs {
            [r] => r
                .summary
                .as_ref()
                .map(|s| s.steady_window_throughputs.clone())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    };
    let base_windows = windows_of(&groups[baseline].1);
    let base_has_throughput = has_throughput(&entries[baseline]);
    let speedups = entries
        .iter()
        .enumerate()
        .filter(|(i, e)| *i != baseline && base_has_throughput && has_throughput(e))
        .filter_map(|(i, e)| {
            speedup::speedup(
                i,
                &e.label,
                &entries[baseline].label,
                &throughputs(&groups[i].1),
                &base_tp,
                (&windows_of(&groups[i].1), &base_windows),
            )
        })
        .collect();
    let explanations = match &entries[baseline].breakdown {
        Some(base) => entries
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != baseline)
            .filter_map(|(i, e)| {
                Some(EntryExplanation {
                    entry: i,
                    explanation: crate::breakdown::explain(
                        base,
                        e.breakdown.as_ref()?,
                        &entries[baseline].label,
                        &e.label,
                    ),
                })
            })
            .collect(),
        None => Vec::new(),
    };
    let profile_gaps = match &entries[baseline].profile {
        Some(base) => entries
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != baseline)
            .filter_map(|(i, e)| {
                Some(EntryProfileGap {
                    entry: i,
                    gap: crate::profile::profile_gap(
                        base,
                        e.profile.as_ref()?,
                        &entries[baseline].label,
                        &e.label,
                    ),
                })
            })
            .collect(),
        None => Vec::new(),
    };
    Ok(Comparison {
        grouping,
        baseline,
        entries,
        decisions,
        scaling,
        warnings,
        speedups,
        explanations,
        profile_gaps,
    })
}

fn count_text(n: Option<u64>) -> String {
    n.map_or("an unknown number of".into(), |n| n.to_string())
}

#[cfg(test)]
mod tests;

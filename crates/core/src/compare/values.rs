//! One metric over a group of runs (mean and interval), a run's label, and
//! which entry wins a metric and how sure that is.

use super::*;

/// The parts of a configuration as a person reads them, in order: framework
/// (with its environment), model, precision, compile mode, devices,
/// sharding, batch, data, threads, the environment variables the run set. Each with whether it is the default that a full
/// label leaves out (`compile=off`, `ddp`).
pub(super) fn config_parts(r: &RunRow) -> Vec<(String, bool)> {
    let framework = match &r.environment {
        // A release's own environment is named by the release (`jax==0.7.2`).
        Some(env) if env.starts_with(&format!("{}==", r.framework)) => env.clone(),
        Some(env) => format!("{}@{env}", r.framework),
        None => r.framework.to_string(),
    };
    // A training script sets its own precision, batch and data: its label
    // is the file and its arguments.
    let script = crate::models::script::short_label(&r.model);
    let own = script.is_some();
    vec![
        (framework, false),
        (script.unwrap_or_else(|| r.model.clone()), false),
        (r.precision.to_string(), own),
        (
            format!("compile={}", r.compile),
            own || r.compile == Compile::Off,
        ),
        (format!("×{}", r.devices), own),
        (
            r.parallel.as_str().to_owned(),
            own || r.parallel == Parallel::Ddp,
        ),
        (format!("b{}", r.batch_size), own),
        (r.data.as_str().to_owned(), own),
        match r.threads {
            Some(t) => (threads_words(i64::from(t)), false),
            None => ("the framework's threads".to_owned(), true),
        },
        match r.cudnn_benchmark {
            Some(on) => (cudnn_benchmark_words(on).to_owned(), false),
            None => ("cudnn.benchmark as the worker chooses".to_owned(), true),
        },
        if r.env.is_empty() {
            ("no framework variables set".to_owned(), true)
        } else {
            (crate::spec::env::label(&r.env), false)
        },
    ]
}

/// A thread count as a label says it: `1 thread`, `4 threads`.
pub fn threads_words(threads: i64) -> String {
    if threads == 1 {
        "1 thread".to_owned()
    } else {
        format!("{threads} threads")
    }
}

/// cuDNN's benchmark mode as a label says it.
pub fn cudnn_benchmark_words(on: bool) -> &'static str {
    if on {
        "cudnn.benchmark=on"
    } else {
        "cudnn.benchmark=off"
    }
}

/// The configuration as a person reads it: framework (with its environment),
/// model, precision, compile mode, devices, batch, data.
pub fn config_label(r: &RunRow) -> String {
    config_parts(r)
        .into_iter()
        .filter(|(_, default)| !default)
        .map(|(p, _)| p)
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn metric_value(metric: Metric, runs: &[&RunRow]) -> MetricValue {
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

pub(super) fn decide(metric: Metric, entries: &[CompareEntry]) -> Decision {
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

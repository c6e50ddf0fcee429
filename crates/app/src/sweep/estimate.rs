//! How long a sweep will take, estimated before it runs from the latest
//! earlier run of each configuration on this machine: its time outside the
//! steady windows (start-up, compilation, evaluations, the breakdown's extra
//! steps) plus the samples planned at its steady throughput. Configurations
//! never run here are not guessed at; the estimate says how many it covers.

use serde::Serialize;
use trainbench_core::record::RunRow;
use trainbench_core::spec::{Length, RunSpec};
use trainbench_core::summary::RunStatus;
use trainbench_core::DataSource;

use super::{PlannedConfig, SweepPlan};
use crate::error::AppResult;
use crate::workspace::Workspace;

/// A sweep's estimated duration.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DurationEstimate {
    /// Seconds for the runs estimated, one after another.
    pub seconds: f64,
    pub runs_estimated: u32,
    pub runs_total: u32,
    /// Runs with a target stop when they reach it: the estimate is then
    /// the most they take.
    pub at_most: bool,
    /// The estimate in words, with what it rests on.
    pub text: String,
}

/// What an earlier run of the same configuration measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Earlier {
    /// Its wall time, start to end.
    pub wall_s: f64,
    /// Samples trained in its timed windows.
    pub window_samples: f64,
    /// Its steady throughput, samples/s.
    pub throughput: f64,
    /// Samples in one of its epochs, where it trained on a data set.
    pub epoch_samples: Option<f64>,
}

/// Seconds a run of `spec` takes, judged by `earlier`; `None` when an
/// epoch-long run has no epoch size to go by.
pub fn run_seconds(spec: &RunSpec, earlier: &Earlier) -> Option<f64> {
    let overhead = (earlier.wall_s - earlier.window_samples / earlier.throughput).max(0.0);
    let global_batch = (spec.batch_size * u64::from(spec.world_size())) as f64;
    let samples = match spec.length {
        Length::Steps(n) => n as f64 * global_batch,
        Length::Epochs(n) => n as f64 * earlier.epoch_samples?,
        // A script's batch is its own, and it may end when it likes.
        Length::ScriptDecides => return None,
    };
    if spec.batch_size == 0 {
        return None;
    }
    Some(overhead + samples / earlier.throughput)
}

/// Whether `row` ran `cfg`'s configuration on this machine: the same
/// framework and environment, model, precision, compile mode, devices,
/// parallel mode, batch and data.
fn same_configuration(row: &RunRow, cfg: &PlannedConfig, here: &str) -> bool {
    let s = &cfg.spec.spec;
    row.status == RunStatus::Completed
        && row.origin.is_none()
        && row.measured_on.hostname.as_deref() == Some(here)
        && row.framework == cfg.framework
        && row.environment == cfg.env
        && row.model == s.model
        && row.precision == s.precision
        && row.compile == s.compile
        && row.devices == s.devices
        && row.parallel == s.parallel
        && row.batch_size == s.batch_size
        && row.data == s.data
}

fn minutes(s: f64) -> String {
    if s < 90.0 {
        format!("{:.0} s", s.max(1.0))
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

impl Workspace {
    /// The plan's duration, from earlier runs here; `None` when no
    /// configuration of it (none on this machine, none searched for its
    /// batch yet) has run before.
    pub fn estimate(&self, plan: &SweepPlan) -> AppResult<Option<DurationEstimate>> {
        let here = trainbench_store::hostname();
        let rows = self.runs()?;
        let mut seconds = 0.0;
        let mut estimated = 0u32;
        let mut at_most = false;
        for cfg in plan
            .configs
            .iter()
            .filter(|c| c.remote.is_none() && c.batch_search.is_none())
        {
            let Some(row) = rows
                .iter()
                .rev()
                .find(|r| same_configuration(r, cfg, &here))
            else {
                continue;
            };
            let Some(earlier) = self.earlier(row)? else {
                continue;
            };
            let Some(s) = run_seconds(&cfg.spec.spec, &earlier) else {
                continue;
            };
            seconds += s * f64::from(plan.repeats);
            estimated += plan.repeats;
            let spec = &cfg.spec.spec;
            at_most |= spec.stop_at_target
                && (spec.target_accuracy.is_some() || spec.target_loss.is_some());
        }
        if estimated == 0 {
            return Ok(None);
        }
        let total = u32::try_from(plan.runs()).unwrap_or(u32::MAX);
        let mut text = format!(
            "{} {} for {} of {total} run(s), from the latest earlier run of each configuration on this machine",
            if at_most { "at most about" } else { "about" },
            minutes(seconds),
            estimated,
        );
        if estimated < total {
            text.push_str(&format!(
                "; {} run(s) have no earlier run here to judge by",
                total - estimated
            ));
        }
        Ok(Some(DurationEstimate {
            seconds,
            runs_estimated: estimated,
            runs_total: total,
            at_most,
            text,
        }))
    }

    /// What `row` measured, or `None` when it lacks a figure the estimate needs.
    fn earlier(&self, row: &RunRow) -> AppResult<Option<Earlier>> {
        let (Some(start), Some(end), Some(summary)) =
            (row.started_unix_ms, row.ended_unix_ms, row.summary.as_ref())
        else {
            return Ok(None);
        };
        let Some(throughput) = summary.throughput_samples_per_s.filter(|t| *t > 0.0) else {
            return Ok(None);
        };
        let detail = self.run_detail(row.id)?;
        let window_samples: u64 = detail.windows.iter().map(|w| w.samples).sum();
        Ok(Some(Earlier {
            wall_s: (end - start) as f64 / 1000.0,
            window_samples: window_samples as f64,
            throughput,
            // A data set's epoch (a synthetic run's epoch is only priced).
            epoch_samples: summary
                .epoch_time_s
                .filter(|_| row.data != DataSource::Synthetic)
                .map(|t| t * throughput),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trainbench_core::spec::{CheckedSpec, RawSpec};

    fn spec(length: &str) -> RunSpec {
        let raw: RawSpec = serde_json::from_value(serde_json::json!({
            "model": "resnet_mini", "batch_size": 32, "data": "mnist",
            "steps": if length == "steps" { serde_json::json!(200) } else { serde_json::Value::Null },
            "epochs": if length == "epochs" { serde_json::json!(3) } else { serde_json::Value::Null },
        }))
        .unwrap();
        CheckedSpec::new(raw).unwrap().spec
    }

    #[test]
    fn a_run_takes_its_overhead_plus_its_samples_at_the_steady_throughput() {
        // Earlier: 20 s in all, 3,200 samples in windows at 400 samples/s
        // (8 s), so 12 s outside them; an epoch of 5,000 samples.
        let earlier = Earlier {
            wall_s: 20.0,
            window_samples: 3200.0,
            throughput: 400.0,
            epoch_samples: Some(5000.0),
        };
        // 200 steps × 32 = 6,400 samples: 16 s, plus 12.
        assert_eq!(run_seconds(&spec("steps"), &earlier), Some(28.0));
        // 3 epochs × 5,000 samples: 37.5 s, plus 12.
        assert_eq!(run_seconds(&spec("epochs"), &earlier), Some(49.5));
        let no_epoch = Earlier {
            epoch_samples: None,
            ..earlier
        };
        assert_eq!(run_seconds(&spec("epochs"), &no_epoch), None);
    }

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(minutes(42.4), "42 s");
        assert_eq!(minutes(600.0), "10 min");
        assert_eq!(minutes(7200.0), "2.0 h");
    }
}

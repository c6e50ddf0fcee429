//! A search's frontier from its stored runs: each candidate's throughput,
//! peak memory and cost per epoch (the geometric means of its completed
//! runs in the last round it ran), then [`trainbench_core::tune::frontier`].

use trainbench_core::compare::Metric;
use trainbench_core::summary::RunStatus;
use trainbench_core::tune::frontier::{frontier, geometric_mean, Frontier, Point};
use trainbench_core::tune::method::TuneOutcome;

use crate::error::AppResult;
use crate::workspace::Workspace;

impl Workspace {
    /// The frontier of `outcome` (a search run here, or one stored).
    pub fn tune_frontier(&self, outcome: &TuneOutcome) -> AppResult<Frontier> {
        let mut points = Vec::new();
        for (i, c) in outcome.candidates.iter().enumerate() {
            let Some(round) = c
                .rounds
                .iter()
                .rev()
                .find(|r| r.runs.iter().any(|run| run.value.is_some()))
            else {
                continue;
            };
            let ids: Vec<i64> = round
                .runs
                .iter()
                .filter(|r| r.value.is_some())
                .map(|r| r.run_id)
                .collect();
            let summaries: Vec<_> = self
                .runs_by_id(&ids)?
                .into_iter()
                .filter(|r| r.status == RunStatus::Completed)
                .filter_map(|r| r.summary)
                .collect();
            let mean = |m: Metric| {
                let v: Vec<f64> = summaries.iter().filter_map(|s| m.of(s)).collect();
                geometric_mean(&v)
            };
            let Some(samples_per_s) = mean(Metric::Throughput) else {
                continue;
            };
            points.push(Point {
                candidate: i,
                label: c.label.clone(),
                samples_per_s,
                peak_memory_mib: mean(Metric::PeakMemory),
                cost_per_epoch_usd: mean(Metric::CostPerEpoch),
            });
        }
        Ok(frontier(&points))
    }
}

//! A search planned on this machine: the space's candidates, each checked
//! as `trainbench run` would check it (one single-valued sweep request per
//! candidate, so each has its own configuration and the exact request that
//! reproduces it); those refused are kept with the reason.

use serde::{Deserialize, Serialize};
use trainbench_core::spec::{CheckedSpec, Device};
use trainbench_core::tune::method::{RoundPlan, Settings};
use trainbench_core::tune::space::{space, Axes, FrameworkAxes, Offer};
use trainbench_core::tune::{Budget, Given, Objective, DEFAULT_BUDGET_S};

use super::groups::{group_requests, thread_choices, with_knobs, BatchGroup, HALVES};
use crate::error::{AppError, AppResult};
use crate::host::Host;
use crate::job::Rejected;
use crate::sweep::model_file::ModelFiles;
use crate::sweep::{plan_request, PlannedConfig, SweepRequest};

/// Steps of a probe, and the steps per timing window, when none are given:
/// ten windows, so that one probe has an interval of its own.
pub const PROBE_STEPS: i64 = 40;
pub const PROBE_WINDOW_STEPS: i64 = 4;
/// With time to accuracy: the most steps a run may take to reach the
/// target, when `--steps` is not given.
pub const TARGET_STEPS: i64 = 1000;

/// What to search: the run settings every candidate shares (`base`: its
/// framework, compile, precision, batch and threads lists are ignored), the
/// axes, the objective and the budget.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TuneRequest {
    pub base: SweepRequest,
    pub axes: Axes,
    /// `throughput`, `memory` or `cost` (see `Objective`).
    pub objective: String,
    /// `15m`, `90s`, `1h30m`; `None`: 15 minutes.
    pub budget: Option<String>,
    /// Runs each of the winner and the runner-up in the confirmation
    /// (at least 2); `None`: 3.
    pub confirm_repeats: Option<u32>,
}

/// One candidate that can run.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub config: PlannedConfig,
    /// The single-valued request that plans it (what reproduces it).
    pub request: SweepRequest,
}

impl Candidate {
    /// Its spec with the probe's length times `factor`.
    /// (For time to accuracy the caller passes 1: every run trains to the
    /// target, `--steps` being the most it may take.)
    pub fn spec_at(&self, factor: u32) -> AppResult<CheckedSpec> {
        let mut raw = self.config.spec.raw.clone();
        let probe = raw.steps.unwrap_or(PROBE_STEPS);
        raw.steps = Some(probe.saturating_mul(i64::from(factor)));
        Ok(CheckedSpec::new(raw)?)
    }
}

/// A checked search.
#[derive(Debug, Clone)]
pub struct TunePlan {
    pub model: String,
    pub candidates: Vec<Candidate>,
    /// Candidates refused before anything runs, with the reason.
    pub unsupported: Vec<Rejected>,
    pub settings: Settings,
    pub budget: Budget,
    pub shares: Vec<FrameworkAxes>,
    pub price: Option<String>,
    pub memory_limit_bytes: Option<u64>,
    pub epoch_samples: Option<u64>,
    /// A model file named (`PATH.py:FUNCTION`), read once: kept in the
    /// store beside the runs.
    pub model_files: ModelFiles,
    /// With `--batch-size max`: the largest-batch searches to run before
    /// the race, whose batches then make the candidates.
    pub batch_groups: Vec<BatchGroup>,
}

impl TunePlan {
    /// The steps of a round's runs as a multiple of the probe's: the
    /// round's own factor, or 1 for time to accuracy (each run trains to
    /// the target).
    pub fn length_factor(&self, round: &RoundPlan) -> u32 {
        if self.settings.objective.rounds_lengthen() {
            round.length_factor
        } else {
            1
        }
    }

    /// The candidates the race will have: those planned, and those the
    /// batch searches will give (at most [`HALVES`] batches each, at each
    /// of their thread counts).
    pub fn expected_candidates(&self) -> usize {
        self.candidates.len()
            + self
                .batch_groups
                .iter()
                .map(|g| HALVES * g.threads.len())
                .sum::<usize>()
    }
}

fn one<'a, T: std::fmt::Display>(field: &str, values: &'a [T]) -> AppResult<Option<&'a T>> {
    if values.len() > 1 {
        let text: Vec<String> = values.iter().map(ToString::to_string).collect();
        return Err(AppError::bad_input(
            field,
            text.join(","),
            "one value (a search compares frameworks, compile modes, precisions, batches, threads, device counts, loader workers and cuDNN modes; run one search per value)",
        ));
    }
    Ok(values.first())
}

/// The settings a search does not vary, checked (`gpu`: its runs train
/// on a GPU).
fn check_base(req: &TuneRequest, gpu: bool) -> AppResult<(String, Settings, Budget)> {
    let base = &req.base;
    let model = one("model", &base.model)?
        .cloned()
        .ok_or_else(|| AppError::bad_input("model", "none", "a model (--model M)"))?;
    if req.axes.devices.is_empty() {
        one("devices", &base.devices)?;
    }
    if base.host.is_some() {
        return Err(AppError::bad_input(
            "host",
            base.host.as_deref().unwrap_or_default(),
            "this machine (a search runs here; run `trainbench tune` on the host)",
        ));
    }
    if base.epochs.is_some() {
        return Err(AppError::bad_input(
            "epochs",
            base.epochs.unwrap_or_default(),
            "none: a search sets each round's length in steps (--steps is the probe's)",
        ));
    }
    let objective = Objective::parse(&req.objective)?;
    objective.check(Given {
        priced: base.price.is_some(),
        target: base.target_accuracy.is_some() || base.target_loss.is_some(),
        gpu,
    })?;
    let budget = match &req.budget {
        Some(text) => Budget::parse(text)?,
        None => Budget {
            seconds: DEFAULT_BUDGET_S,
        },
    };
    let mut settings = Settings::new(objective);
    if let Some(n) = req.confirm_repeats {
        if !(2..=20).contains(&n) {
            return Err(AppError::bad_input(
                "repeats",
                n,
                "a whole number from 2 to 20 (the runs of the winner and the runner-up in the confirmation)",
            ));
        }
        settings.confirm_repeats = n;
    }
    Ok((model, settings, budget))
}

/// Every combination of one framework's share, as single-valued requests.
fn requests_of(base: &SweepRequest, share: &FrameworkAxes) -> Vec<SweepRequest> {
    let threads = thread_choices(share);
    let mut out = Vec::new();
    for compile in &share.compile {
        for precision in &share.precision {
            for &batch in &share.batch_size {
                for t in &threads {
                    out.extend(with_knobs(
                        vec![SweepRequest {
                            framework: vec![share.framework.clone()],
                            compile: vec![compile.clone()],
                            precision: vec![precision.clone()],
                            batch_size: vec![batch],
                            threads: t.iter().copied().collect(),
                            repeats: 1,
                            ..base.clone()
                        }],
                        share,
                    ));
                }
            }
        }
    }
    out
}

/// The frameworks' requests taken in turn (one of each, then the next of
/// each …), so that a probe round cut short by the budget has measured
/// every framework, not only the first.
pub(super) fn round_robin<T>(mut lists: Vec<Vec<T>>) -> Vec<T> {
    let mut out = Vec::new();
    for list in &mut lists {
        list.reverse();
    }
    while lists.iter().any(|l| !l.is_empty()) {
        out.extend(lists.iter_mut().filter_map(Vec::pop));
    }
    out
}

/// Checks `req` on this machine: every candidate of the space planned as
/// `trainbench run` would plan it.
pub fn plan_tune(req: &TuneRequest, host: &Host) -> AppResult<TunePlan> {
    let device = match &req.base.device {
        Some(d) => Device::parse(d)?,
        None if host.gpu_count() > 0 => Device::Cuda(0),
        None => Device::Cpu,
    };
    let (model, settings, budget) = check_base(req, device.is_cuda())?;
    let mut base = req.base.clone();
    let probe = if settings.objective.rounds_lengthen() {
        PROBE_STEPS
    } else {
        TARGET_STEPS
    };
    base.steps = Some(base.steps.unwrap_or(probe));
    base.window_steps = Some(base.window_steps.unwrap_or(PROBE_WINDOW_STEPS));
    let installed: Vec<String> = crate::frameworks::installed_frameworks()
        .into_iter()
        .filter(|k| !k.contains('@'))
        .collect();
    let offer = Offer {
        installed,
        device,
        cpu_cores: host.machine().cpu_cores,
    };
    let shares = space(&req.axes, &offer)?;
    let mut candidates = Vec::new();
    let mut unsupported = Vec::new();
    let (mut memory_limit_bytes, mut epoch_samples) = (None, None);
    let mut model_files = ModelFiles::default();
    let mut batch_groups = Vec::new();
    let requests: Vec<(SweepRequest, Vec<Option<i64>>)> = if base.batch_max {
        shares
            .iter()
            .flat_map(|s| group_requests(&base, s))
            .collect()
    } else {
        round_robin(shares.iter().map(|s| requests_of(&base, s)).collect())
            .into_iter()
            .map(|r| (r, Vec::new()))
            .collect()
    };
    for (request, threads) in requests {
        let plan = plan_request(&request, host)?;
        if let Some(r) = plan.rejected.iter().find(|r| r.is_shared()) {
            return Err(r.clone().into());
        }
        unsupported.extend(plan.rejected.iter().cloned());
        memory_limit_bytes = plan.memory_limit_bytes;
        epoch_samples = plan.epoch_samples;
        model_files = plan.model_files;
        for config in plan.configs {
            if config.batch_search.is_some() {
                batch_groups.push(BatchGroup {
                    request: request.clone(),
                    config,
                    threads: threads.clone(),
                });
            } else {
                candidates.push(Candidate {
                    config,
                    request: request.clone(),
                });
            }
        }
    }
    Ok(TunePlan {
        model,
        candidates,
        unsupported,
        settings,
        budget,
        shares,
        price: req.base.price.clone(),
        memory_limit_bytes,
        epoch_samples,
        model_files,
        batch_groups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frameworks_take_turns_so_a_short_budget_probes_each() {
        let req = |f: &str, b: i64| SweepRequest {
            framework: vec![f.into()],
            batch_size: vec![b],
            ..SweepRequest::default()
        };
        let lists = vec![
            vec![req("tch", 1), req("tch", 2), req("tch", 3)],
            vec![req("jax", 1)],
            vec![req("pytorch", 1), req("pytorch", 2)],
        ];
        let order: Vec<(String, i64)> = round_robin(lists)
            .into_iter()
            .map(|r| (r.framework[0].clone(), r.batch_size[0]))
            .collect();
        let names: Vec<String> = order.iter().map(|(f, b)| format!("{f}{b}")).collect();
        assert_eq!(
            names,
            ["tch1", "jax1", "pytorch1", "tch2", "pytorch2", "tch3"]
        );
    }
}

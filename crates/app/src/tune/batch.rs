//! `tune --batch-size max`: the batch axis becomes the largest batch that
//! fits and its halves. Before the race, each framework × compile mode ×
//! precision has its own largest batch searched (the same search as `run
//! --batch-size max`: probes in fresh workers, each stored in the search's
//! sweep, counted against the budget); that group then gives candidates at
//! the batch found, its half and its quarter, at every thread count. A
//! group where no batch fits is recorded with the reason and the search
//! goes on without it.

use super::groups::{halves, BatchGroup};
use super::plan::{Candidate, TunePlan};
use super::TuneShell;
use crate::error::AppResult;
use crate::host::Host;
use crate::sweep::{plan_request, SweepPlan, SweepRequest};
use crate::workspace::Workspace;

/// What one group's search found: the largest batch, or why none.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FoundBatch {
    /// The group's configuration at `bmax` (the key its probes are stored
    /// under in the sweep).
    pub group: String,
    pub largest: Option<u32>,
    /// Why no batch fitted.
    pub refused: Option<String>,
}

impl Workspace {
    /// Runs the largest-batch search of every group of `plan` (probes
    /// stored under `sweep`), then adds the candidates at each batch found
    /// and its halves; a group where none fitted joins the refusals.
    pub(super) fn expand_batch_groups(
        &mut self,
        host: &Host,
        plan: &mut TunePlan,
        sweep: i64,
        started: std::time::Instant,
        shell: &mut dyn TuneShell,
    ) -> AppResult<Vec<FoundBatch>> {
        let groups = std::mem::take(&mut plan.batch_groups);
        if groups.is_empty() {
            return Ok(Vec::new());
        }
        let template = SweepPlan {
            configs: Vec::new(),
            rejected: Vec::new(),
            repeats: 1,
            memory_limit_bytes: plan.memory_limit_bytes,
            epoch_samples: plan.epoch_samples,
            notes: Vec::new(),
            to_install: Vec::new(),
            model_files: plan.model_files.clone(),
        };
        shell.say(format!(
            "the largest batch that fits, searched for {} group(s) (framework × compile × precision) before the race",
            groups.len()
        ));
        let mut found = Vec::new();
        // Refusals of the searches first, then of the candidates planned.
        let (mut refused, mut later) = (Vec::new(), Vec::new());
        let mut per_framework: Vec<Vec<Candidate>> = Vec::new();
        // One group at a time, the budget read before each: a search ends
        // at most one group's probes past its budget.
        for g in &groups {
            if shell.cancelled() {
                return Err(crate::error::AppError::Cancelled);
            }
            let mut one = SweepPlan {
                configs: vec![g.config.clone()],
                ..template.clone()
            };
            if plan.budget.may_start(started.elapsed().as_secs_f64()) {
                shell.search_batches(self, host, &mut one, sweep)?;
            } else {
                one.configs.clear();
                one.rejected.push(crate::job::Rejected::combination(
                    g.config.label.clone(),
                    "batch_size",
                    "batch_size = max: not searched, the budget ran out first".into(),
                ));
            }
            for r in one.rejected {
                found.push(FoundBatch {
                    group: g.config.label.clone(),
                    largest: None,
                    refused: Some(r.message.clone()),
                });
                refused.push(r);
            }
            for cfg in one.configs {
                let largest = u32::try_from(cfg.spec.spec.batch_size).unwrap_or(u32::MAX);
                found.push(FoundBatch {
                    group: g.config.label.clone(),
                    largest: Some(largest),
                    refused: None,
                });
                let list = candidates_at(host, &mut later, g, largest)?;
                match per_framework
                    .iter_mut()
                    .find(|l| l.first().map(|c| &c.request.framework) == Some(&g.request.framework))
                {
                    Some(l) => l.extend(list),
                    None => per_framework.push(list),
                }
            }
        }
        plan.unsupported.extend(refused);
        plan.unsupported.extend(later);
        plan.candidates = super::plan::round_robin(per_framework);
        Ok(found)
    }
}

/// A group's candidates at the batch found and its halves, at every
/// thread count, each planned as `trainbench run` plans it; combinations
/// refused join `refused`.
fn candidates_at(
    host: &Host,
    refused: &mut Vec<crate::job::Rejected>,
    group: &BatchGroup,
    largest: u32,
) -> AppResult<Vec<Candidate>> {
    let mut out = Vec::new();
    for batch in halves(largest) {
        for t in &group.threads {
            let request = SweepRequest {
                batch_size: vec![batch],
                batch_max: false,
                batch_cap: None,
                batch_from: None,
                threads: t.iter().copied().collect(),
                ..group.request.clone()
            };
            let planned = plan_request(&request, host)?;
            refused.extend(planned.rejected);
            out.extend(planned.configs.into_iter().map(|config| Candidate {
                config,
                request: request.clone(),
            }));
        }
    }
    Ok(out)
}

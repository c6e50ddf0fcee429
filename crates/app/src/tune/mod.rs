//! `tune`: the best way to train one model on this machine, searched. The
//! core's [`Search`] says which candidates run next and how long; each run
//! goes through the same checks, queue and runner as `trainbench run` (a
//! row in one sweep, a fresh worker, its summary stored); the search's
//! trace is stored beside the sweep after every run (`tunes`), so a search
//! stopped part-way keeps what it found. The clock is read before each run:
//! none starts once the budget is spent. The answer carries the winner's
//! outlook: its epoch here and projected on other GPUs (`outlook`).

use std::time::Instant;

use serde::Serialize;
use trainbench_core::summary::RunStatus;
use trainbench_core::tune::method::{RoundPlan, RunResult, Search, Step, TuneOutcome};
use trainbench_core::tune::{Ended, Objective};
use trainbench_store::{NewRun, StoredTune};

use crate::error::{AppError, AppResult};
use crate::host::Host;
use crate::job::{Finished, Job};
use crate::workspace::Workspace;

mod batch;
mod frontier;
mod groups;
pub mod outlook;
mod plan;
pub mod report;
pub mod reproduce;
mod told;
pub mod view;
pub use batch::FoundBatch;
pub use groups::{halves, HALVES};
pub use plan::{plan_tune, Candidate, TunePlan, TuneRequest, PROBE_STEPS, PROBE_WINDOW_STEPS};
pub use told::Told;

/// What a shell does for a search: run one job (with its progress and
/// cancel), say a line, tell whether the person asked to stop.
pub trait TuneShell {
    fn run(&mut self, ws: &mut Workspace, host: &Host, job: &Job) -> AppResult<Finished>;
    fn say(&mut self, line: String);
    /// Checked before each run: a search asked to stop starts nothing more.
    fn cancelled(&self) -> bool;
    /// Runs the largest-batch searches of `plan`
    /// ([`Workspace::search_batches`], its probes stored under `sweep`).
    fn search_batches(
        &mut self,
        ws: &mut Workspace,
        host: &Host,
        plan: &mut crate::sweep::SweepPlan,
        sweep: i64,
    ) -> AppResult<()>;
    /// The search's trace as just stored (before the first run, after
    /// each, at the end): a shell that shows the candidates live keeps it.
    fn traced(&mut self, _plan: &TunePlan, _sweep: i64, _outcome: &TuneOutcome) {}
}

/// A finished (or stopped) search and where it is stored.
#[derive(Debug, Clone, Serialize)]
pub struct Tuned {
    pub sweep_id: i64,
    pub outcome: TuneOutcome,
    pub run_ids: Vec<i64>,
    pub elapsed_s: f64,
    pub budget_s: f64,
    /// The winner's `trainbench run` command and TOML file.
    pub command: Option<String>,
    pub toml: Option<String>,
    /// Why the runner-up lost: its last run's step breakdown against the
    /// winner's (where both were measured and the objective is throughput).
    pub why_runner_up_lost: Option<crate::explain::ExplainReport>,
    /// The candidates no other beats on both throughput and peak memory
    /// (and cost per epoch, when priced).
    pub frontier: trainbench_core::tune::frontier::Frontier,
    /// With `--batch-size max`: the largest batch each group's search
    /// found, or why none fitted (its probes are stored in the sweep).
    pub batches: Vec<FoundBatch>,
    /// The winner's epoch here, and projected on the GPUs of the peak table.
    pub outlook: Option<outlook::Outlook>,
}

/// The last run that measured candidate `c`, if any.
pub fn last_measured(outcome: &TuneOutcome, c: Option<usize>) -> Option<i64> {
    outcome
        .candidates
        .get(c?)?
        .rounds
        .iter()
        .flat_map(|r| &r.runs)
        .filter(|r| r.value.is_some())
        .map(|r| r.run_id)
        .next_back()
}

/// A round said before it runs.
fn round_words(plan: &TunePlan, round: &RoundPlan) -> String {
    let mut distinct = round.order.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let steps = plan
        .candidates
        .first()
        .and_then(|c| c.spec_at(plan.length_factor(round)).ok())
        .and_then(|s| s.raw.steps)
        .unwrap_or_default();
    let length = if plan.settings.objective.rounds_lengthen() {
        format!("{steps} steps each")
    } else {
        format!("each to the target, at most {steps} steps")
    };
    format!(
        "round {} ({}): {} run(s) of {} candidate(s), {length}",
        round.round,
        round.kind.words(),
        round.order.len(),
        distinct.len(),
    )
}

impl Workspace {
    /// Runs the search `plan` to its end, its budget's end or a cancel;
    /// every run stored in one sweep, the trace beside it.
    pub fn tune(
        &mut self,
        host: &Host,
        plan: &mut TunePlan,
        command: &str,
        shell: &mut dyn TuneShell,
    ) -> AppResult<Tuned> {
        if let Some(r) = self.check_price(plan.price.as_deref())? {
            return Err(r.into());
        }
        let started = Instant::now();
        for f in plan.model_files.read_files() {
            self.store.keep_model_file(&f.sha256, &f.model, &f.bytes)?;
        }
        let count = u32::try_from(plan.expected_candidates()).unwrap_or(u32::MAX);
        let sweep = self
            .store
            .create_sweep(command, count, plan.settings.confirm_repeats)?;
        let batches = self.expand_batch_groups(host, plan, sweep, started, shell)?;
        let plan: &TunePlan = plan;
        let labels = plan
            .candidates
            .iter()
            .map(|c| c.config.label.clone())
            .collect();
        let mut search = Search::new(labels, plan.settings);
        for r in &plan.unsupported {
            search.add_unsupported(
                r.label.clone().unwrap_or_else(|| r.field.clone()),
                r.message.clone(),
            );
        }
        let mut run_ids = Vec::new();
        let mut repeats = vec![0u32; plan.candidates.len()];
        self.trace(shell, sweep, plan, &search.snapshot())?;
        let outcome = 'search: loop {
            let round = match search.next_step() {
                Step::Done(o) => break o,
                Step::Run(round) => round,
            };
            shell.say(round_words(plan, &round));
            for &c in &round.order {
                let elapsed = started.elapsed().as_secs_f64();
                if shell.cancelled() {
                    break 'search search.end(Ended::Cancelled);
                }
                if !plan.budget.may_start(elapsed) {
                    break 'search search.end(Ended::Budget);
                }
                let job =
                    self.queue_candidate(plan, sweep, c, repeats[c], plan.length_factor(&round))?;
                repeats[c] += 1;
                run_ids.push(job.run_id);
                let finished = shell.run(self, host, &job)?;
                let result = self.figure_of(plan, &finished)?;
                search.record(c, job.run_id, elapsed, result);
                self.trace(shell, sweep, plan, &search.snapshot())?;
                if finished.status == RunStatus::Cancelled {
                    break 'search search.end(Ended::Cancelled);
                }
            }
        };
        self.trace(shell, sweep, plan, &outcome)?;
        let winner = outcome.winner.and_then(|w| plan.candidates.get(w));
        let why_runner_up_lost = match (
            plan.settings.objective,
            last_measured(&outcome, outcome.winner),
            last_measured(&outcome, outcome.runner_up),
        ) {
            (Objective::Throughput, Some(w), Some(r)) => {
                crate::explain::explain_runs(self, w, r, false).ok()
            }
            _ => None,
        };
        let frontier = self.tune_frontier(&outcome)?;
        let outlook =
            last_measured(&outcome, outcome.winner).and_then(|r| outlook::outlook(self, r));
        Ok(Tuned {
            outlook,
            why_runner_up_lost,
            frontier,
            batches,
            sweep_id: sweep,
            command: winner.map(|c| reproduce::command(&c.request)),
            toml: winner.map(|c| reproduce::toml(&c.request)),
            outcome,
            run_ids,
            elapsed_s: started.elapsed().as_secs_f64(),
            budget_s: plan.budget.seconds,
        })
    }

    /// One run of candidate `c` at `factor` times the probe's length,
    /// stored as queued in the search's sweep.
    fn queue_candidate(
        &self,
        plan: &TunePlan,
        sweep: i64,
        c: usize,
        repeat: u32,
        factor: u32,
    ) -> AppResult<Job> {
        let cand = &plan.candidates[c];
        let cfg = &cand.config;
        let spec = cand.spec_at(factor)?;
        let id = self.store.insert_run(&NewRun {
            sweep_id: Some(sweep),
            repeat_index: repeat,
            price_offering: plan.price.clone(),
            epoch_samples: plan.epoch_samples,
            ..NewRun::of_spec(cfg.framework, cfg.env.clone(), &spec)
        })?;
        Ok(Job {
            run_id: id,
            spec,
            label: cfg.label.clone(),
            config: c,
            worker: cfg.worker.clone(),
            memory_limit_bytes: plan.memory_limit_bytes,
            remote: None,
        })
    }

    /// The objective's figure of a run that ended, or why it has none.
    fn figure_of(&self, plan: &TunePlan, f: &Finished) -> AppResult<RunResult> {
        let objective = plan.settings.objective;
        let rows = self.runs_by_id(&[f.run_id])?;
        let row = rows
            .first()
            .ok_or_else(|| AppError::Internal(format!("run {} is not stored", f.run_id)))?;
        if row.status != RunStatus::Completed {
            let why = row
                .status_reason
                .clone()
                .or_else(|| f.reason.clone())
                .unwrap_or_else(|| "no reason recorded".into());
            return Ok(RunResult::Failed {
                reason: format!("{} ({why})", row.status.as_str()),
            });
        }
        Ok(
            match row.summary.as_ref().and_then(|s| objective.figure(s)) {
                Some((value, ci95)) => RunResult::Measured { value, ci95 },
                None => RunResult::Failed {
                    reason: format!("no {} measured", objective.title()),
                },
            },
        )
    }

    /// Stores the trace, then hands it to the shell.
    fn trace(
        &self,
        shell: &mut dyn TuneShell,
        sweep: i64,
        plan: &TunePlan,
        outcome: &TuneOutcome,
    ) -> AppResult<()> {
        self.save_trace(sweep, plan, outcome)?;
        shell.traced(plan, sweep, outcome);
        Ok(())
    }

    fn save_trace(&self, sweep: i64, plan: &TunePlan, outcome: &TuneOutcome) -> AppResult<()> {
        let outcome_json = serde_json::to_string(outcome)
            .map_err(|e| AppError::Internal(format!("cannot write the search's trace: {e}")))?;
        self.store.save_tune(&StoredTune {
            sweep_id: sweep,
            model: plan.model.clone(),
            objective: plan.settings.objective.key().into(),
            outcome_json,
            updated_unix_ms: 0,
        })?;
        Ok(())
    }

    /// The search stored beside `sweep`, if it was one.
    pub fn tune_trace(&self, sweep: i64) -> AppResult<Option<TuneOutcome>> {
        let Some(t) = self.store.tune(sweep)? else {
            return Ok(None);
        };
        serde_json::from_str(&t.outcome_json)
            .map(Some)
            .map_err(|e| {
                AppError::Internal(format!("sweep {sweep}'s stored search cannot be read: {e}"))
            })
    }
}

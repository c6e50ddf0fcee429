//! A performance gate, as both shells run it: a baseline and a candidate
//! (the shared run settings with what each side changes, [`sides`]), each
//! checked as one configuration on this machine, then run in pairs A B,
//! B A, … (core's [`Gate`] decides when the ratio's interval has settled
//! against the threshold, or the most runs are reached), every run stored
//! in one sweep, the verdict stored beside it; [`report`] writes it as
//! Markdown and JUnit XML.

use serde::Serialize;
use trainbench_core::compare::Metric;
use trainbench_core::gate::{pair_order, Gate, Outcome, Rule, Side, Step};
use trainbench_core::summary::RunStatus;
use trainbench_store::{NewRun, StoredGate};

use crate::error::{AppError, AppResult};
use crate::host::Host;
use crate::job::{Finished, Job};
use crate::sweep::{PlannedConfig, SweepPlan, SweepRequest};
use crate::workspace::Workspace;

pub mod report;
pub mod sides;

pub use sides::SideChange;

/// What to gate: the shared run settings (`base`; its `repeats` unused),
/// what each side changes, and the rule.
#[derive(Debug, Clone)]
pub struct GateRequest {
    pub base: SweepRequest,
    pub baseline: SideChange,
    pub candidate: SideChange,
    /// The slowdown allowed, a fraction (0.03 for 3 %).
    pub max_slowdown: f64,
    pub min_runs: u32,
    pub max_runs: u32,
}

/// One side, checked: its one configuration and its plan (model files read).
#[derive(Debug, Clone)]
pub struct PlannedSide {
    pub side: Side,
    /// What the side runs, in words.
    pub said: String,
    pub config: PlannedConfig,
    pub plan: SweepPlan,
    pub price: Option<String>,
}

/// A checked gate.
#[derive(Debug, Clone)]
pub struct GatePlan {
    pub rule: Rule,
    pub baseline: PlannedSide,
    pub candidate: PlannedSide,
}

impl GatePlan {
    fn side(&self, s: Side) -> &PlannedSide {
        match s {
            Side::Baseline => &self.baseline,
            Side::Candidate => &self.candidate,
        }
    }
}

/// How the gate ended.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "ended", rename_all = "snake_case")]
pub enum Ended {
    /// A verdict: pass, fail or undecided.
    Decided(Outcome),
    /// A run of `side` did not measure a throughput (it failed, or its
    /// script never reported a step): nothing can be decided.
    SideFailed {
        side: Side,
        run_id: i64,
        reason: String,
    },
}

/// A finished gate and where it is stored.
#[derive(Debug, Clone, Serialize)]
pub struct Gated {
    pub sweep_id: i64,
    pub baseline: String,
    pub candidate: String,
    pub max_slowdown: f64,
    pub ended: Ended,
    /// Every run, in the order they ran, with its side.
    pub runs: Vec<(Side, i64)>,
}

impl Gated {
    /// The exit status: 0 pass, 1 fail, 3 undecided, 2 a side failed.
    pub fn exit_code(&self) -> u8 {
        match &self.ended {
            Ended::Decided(o) => o.verdict.exit_code(),
            Ended::SideFailed { .. } => 2,
        }
    }

    /// The verdict's key: `pass`, `fail`, `undecided` or `error`.
    pub fn verdict_key(&self) -> &'static str {
        match &self.ended {
            Ended::Decided(o) => o.verdict.key(),
            Ended::SideFailed { .. } => "error",
        }
    }

    /// The verdict (or the failure) in one sentence.
    pub fn message(&self) -> String {
        match &self.ended {
            Ended::Decided(o) => o.text.clone(),
            Ended::SideFailed {
                side,
                run_id,
                reason,
            } => format!(
                "{0}: run {run_id} of the {0} measured no throughput ({reason}); the runs that ran are stored in sweep {1}",
                side.key(),
                self.sweep_id
            ),
        }
    }

    /// The error a shell exits with when a side failed (bad input naming
    /// the side), else `None`.
    pub fn side_error(&self) -> Option<AppError> {
        match &self.ended {
            Ended::SideFailed { side, .. } => Some(AppError::bad(side.key(), self.message())),
            Ended::Decided(_) => None,
        }
    }
}

/// What a shell does for the gate: run queued jobs (with its progress and
/// Ctrl-C), say a line.
pub trait GateShell {
    fn run(&mut self, ws: &mut Workspace, host: &Host, jobs: &[Job]) -> AppResult<Vec<Finished>>;
    fn say(&mut self, line: String);
}

/// Where revisions of a script are copied: `$TRAINBENCH_HOME/gate`.
pub fn copies_folder() -> std::path::PathBuf {
    trainbench_runner::envs::home().join("gate")
}

impl Workspace {
    /// Checks `req` on this machine: the rule, then each side as one
    /// configuration (a refusal names the side's flag when the side's change
    /// is at fault: `candidate_script`).
    pub fn plan_gate(&self, req: &GateRequest, host: &Host) -> AppResult<GatePlan> {
        let rule = Rule::new(req.max_slowdown, req.min_runs, req.max_runs)?;
        if req.baseline.is_empty() && req.candidate.is_empty() {
            return Err(AppError::bad(
                "candidate",
                "candidate is not given: expected what the candidate changes (--candidate-script, --candidate-model, --candidate-env, --candidate-framework or --git-rev BASE..HEAD), and the baseline's where it differs from the run flags",
            ));
        }
        if let Some(h) = &req.base.host {
            return Err(AppError::bad_input(
                "host",
                h,
                "this machine (a gate interleaves both sides on one machine; on a remote host, run `trainbench gate` there)",
            ));
        }
        let copies = copies_folder();
        let side = |s: Side, change: &SideChange| -> AppResult<PlannedSide> {
            let (sreq, said) = sides::side_request(&req.base, s, change, &copies)?;
            let plan = self.plan(&sreq, host)?;
            if let Some(r) = plan.rejected.first() {
                return Err(AppError::bad(
                    &blame(s, change, &r.field),
                    format!("{}: {r}", s.key()),
                ));
            }
            plan.check_installed().map_err(|e| {
                AppError::bad(&blame(s, change, "framework"), format!("{}: {e}", s.key()))
            })?;
            let config = match plan.configs.as_slice() {
                [one] => one.clone(),
                many => {
                    return Err(AppError::bad(
                        "model",
                        format!(
                            "{}: a gate runs one configuration per side; these settings make {} (give one model, framework, precision, batch size …)",
                            s.key(),
                            many.len()
                        ),
                    ))
                }
            };
            Ok(PlannedSide {
                side: s,
                said,
                config,
                price: sreq.price.clone(),
                plan,
            })
        };
        Ok(GatePlan {
            rule,
            baseline: side(Side::Baseline, &req.baseline)?,
            candidate: side(Side::Candidate, &req.candidate)?,
        })
    }

    /// Runs the gate `plan` to its verdict (or the first side that measures
    /// nothing), every run in one sweep; stores the verdict beside it.
    pub fn gate(
        &mut self,
        host: &Host,
        plan: &GatePlan,
        command: &str,
        shell: &mut dyn GateShell,
    ) -> AppResult<Gated> {
        let sweep = self.store.create_sweep(command, 2, plan.rule.max_runs)?;
        for s in [&plan.baseline, &plan.candidate] {
            for f in s.plan.model_files.read_files() {
                self.store.keep_model_file(&f.sha256, &f.model, &f.bytes)?;
            }
        }
        let mut gate = Gate::new(plan.rule);
        let mut runs: Vec<(Side, i64)> = Vec::new();
        let ended = loop {
            let k = match gate.next() {
                Step::Done(o) => break Ended::Decided(o),
                Step::Pair(k) => k,
            };
            let order = pair_order(k);
            shell.say(format!(
                "gate: pair {} ({} then {})",
                k + 1,
                order[0].key(),
                order[1].key()
            ));
            let mut jobs = Vec::new();
            for s in order {
                jobs.push(self.queue_side(sweep, plan.side(s), k)?);
            }
            let finished = shell.run(self, host, &jobs)?;
            if finished.iter().any(|f| f.status == RunStatus::Cancelled) {
                return Err(AppError::Cancelled);
            }
            runs.extend(order.iter().zip(&jobs).map(|(s, j)| (*s, j.run_id)));
            match self.gate_measured(&order, &jobs, &finished)? {
                Ok(values) => {
                    for (s, v) in order.iter().zip(values) {
                        gate.record(*s, v);
                    }
                }
                Err(failed) => break failed,
            }
        };
        let gated = Gated {
            sweep_id: sweep,
            baseline: plan.baseline.said.clone(),
            candidate: plan.candidate.said.clone(),
            max_slowdown: plan.rule.max_slowdown,
            ended,
            runs,
        };
        self.save_gate(&gated)?;
        Ok(gated)
    }

    /// One run of `side` queued in `sweep` as its `k`-th repeat.
    fn queue_side(&self, sweep: i64, side: &PlannedSide, k: u32) -> AppResult<Job> {
        let cfg = &side.config;
        let id = self.store.insert_run(&NewRun {
            sweep_id: Some(sweep),
            repeat_index: k,
            price_offering: side.price.clone(),
            epoch_samples: side.plan.epoch_samples,
            ..NewRun::of_spec(cfg.framework, cfg.env.clone(), &cfg.spec)
        })?;
        Ok(Job {
            run_id: id,
            spec: cfg.spec.clone(),
            label: format!("{}: {}", side.side.key(), cfg.label),
            config: match side.side {
                Side::Baseline => 0,
                Side::Candidate => 1,
            },
            worker: cfg.worker.clone(),
            memory_limit_bytes: side.plan.memory_limit_bytes,
            remote: None,
        })
    }

    /// Each job's steady throughput, or the first side whose run measured
    /// none (with the run's reason).
    fn gate_measured(
        &self,
        order: &[Side],
        jobs: &[Job],
        finished: &[Finished],
    ) -> AppResult<Result<Vec<f64>, Ended>> {
        let ids: Vec<i64> = jobs.iter().map(|j| j.run_id).collect();
        let rows = self.runs_by_id(&ids)?;
        let mut values = Vec::new();
        for ((s, row), job) in order.iter().zip(&rows).zip(jobs) {
            let v = (row.status == RunStatus::Completed)
                .then(|| row.summary.as_ref().and_then(|x| Metric::Throughput.of(x)))
                .flatten()
                .filter(|v| v.is_finite() && *v > 0.0);
            match v {
                Some(v) => values.push(v),
                None => {
                    let reason = finished
                        .iter()
                        .find(|f| f.run_id == job.run_id)
                        .and_then(|f| f.reason.clone())
                        .or_else(|| row.status_reason.clone())
                        .unwrap_or_else(|| {
                            format!("{}, without a steady window", row.status.as_str())
                        });
                    return Ok(Err(Ended::SideFailed {
                        side: *s,
                        run_id: job.run_id,
                        reason: trainbench_core::text::cut(reason, 600),
                    }));
                }
            }
        }
        Ok(Ok(values))
    }

    fn save_gate(&self, g: &Gated) -> AppResult<()> {
        let decided = match &g.ended {
            Ended::Decided(o) => Some(o),
            Ended::SideFailed { .. } => None,
        };
        let count = |side: Side| g.runs.iter().filter(|r| r.0 == side).count() as i64;
        let outcome_json = decided
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| AppError::Internal(format!("cannot write the gate's outcome: {e}")))?;
        self.store.save_gate(&StoredGate {
            sweep_id: g.sweep_id,
            baseline: g.baseline.clone(),
            candidate: g.candidate.clone(),
            max_slowdown: g.max_slowdown,
            verdict: g.verdict_key().into(),
            exit_code: i64::from(g.exit_code()),
            ratio: decided.map(|o| o.ratio),
            ci95: decided.map(|o| (o.ci95.low, o.ci95.high)),
            baseline_runs: count(Side::Baseline),
            candidate_runs: count(Side::Candidate),
            runs_to_decide: decided.and_then(|o| o.runs_to_decide).map(i64::from),
            message: g.message(),
            outcome_json,
            ended_unix_ms: 0,
        })?;
        Ok(())
    }

    /// The gate stored beside `sweep`, if it was one.
    pub fn stored_gate(&self, sweep: i64) -> AppResult<Option<StoredGate>> {
        Ok(self.store.gate(sweep)?)
    }
}

/// The field a side's refusal names: the side's own flag when its change
/// set that setting (`candidate_script`), else the shared one.
fn blame(side: Side, change: &SideChange, field: &str) -> String {
    let own = match field {
        "model" if change.git_rev.is_some() => Some("git_rev"),
        "model" if change.script.is_some() => Some("script"),
        "model" | "input_shape" if change.model.is_some() => Some("model"),
        "env" if change.env.is_some() => Some("env"),
        "framework" if change.framework.is_some() => Some("framework"),
        _ => None,
    };
    own.map_or_else(|| field.to_owned(), |w| sides::field(side, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_side_flag_that_set_it() {
        let script = SideChange {
            script: Some("missing.py".into()),
            ..SideChange::default()
        };
        assert_eq!(blame(Side::Candidate, &script, "model"), "candidate_script");
        assert_eq!(blame(Side::Baseline, &script, "precision"), "precision");
        let env = SideChange {
            env: Some("TF_X=1".into()),
            ..SideChange::default()
        };
        assert_eq!(blame(Side::Baseline, &env, "env"), "baseline_env");
        assert_eq!(blame(Side::Baseline, &env, "model"), "model");
    }
}

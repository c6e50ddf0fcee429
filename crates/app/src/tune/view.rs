//! A search as both shells show it: every candidate with the settings it
//! varies, the round it reached, its latest figure and why it stopped; the
//! verdict, the winner's command and TOML file, the frontier. The CLI's
//! `tune --json` writes it; the desktop shows it while the search runs
//! ([`candidates`]) and when it ends ([`TunedView`]).

use serde::Serialize;
use trainbench_core::breakdown::Explanation;
use trainbench_core::stats::Interval;
use trainbench_core::tune::frontier::Frontier;
use trainbench_core::tune::method::{CandidateTrace, Fate, RoundEvidence, TuneOutcome};
use trainbench_core::tune::{Ended, Objective};

use super::{FoundBatch, TunePlan, Tuned};

/// The settings a runnable candidate varies, from the single-valued request
/// that reproduces it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CandidateSettings {
    pub framework: Option<String>,
    pub compile: Option<String>,
    pub precision: Option<String>,
    pub batch_size: Option<i64>,
    pub threads: Option<i64>,
}

/// One candidate of a search.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CandidateView {
    /// Its configuration in words (`pytorch resnet_mini fp32 ×1 b16`).
    pub configuration: String,
    /// `None` for a candidate refused before running (its configuration
    /// says what it was).
    pub settings: Option<CandidateSettings>,
    pub fate: Fate,
    pub round_reached: Option<u32>,
    /// Why it stopped (or is still in), in words.
    pub why: String,
    /// Its latest round's figure in the objective's unit, and interval.
    pub value: Option<f64>,
    pub ci95: Option<Interval>,
    pub rounds: Vec<RoundEvidence>,
    /// The winner's `trainbench run` command and TOML file (the winner only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toml: Option<String>,
}

/// Why the runner-up lost: the two runs' step breakdowns set side by side.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WhyLost {
    pub winner_run: Vec<i64>,
    pub runner_up_run: Vec<i64>,
    pub explanation: Explanation,
}

/// A finished (or stopped) search.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TunedView {
    pub sweep_id: i64,
    pub objective: Objective,
    /// The objective's unit (`samples/s`, `MiB`, `$/epoch`, `s`).
    pub unit: String,
    pub ended: Ended,
    pub verdict: String,
    pub winner: Option<CandidateView>,
    pub runner_up: Option<CandidateView>,
    /// The winner's figure ÷ the runner-up's, and its interval.
    pub ratio: Option<f64>,
    pub ratio_ci95: Option<Interval>,
    pub tie: Option<bool>,
    pub confirmed: bool,
    pub rounds: u32,
    pub elapsed_s: f64,
    pub budget_s: f64,
    pub run_ids: Vec<i64>,
    pub why_runner_up_lost: Option<WhyLost>,
    pub candidates: Vec<CandidateView>,
    pub frontier: Frontier,
    /// With `--batch-size max`: each group's largest batch, or why none.
    pub batch_searches: Vec<FoundBatch>,
    /// The winner's epoch here (measured) and on the GPUs of the peak table
    /// (projected).
    pub outlook: Option<super::outlook::Outlook>,
}

fn settings(plan: &TunePlan, i: usize) -> Option<CandidateSettings> {
    plan.candidates.get(i).map(|c| {
        let r = &c.request;
        CandidateSettings {
            framework: r.framework.first().cloned(),
            compile: r.compile.first().cloned(),
            precision: r.precision.first().cloned(),
            batch_size: r.batch_size.first().copied(),
            threads: r.threads.first().copied(),
        }
    })
}

fn candidate(plan: &TunePlan, i: usize, c: &CandidateTrace) -> CandidateView {
    let latest = c.latest();
    CandidateView {
        configuration: c.label.clone(),
        settings: settings(plan, i),
        fate: c.fate,
        round_reached: c.round_reached,
        why: c.why.clone(),
        value: latest.map(|l| l.0),
        ci95: latest.and_then(|l| l.1),
        rounds: c.rounds.clone(),
        command: None,
        toml: None,
    }
}

/// Every candidate of `outcome` (a snapshot while the search runs, or its end).
pub fn candidates(plan: &TunePlan, outcome: &TuneOutcome) -> Vec<CandidateView> {
    outcome
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| candidate(plan, i, c))
        .collect()
}

impl TunedView {
    pub fn new(t: &Tuned, plan: &TunePlan) -> TunedView {
        let o = &t.outcome;
        let pick =
            |i: Option<usize>| i.and_then(|i| o.candidates.get(i).map(|c| candidate(plan, i, c)));
        let mut winner = pick(o.winner);
        if let Some(w) = winner.as_mut() {
            w.command.clone_from(&t.command);
            w.toml.clone_from(&t.toml);
        }
        TunedView {
            sweep_id: t.sweep_id,
            objective: o.objective,
            unit: o.unit.clone(),
            ended: o.ended,
            verdict: o.verdict.clone(),
            winner,
            runner_up: pick(o.runner_up),
            ratio: o.ratio,
            ratio_ci95: o.ratio_ci95,
            tie: o.tie,
            confirmed: o.confirmed,
            rounds: o.rounds,
            elapsed_s: t.elapsed_s,
            budget_s: t.budget_s,
            run_ids: t.run_ids.clone(),
            why_runner_up_lost: t.why_runner_up_lost.as_ref().map(|e| WhyLost {
                winner_run: e.a.run_ids.clone(),
                runner_up_run: e.b.run_ids.clone(),
                explanation: e.explanation.clone(),
            }),
            candidates: candidates(plan, o),
            frontier: t.frontier.clone(),
            batch_searches: t.batches.clone(),
            outlook: t.outlook.clone(),
        }
    }
}

//! Successive halving with the studio's statistics.
//!
//! 1. **Probe**: every candidate runs once, short (the length asked for).
//! 2. **Race rounds**: after each round, a candidate whose 95 % interval
//!    lies wholly below the leader's by more than the objective's tolerance
//!    is stopped ("settled slower"); of the round's better half (at least
//!    two, ranked with those just settled), those still in go on. They run
//!    again, twice as long as the round before, each `race_repeats` times,
//!    the repeats interleaved (A B C A B C) so that drift in the machine
//!    hits them alike.
//! 3. **Confirmation**: once two are left (or the race rounds are spent),
//!    the leader and the runner-up run `confirm_repeats` times each,
//!    interleaved and twice as long again; the winner's figure ÷ the
//!    runner-up's with its 95 % interval (Welch's t on the logarithms of the
//!    runs' figures, `compare::speedup::ratio_over_repeats`), or a tie when the interval
//!    holds 1.
//!
//! A round's estimate of a candidate is its own runs in that round: one
//! run's figure with the run's own interval over its steady windows, or the
//! geometric mean of several runs with a Student-t interval on their
//! logarithms (`stats::mean_ci95` of the logs, as the ratio's method). A
//! candidate whose runs in a round all fail is stopped as failed, with the
//! reason; the search goes on without it.

use serde::{Deserialize, Serialize};

use super::{Ended, Objective};
use crate::stats::Interval;

/// How the search runs: repeats per race round and in the confirmation,
/// and the most race rounds after the probe.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Settings {
    pub objective: Objective,
    pub race_repeats: u32,
    pub confirm_repeats: u32,
    pub max_race_rounds: u32,
}

impl Settings {
    pub fn new(objective: Objective) -> Settings {
        Settings {
            objective,
            race_repeats: 2,
            confirm_repeats: 3,
            max_race_rounds: 3,
        }
    }
}

/// Which kind of round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RoundKind {
    Probe,
    Race,
    Confirm,
}

impl RoundKind {
    pub fn words(self) -> &'static str {
        match self {
            RoundKind::Probe => "probe: every candidate once, short",
            RoundKind::Race => "race: the better half, longer, repeats interleaved",
            RoundKind::Confirm => "confirmation: the leader and the runner-up",
        }
    }
}

/// The runs of one round, in the order they are to run.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundPlan {
    /// 0 for the probe.
    pub round: u32,
    pub kind: RoundKind,
    /// Each run's length is the probe's times this.
    pub length_factor: u32,
    /// Candidate indices, one per run (repeats interleaved).
    pub order: Vec<usize>,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Run(RoundPlan),
    Done(TuneOutcome),
}

/// How a run ended, as the search reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum RunResult {
    /// The objective's figure (in the metric's unit) and, for throughput,
    /// the run's own interval.
    Measured {
        value: f64,
        ci95: Option<Interval>,
    },
    Failed {
        reason: String,
    },
}

/// Where a candidate stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    InPlay,
    Winner,
    RunnerUp,
    /// Its interval lay wholly below the leader's by more than the tolerance.
    StoppedSlower,
    /// Not in the better half of its round.
    StoppedLowerHalf,
    /// Every run of it in a round failed (out of memory, an error, a crash).
    Failed,
    /// Refused before anything ran (a combination the framework or the
    /// device cannot do).
    Unsupported,
}

/// One run of a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TraceRun {
    pub run_id: i64,
    /// Seconds into the search when it started.
    pub started_s: f64,
    pub value: Option<f64>,
    pub failure: Option<String>,
}

/// A candidate's runs in one round and what they gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RoundEvidence {
    pub round: u32,
    pub kind: RoundKind,
    pub length_factor: u32,
    pub runs: Vec<TraceRun>,
    /// The round's estimate in the metric's unit, and its 95 % interval.
    pub value: Option<f64>,
    pub ci95: Option<Interval>,
}

/// A candidate as the search left it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CandidateTrace {
    pub label: String,
    pub fate: Fate,
    /// The last round it ran in (`None`: it never ran).
    pub round_reached: Option<u32>,
    /// Why it stopped, or where it stands, in words.
    pub why: String,
    pub rounds: Vec<RoundEvidence>,
}

impl CandidateTrace {
    /// The last round's estimate and interval.
    pub fn latest(&self) -> Option<(f64, Option<Interval>)> {
        let r = self.rounds.iter().rev().find(|r| r.value.is_some())?;
        Some((r.value?, r.ci95))
    }
}

/// What the search found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TuneOutcome {
    pub objective: Objective,
    /// The metric's unit (samples/s, MiB, USD).
    pub unit: String,
    pub ended: Ended,
    /// Indices into `candidates`.
    pub winner: Option<usize>,
    pub runner_up: Option<usize>,
    /// The winner's figure ÷ the runner-up's, from the confirmation runs.
    pub ratio: Option<f64>,
    pub ratio_ci95: Option<Interval>,
    /// The confirmation's interval holds 1: no difference shown.
    pub tie: Option<bool>,
    /// Whether the confirmation round ran for the winner and runner-up.
    pub confirmed: bool,
    pub verdict: String,
    pub rounds: u32,
    pub candidates: Vec<CandidateTrace>,
}

/// A figure for a person: its size decides the digits.
pub fn figure_text(v: f64) -> String {
    figure_text_as(v, v)
}

/// `v` with the digits `like` gets (an interval's ends as its estimate).
pub fn figure_text_as(v: f64, like: f64) -> String {
    match like.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 1.0 => format!("{v:.2}"),
        _ => format!("{v:.4}"),
    }
}

/// An interval with the digits of its estimate.
pub fn interval_text_as(ci: Option<Interval>, like: f64) -> String {
    ci.map_or_else(
        || "no interval".into(),
        |c| {
            format!(
                "{}–{}",
                figure_text_as(c.low, like),
                figure_text_as(c.high, like)
            )
        },
    )
}

fn interval_text(ci: Option<Interval>) -> String {
    interval_text_as(ci, ci.map_or(0.0, |c| c.low))
}

/// The state of a search.
#[derive(Debug, Clone)]
pub struct Search {
    settings: Settings,
    candidates: Vec<CandidateTrace>,
    current: Option<RoundPlan>,
    started: bool,
    finished: Option<TuneOutcome>,
}

mod decide;

impl Search {
    /// A search over candidates named by `labels`, none run yet.
    pub fn new(labels: Vec<String>, settings: Settings) -> Search {
        let candidates = labels
            .into_iter()
            .map(|label| CandidateTrace {
                label,
                fate: Fate::InPlay,
                round_reached: None,
                why: "not run yet".into(),
                rounds: Vec::new(),
            })
            .collect();
        Search {
            settings,
            candidates,
            current: None,
            started: false,
            finished: None,
        }
    }

    /// Adds a candidate refused before anything ran, with the reason.
    pub fn add_unsupported(&mut self, label: String, reason: String) {
        self.candidates.push(CandidateTrace {
            label,
            fate: Fate::Unsupported,
            round_reached: None,
            why: format!("not run: {reason}"),
            rounds: Vec::new(),
        });
    }

    pub fn candidates(&self) -> &[CandidateTrace] {
        &self.candidates
    }

    /// Records a run of `candidate` in the current round.
    pub fn record(&mut self, candidate: usize, run_id: i64, started_s: f64, result: RunResult) {
        let Some(plan) = &self.current else { return };
        let Some(c) = self.candidates.get_mut(candidate) else {
            return;
        };
        if c.rounds.last().map(|r| r.round) != Some(plan.round) {
            c.rounds.push(RoundEvidence {
                round: plan.round,
                kind: plan.kind,
                length_factor: plan.length_factor,
                runs: Vec::new(),
                value: None,
                ci95: None,
            });
        }
        c.round_reached = Some(plan.round);
        let (value, failure) = match result {
            RunResult::Measured { value, ci95 } => {
                let evidence = c.rounds.last_mut().expect("pushed above");
                // A single run keeps its own interval until a second comes.
                evidence.ci95 = ci95;
                (Some(value), None)
            }
            RunResult::Failed { reason } => (None, Some(reason)),
        };
        let evidence = c.rounds.last_mut().expect("pushed above");
        evidence.runs.push(TraceRun {
            run_id,
            started_s,
            value,
            failure,
        });
    }

    /// The next round to run, or the outcome once the search is over. Call
    /// it once each round's runs are recorded.
    pub fn next_step(&mut self) -> Step {
        if let Some(done) = &self.finished {
            return Step::Done(done.clone());
        }
        let plan = match self.current.take() {
            None if !self.started => {
                self.started = true;
                let order = self.in_play();
                if order.is_empty() {
                    return Step::Done(self.finish(Ended::Finished, None));
                }
                RoundPlan {
                    round: 0,
                    kind: RoundKind::Probe,
                    length_factor: 1,
                    order,
                }
            }
            None => return Step::Done(self.finish(Ended::Finished, None)),
            Some(done) => match self.after_round(&done) {
                Some(next) => next,
                None => return Step::Done(self.finished.clone().expect("set when ended")),
            },
        };
        self.current = Some(plan.clone());
        Step::Run(plan)
    }

    /// Ends the search early (the budget spent, or cancelled): the best so
    /// far, unconfirmed.
    pub fn end(&mut self, why: Ended) -> TuneOutcome {
        if let Some(plan) = self.current.take() {
            self.estimate_round(&plan);
        }
        if let Some(done) = &self.finished {
            return done.clone();
        }
        self.finish(why, None)
    }

    /// The search as it stands, for a trace written while it runs.
    pub fn snapshot(&self) -> TuneOutcome {
        if let Some(done) = &self.finished {
            return done.clone();
        }
        let mut copy = self.clone();
        if let Some(plan) = copy.current.take() {
            copy.estimate_round(&plan);
        }
        copy.outcome(Ended::Running, None)
    }

    fn in_play(&self) -> Vec<usize> {
        (0..self.candidates.len())
            .filter(|&i| self.candidates[i].fate == Fate::InPlay)
            .collect()
    }

    fn finish(&mut self, ended: Ended, confirmation: Option<Confirmation>) -> TuneOutcome {
        if ended != Ended::Finished {
            for c in &mut self.candidates {
                if c.fate == Fate::InPlay && c.round_reached.is_some() {
                    c.why = format!("still in when the search ended ({})", ended.words());
                }
            }
        }
        let out = self.outcome(ended, confirmation);
        self.finished = Some(out.clone());
        out
    }
}

/// The confirmation's result: winner, runner-up and the ratio.
#[derive(Debug, Clone, Copy)]
struct Confirmation {
    winner: usize,
    runner_up: Option<usize>,
    ratio: Option<(f64, Option<Interval>)>,
}

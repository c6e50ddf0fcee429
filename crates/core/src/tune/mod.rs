//! The search for the best way to train one model on this machine
//! (`trainbench tune`): a space of candidates (framework × compile mode ×
//! precision × batch × CPU threads, [`space`]), raced by successive halving
//! with the studio's own statistics ([`method`]), within a time budget.
//! Pure: the application layer runs what [`method::Search::next_step`] asks for
//! and hands each run's figure back to [`method::Search::record`].
//!
//! - **Objective**: what "best" means ([`Objective`]): throughput (higher
//!   is better), peak memory or cost per epoch (lower is better). The
//!   search works on a score where higher is better (the value, or its
//!   inverse), so one method serves every objective.
//! - **Budget** ([`Budget`]): the clock is read before each run; a run
//!   starts only while time is left, so the search ends at most one run
//!   past the budget.
//! - **Frontier** ([`frontier`]): the candidates no other beats on both
//!   throughput and peak memory (or cost per epoch) at once.

use serde::{Deserialize, Serialize};

use crate::compare::Metric;
use crate::error::SpecError;
use crate::stats::Interval;
use crate::summary::RunSummary;

pub mod frontier;
pub mod method;
pub mod space;
#[cfg(test)]
mod tests;

/// What the search looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// The most samples per second.
    Throughput,
    /// The least peak memory (the worker's peak RSS on the CPU).
    Memory,
    /// The least cost per epoch at the price offering given.
    Cost,
    /// The shortest time to the target accuracy (or loss): each run trains
    /// until it reaches the target, so rounds differ in repeats, not length.
    TimeToAccuracy,
    /// The fewest joules per sample: the GPUs' energy over the steady
    /// windows (NVML's counter), on a GPU only.
    Energy,
}

/// What a search has that some objectives need.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Given {
    /// A price offering (`--price`).
    pub priced: bool,
    /// A target accuracy or loss.
    pub target: bool,
    /// The runs train on a GPU (NVML reads its energy).
    pub gpu: bool,
}

/// The objectives `--objective` names, and those searched today.
const OBJECTIVES: &str = "throughput, memory, cost, time-to-accuracy or energy";
const SEARCHED: &str = "throughput, memory, cost (with --price), time-to-accuracy (with --target-accuracy or --target-loss) or energy (on a GPU)";

impl Objective {
    pub const ALL: [Objective; 5] = [
        Objective::Throughput,
        Objective::Memory,
        Objective::Cost,
        Objective::TimeToAccuracy,
        Objective::Energy,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Objective::Throughput => "throughput",
            Objective::Memory => "memory",
            Objective::Cost => "cost",
            Objective::TimeToAccuracy => "time-to-accuracy",
            Objective::Energy => "energy",
        }
    }

    pub fn parse(s: &str) -> Result<Objective, SpecError> {
        Objective::ALL
            .into_iter()
            .find(|o| o.key() == s.trim())
            .ok_or_else(|| SpecError::new("objective", s, &format!("one of {OBJECTIVES}")))
    }

    /// Checks that this objective can be searched with these settings:
    /// cost needs a price, time-to-accuracy a target, energy a GPU.
    pub fn check(self, given: Given) -> Result<(), SpecError> {
        let Given {
            priced,
            target,
            gpu,
        } = given;
        let refuse = |why: &str| {
            Err(SpecError::new(
                "objective",
                self.key(),
                &format!("{SEARCHED}; {why}"),
            ))
        };
        match self {
            Objective::Throughput | Objective::Memory => Ok(()),
            Objective::Cost if priced => Ok(()),
            Objective::Cost => refuse("cost per epoch needs a price offering (--price OFFERING, `trainbench prices` lists them)"),
            Objective::TimeToAccuracy if target => Ok(()),
            Objective::TimeToAccuracy => refuse("time to accuracy needs a target: --target-accuracy A (or --target-loss L), on data with a held-out split (--data mnist, cifar10:DIR, folder:DIR or text)"),
            Objective::Energy if gpu => Ok(()),
            Objective::Energy => refuse("energy per sample is measured from NVML's energy counter on a GPU only (--device cuda:N on a machine with an NVIDIA GPU)"),
        }
    }

    /// Whether a round's runs grow longer (the race's rounds double the
    /// probe's steps): not for time to accuracy, whose runs each train to
    /// the target, `--steps` being the most any may take.
    pub fn rounds_lengthen(self) -> bool {
        self != Objective::TimeToAccuracy
    }

    /// The comparison metric behind the objective.
    pub fn metric(self) -> Metric {
        match self {
            Objective::Throughput | Objective::Energy => Metric::Throughput,
            Objective::Memory => Metric::PeakMemory,
            Objective::Cost => Metric::CostPerEpoch,
            Objective::TimeToAccuracy => Metric::TimeToAccuracy,
        }
    }

    pub fn higher_is_better(self) -> bool {
        self != Objective::Energy && self.metric().higher_is_better()
    }

    /// What the figure is, in words (`throughput`, `energy per sample`).
    pub fn title(self) -> String {
        match self {
            Objective::Energy => "energy per sample".into(),
            _ => self.metric().title().to_lowercase(),
        }
    }

    /// The figure's unit.
    pub fn unit(self) -> &'static str {
        match self {
            Objective::Energy => "J/sample",
            _ => self.metric().unit(),
        }
    }

    /// How far below the leader a candidate's whole interval must lie to be
    /// stopped: differences smaller than this are not worth a longer race.
    /// Peak memory moves more from run to run than throughput does.
    pub fn tolerance(self) -> f64 {
        match self {
            // Where an evaluation falls moves a time to accuracy by up to
            // one evaluation interval.
            // Energy: the counter's energy over a short steady span.
            Objective::Memory | Objective::TimeToAccuracy | Objective::Energy => 0.05,
            _ => 0.02,
        }
    }

    /// The run's figure for this objective (in the metric's unit) and, for
    /// throughput, the run's own 95 % interval over its steady windows.
    pub fn figure(self, s: &RunSummary) -> Option<(f64, Option<Interval>)> {
        let v = match self {
            Objective::Energy => s.energy_j_per_sample,
            // The time to the run's target: its accuracy, or (a run given a
            // loss to reach instead) its held-out loss.
            Objective::TimeToAccuracy if s.target_accuracy.is_none() => s.time_to_loss_s,
            _ => self.metric().of(s),
        };
        let v = v.filter(|v| v.is_finite() && *v > 0.0)?;
        let ci = match self {
            Objective::Throughput => s.throughput_ci95.filter(|c| c.low > 0.0),
            _ => None,
        };
        Some((v, ci))
    }

    /// A figure as a score where higher is better (its inverse when lower is
    /// better), with its interval turned the same way.
    pub fn score(self, value: f64, ci: Option<Interval>) -> (f64, Option<Interval>) {
        if self.higher_is_better() {
            (value, ci)
        } else {
            let ci = ci.map(|c| Interval {
                low: 1.0 / c.high,
                high: 1.0 / c.low,
            });
            (1.0 / value, ci)
        }
    }

    /// A score back as a figure in the metric's unit.
    pub fn value_of_score(self, score: f64) -> f64 {
        if self.higher_is_better() {
            score
        } else {
            1.0 / score
        }
    }
}

impl std::fmt::Display for Objective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// The time a search may take, read before each run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Budget {
    pub seconds: f64,
}

/// The longest budget accepted: one week.
pub const MAX_BUDGET_S: f64 = 7.0 * 24.0 * 3600.0;
/// The budget when none is given: 15 minutes.
pub const DEFAULT_BUDGET_S: f64 = 15.0 * 60.0;

impl Budget {
    /// `90s`, `15m`, `2h`, `1h30m` or a number of seconds; above 0 and at
    /// most a week.
    pub fn parse(text: &str) -> Result<Budget, SpecError> {
        let bad = || {
            SpecError::new(
                "budget",
                text,
                "a duration above 0 and at most a week: seconds (90 or 90s), minutes (15m), hours (2h), or joined (1h30m)",
            )
        };
        let t = text.trim();
        if t.is_empty() {
            return Err(bad());
        }
        if let Ok(s) = t.parse::<f64>() {
            return Budget::of_seconds(s).ok_or_else(bad);
        }
        let (mut total, mut number) = (0.0, String::new());
        for ch in t.chars() {
            if ch.is_ascii_digit() || ch == '.' {
                number.push(ch);
                continue;
            }
            let unit = match ch {
                's' => 1.0,
                'm' => 60.0,
                'h' => 3600.0,
                _ => return Err(bad()),
            };
            let n: f64 = number.parse().map_err(|_| bad())?;
            total += n * unit;
            number.clear();
        }
        if !number.is_empty() {
            return Err(bad());
        }
        Budget::of_seconds(total).ok_or_else(bad)
    }

    fn of_seconds(s: f64) -> Option<Budget> {
        (s.is_finite() && s > 0.0 && s <= MAX_BUDGET_S).then_some(Budget { seconds: s })
    }

    /// Whether a run may start `elapsed_s` seconds into the search: only
    /// while time is left, so a search ends at most one run past its budget.
    pub fn may_start(self, elapsed_s: f64) -> bool {
        elapsed_s < self.seconds
    }
}

/// How the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// Still going (a trace written while it runs).
    Running,
    /// Every round ran, the confirmation included.
    Finished,
    /// The budget was spent before the search ended.
    Budget,
    /// Stopped by the person (Ctrl-C, Cancel).
    Cancelled,
}

impl Ended {
    pub fn words(self) -> &'static str {
        match self {
            Ended::Running => "still running",
            Ended::Finished => "finished",
            Ended::Budget => "the budget ran out",
            Ended::Cancelled => "cancelled",
        }
    }
}

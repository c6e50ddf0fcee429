//! The performance gate of `trainbench gate`: is a candidate (a changed
//! script, model file, environment or set of variables) slower than its
//! baseline by more than a threshold, on this machine?
//!
//! Pure: [`Gate::next`] says whether to run one more pair (one run of each
//! side, in the order [`pair_order`] gives: A B, then B A, …) or what was
//! decided; [`Gate::record`] takes what a pair measured.
//!
//! - **The ratio** is the candidate's time per sample over the baseline's:
//!   baseline throughput ÷ candidate throughput, so 1.05 is 5 % slower. Its
//!   95 % interval is Welch's t on the logarithms of the runs' steady
//!   throughputs (`compare::speedup::ratio_over_repeats`), the interval of
//!   every comparison the studio makes over repeats.
//! - **Pass** (exit 0) when the interval's upper end is at or below
//!   `1 + max_slowdown`: slower than that is ruled out. **Fail** (exit 1)
//!   when its lower end is above it: slower than that is shown. Otherwise
//!   one more pair, up to `max_runs` per side; then **undecided** (exit 3),
//!   with the runs per side that would decide at the observed spread (the
//!   smallest n with `t(2n − 2) · √((s²_A + s²_B) ÷ n) < |d − ln(1 + max)|`,
//!   d the mean difference of the logarithms).
//! - At least `min_runs` per side before anything is decided: two runs say
//!   little about the spread, and a first pair taken while the machine
//!   settles should not decide alone.

use serde::{Deserialize, Serialize};

use crate::compare::speedup::ratio_over_repeats;
use crate::error::SpecError;
use crate::stats::{mean_var, t_quantile_975, Interval};

/// The runs per side at the least and most unless asked otherwise.
pub const MIN_RUNS: u32 = 3;
pub const MAX_RUNS: u32 = 12;
/// The most runs per side that may be asked for.
pub const RUNS_LIMIT: u32 = 200;

/// One side of the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Baseline,
    Candidate,
}

impl Side {
    pub fn key(self) -> &'static str {
        match self {
            Side::Baseline => "baseline",
            Side::Candidate => "candidate",
        }
    }
}

/// The order of the runs of pair `k` (0-based): A B, B A, A B, … so that
/// the sequence reads A B B A A B B A and a drift of the machine over time
/// weighs on both sides alike.
pub fn pair_order(k: u32) -> [Side; 2] {
    if k.is_multiple_of(2) {
        [Side::Baseline, Side::Candidate]
    } else {
        [Side::Candidate, Side::Baseline]
    }
}

/// What the gate decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Not slower than the threshold (exit 0).
    Pass,
    /// Slower beyond the threshold (exit 1).
    Fail,
    /// The interval still holds the threshold at the most runs (exit 3).
    Undecided,
}

impl Verdict {
    /// The exit status `trainbench gate` ends with.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::Fail => 1,
            Verdict::Undecided => 3,
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Undecided => "undecided",
        }
    }
}

/// The gate's rule: the threshold and the runs per side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// The slowdown allowed, a fraction: 0.03 for 3 %.
    pub max_slowdown: f64,
    pub min_runs: u32,
    pub max_runs: u32,
}

impl Rule {
    pub fn new(max_slowdown: f64, min_runs: u32, max_runs: u32) -> Result<Rule, SpecError> {
        if !(max_slowdown.is_finite() && max_slowdown > 0.0 && max_slowdown < 1.0) {
            return Err(SpecError::new(
                "max_slowdown",
                format!("{}%", max_slowdown * 100.0),
                "a slowdown above 0 % and below 100 %, e.g. 3%",
            ));
        }
        if !(2..=RUNS_LIMIT).contains(&min_runs) {
            return Err(SpecError::new(
                "min_runs",
                min_runs,
                &format!(
                    "2 to {RUNS_LIMIT} runs per side (two is the fewest that measures a spread)"
                ),
            ));
        }
        if !(min_runs..=RUNS_LIMIT).contains(&max_runs) {
            return Err(SpecError::new(
                "max_runs",
                max_runs,
                &format!("{min_runs} (--min-runs) to {RUNS_LIMIT} runs per side"),
            ));
        }
        Ok(Rule {
            max_slowdown,
            min_runs,
            max_runs,
        })
    }

    /// The ratio at the threshold: `1 + max_slowdown`.
    pub fn limit(&self) -> f64 {
        1.0 + self.max_slowdown
    }
}

/// What the gate found: the verdict with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub verdict: Verdict,
    /// Candidate time per sample ÷ baseline's (baseline throughput ÷
    /// candidate throughput): 1.05 is 5 % slower.
    pub ratio: f64,
    pub ci95: Interval,
    /// The threshold as a fraction (0.03) and as the ratio it allows (1.03).
    pub max_slowdown: f64,
    pub limit: f64,
    /// Runs measured per side.
    pub baseline_runs: u32,
    pub candidate_runs: u32,
    /// Each side's runs' throughputs (samples/s), in the order they ran.
    pub baseline_values: Vec<f64>,
    pub candidate_values: Vec<f64>,
    /// Undecided: the runs per side in all that would decide at the observed
    /// spread; `None` when more than the studio would run (or the estimate
    /// sits on the threshold).
    pub runs_to_decide: Option<u32>,
    /// One sentence for a person.
    pub text: String,
}

impl Outcome {
    /// Undecided: how many more runs per side would decide.
    pub fn more_runs(&self) -> Option<u32> {
        let have = self.baseline_runs.min(self.candidate_runs);
        self.runs_to_decide.map(|n| n.saturating_sub(have))
    }
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Run pair `k` (0-based) in [`pair_order`]`(k)`.
    Pair(u32),
    Done(Outcome),
}

/// The state of one gate.
#[derive(Debug, Clone)]
pub struct Gate {
    rule: Rule,
    baseline: Vec<f64>,
    candidate: Vec<f64>,
}

impl Gate {
    pub fn new(rule: Rule) -> Gate {
        Gate {
            rule,
            baseline: Vec::new(),
            candidate: Vec::new(),
        }
    }

    /// Adds one run's throughput (samples/s) to `side`; a value that is not
    /// positive and finite is left out.
    pub fn record(&mut self, side: Side, throughput: f64) {
        if throughput.is_finite() && throughput > 0.0 {
            match side {
                Side::Baseline => self.baseline.push(throughput),
                Side::Candidate => self.candidate.push(throughput),
            }
        }
    }

    /// Pairs measured so far: the fewer runs of the two sides.
    pub fn pairs(&self) -> u32 {
        self.baseline.len().min(self.candidate.len()) as u32
    }

    /// One more pair, or what was decided.
    pub fn next(&self) -> Step {
        let n = self.pairs();
        if n < self.rule.min_runs {
            return Step::Pair(n);
        }
        let Some(est) = ratio_over_repeats(&self.baseline, &self.candidate) else {
            return Step::Pair(n);
        };
        let limit = self.rule.limit();
        let verdict = if est.ci95.high <= limit {
            Verdict::Pass
        } else if est.ci95.low > limit {
            Verdict::Fail
        } else if n < self.rule.max_runs {
            return Step::Pair(n);
        } else {
            Verdict::Undecided
        };
        let runs_to_decide = (verdict == Verdict::Undecided)
            .then(|| runs_to_decide(&self.baseline, &self.candidate, limit))
            .flatten();
        Step::Done(self.outcome(verdict, est.ratio, est.ci95, runs_to_decide))
    }

    fn outcome(
        &self,
        verdict: Verdict,
        ratio: f64,
        ci95: Interval,
        runs_to_decide: Option<u32>,
    ) -> Outcome {
        let n = self.pairs();
        let pct = |r: f64| format!("{:+.1} %", (r - 1.0) * 100.0);
        let measured = format!(
            "the candidate's time per sample is {ratio:.3}× the baseline's ({}; 95 % CI {:.3}–{:.3}) over {n} runs each",
            pct(ratio),
            ci95.low,
            ci95.high
        );
        let threshold = format!("{:.1} %", self.rule.max_slowdown * 100.0);
        let text = match verdict {
            Verdict::Pass => format!("pass: not slower than {threshold}: {measured}"),
            Verdict::Fail => format!("fail: slower than {threshold}: {measured}"),
            Verdict::Undecided => format!(
                "undecided: the interval still holds the {threshold} threshold at the most runs: {measured}; {}",
                match runs_to_decide {
                    Some(total) => format!(
                        "about {} more runs each ({total} in all) would decide at the observed spread (--max-runs {total})",
                        total.saturating_sub(n)
                    ),
                    None => format!(
                        "more than {RUNS_LIMIT} runs each would be needed at the observed spread"
                    ),
                }
            ),
        };
        Outcome {
            verdict,
            ratio,
            ci95,
            max_slowdown: self.rule.max_slowdown,
            limit: self.rule.limit(),
            baseline_runs: self.baseline.len() as u32,
            candidate_runs: self.candidate.len() as u32,
            baseline_values: self.baseline.clone(),
            candidate_values: self.candidate.clone(),
            runs_to_decide,
            text,
        }
    }
}

/// Runs per side (in all) whose interval would clear `limit` at the spread
/// of these runs: the smallest n ≤ [`RUNS_LIMIT`] with
/// `t(2n − 2) · √((s²_A + s²_B) ÷ n) < |d − ln limit|`.
pub fn runs_to_decide(baseline: &[f64], candidate: &[f64], limit: f64) -> Option<u32> {
    let logs = |v: &[f64]| -> Vec<f64> { v.iter().map(|x| x.ln()).collect() };
    let (ma, va, _) = mean_var(&logs(baseline))?;
    let (mb, vb, _) = mean_var(&logs(candidate))?;
    let gap = ((ma - mb) - limit.ln()).abs();
    if gap == 0.0 {
        return None;
    }
    (2..=RUNS_LIMIT)
        .find(|&n| t_quantile_975(2 * n as usize - 2) * ((va + vb) / f64::from(n)).sqrt() < gap)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ±0.4 % around `level`, a small pattern that repeats.
    fn jitter(level: f64, run: usize) -> f64 {
        level * (1.0 + [0.004, -0.004, 0.002, -0.003, 0.001][run % 5])
    }

    /// Runs the gate with `measure(side, run) -> throughput`; the outcome
    /// and the order the runs ran in.
    fn gate(rule: Rule, measure: impl Fn(Side, usize) -> f64) -> (Outcome, Vec<Side>) {
        let mut g = Gate::new(rule);
        let mut order = Vec::new();
        let mut counts = [0usize; 2];
        loop {
            match g.next() {
                Step::Done(o) => return (o, order),
                Step::Pair(k) => {
                    for side in pair_order(k) {
                        let i = side as usize;
                        g.record(side, measure(side, counts[i]));
                        counts[i] += 1;
                        order.push(side);
                    }
                }
            }
        }
    }

    fn rule() -> Rule {
        Rule::new(0.03, 3, 12).unwrap()
    }

    #[test]
    fn the_runs_are_interleaved_a_b_b_a() {
        let (_, order) = gate(rule(), |_, run| jitter(100.0, run));
        use Side::{Baseline as A, Candidate as B};
        assert_eq!(order, vec![A, B, B, A, A, B]);
    }

    #[test]
    fn an_identical_pair_passes_at_the_fewest_runs() {
        let (o, _) = gate(rule(), |_, run| jitter(100.0, run));
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert_eq!((o.baseline_runs, o.candidate_runs), (3, 3));
        assert!(o.ci95.high <= 1.03 && (o.ratio - 1.0).abs() < 1e-9, "{o:?}");
        assert!(
            o.text.starts_with("pass: not slower than 3.0 %"),
            "{}",
            o.text
        );
    }

    #[test]
    fn a_five_percent_slowdown_fails_with_its_ratio_and_interval() {
        // Throughput 1 ÷ 1.05 of the baseline's: 5 % more time per sample.
        let (o, _) = gate(rule(), |side, run| match side {
            Side::Baseline => jitter(100.0, run),
            Side::Candidate => jitter(100.0 / 1.05, run + 2),
        });
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        assert!((o.ratio - 1.05).abs() < 0.01, "{o:?}");
        assert!(o.ci95.low > 1.03 && o.ci95.high > o.ratio, "{o:?}");
        assert_eq!(o.verdict.exit_code(), 1);
        assert!(o.text.contains("1.05"), "{}", o.text);
    }

    #[test]
    fn a_faster_candidate_passes() {
        let (o, _) = gate(rule(), |side, run| match side {
            Side::Baseline => jitter(100.0, run),
            Side::Candidate => jitter(120.0, run),
        });
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert!(o.ratio < 0.9);
    }

    #[test]
    fn noise_gets_more_pairs_then_undecided_says_how_many_would_decide() {
        // A 3 % slowdown (on the threshold) under ±5 % noise: never settled.
        let noisy = |level: f64, run: usize| level * (1.0 + [0.05, -0.05, 0.03, -0.04][run % 4]);
        let (o, order) = gate(rule(), |side, run| match side {
            Side::Baseline => noisy(100.0, run),
            Side::Candidate => noisy(100.0 / 1.031, run + 1),
        });
        assert_eq!(o.verdict, Verdict::Undecided, "{o:?}");
        assert_eq!(o.verdict.exit_code(), 3);
        assert_eq!(order.len(), 24, "the most runs, 12 per side");
        assert!(
            o.text.contains("more than 200 runs") || o.more_runs().unwrap() > 0,
            "{o:?}"
        );
        // A 4 % slowdown under the same noise: a number of runs that decides.
        let (o, _) = gate(Rule::new(0.03, 3, 4).unwrap(), |side, run| match side {
            Side::Baseline => noisy(100.0, run),
            Side::Candidate => noisy(100.0 / 1.08, run + 1),
        });
        assert_eq!(o.verdict, Verdict::Undecided, "{o:?}");
        let more = o.more_runs().unwrap();
        assert!(more > 0 && o.runs_to_decide == Some(4 + more), "{o:?}");
        assert!(
            o.text.contains(&format!("about {more} more runs each")),
            "{}",
            o.text
        );
    }

    #[test]
    fn runs_that_measured_nothing_are_left_out() {
        let mut g = Gate::new(rule());
        g.record(Side::Baseline, f64::NAN);
        g.record(Side::Baseline, 0.0);
        g.record(Side::Candidate, 10.0);
        assert_eq!(g.pairs(), 0);
        assert_eq!(g.next(), Step::Pair(0));
    }

    #[test]
    fn bad_rules_name_their_field() {
        assert_eq!(Rule::new(0.0, 3, 9).unwrap_err().field, "max_slowdown");
        assert_eq!(Rule::new(1.5, 3, 9).unwrap_err().field, "max_slowdown");
        assert_eq!(Rule::new(f64::NAN, 3, 9).unwrap_err().field, "max_slowdown");
        assert_eq!(Rule::new(0.03, 1, 9).unwrap_err().field, "min_runs");
        assert_eq!(Rule::new(0.03, 5, 4).unwrap_err().field, "max_runs");
        assert_eq!(Rule::new(0.03, 5, 500).unwrap_err().field, "max_runs");
    }
}

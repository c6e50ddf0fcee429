//! The step breakdown: where a training step's time goes (data, forward,
//! backward, communication, optimizer), from the extra steps a worker times
//! after its timed part ([`StepTimings`]), and how a gap in time per sample
//! between two runs splits over those parts ([`explain`]).
//!
//! Figures are **means** over the measured steps, because means add up: the
//! parts' means sum exactly to the mean of the split steps, which is then
//! checked against the mean of the whole steps timed in between (see
//! [`StepBreakdown::agrees`]). `docs/metrics.md` has the definitions.

use serde::{Deserialize, Serialize};

use crate::protocol::{StepPhase, StepTimings};
use crate::stats::{mean_var, t_quantile_975, welch_df, Interval};

/// A part of the step as shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Part {
    Data,
    Forward,
    Backward,
    /// Gradient all-reduce time the backward pass did not hide (backward with
    /// it minus backward without it).
    Communication,
    Optimizer,
    /// Forward, backward, optimizer (and communication) in one program the
    /// framework does not split.
    Step,
}

impl Part {
    pub const ALL: [Part; 6] = [
        Part::Data,
        Part::Forward,
        Part::Backward,
        Part::Communication,
        Part::Optimizer,
        Part::Step,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Part::Data => "data",
            Part::Forward => "forward",
            Part::Backward => "backward",
            Part::Communication => "communication",
            Part::Optimizer => "optimizer",
            Part::Step => "fused step",
        }
    }

    /// Whether the part is device compute (everything but data).
    pub fn is_compute(self) -> bool {
        self != Part::Data
    }
}

/// One part's time per step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PartTime {
    pub part: Part,
    /// Mean seconds per step.
    pub mean_s: f64,
    /// 95 % interval of the mean (Student t over the steps; Welch's for
    /// communication, a difference of two means); `None` under 2 steps.
    pub ci95: Option<Interval>,
    /// `mean_s` divided by the global batch.
    pub per_sample_s: f64,
    /// Fraction of the parts' sum.
    pub share: f64,
}

/// Where a run's step time goes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StepBreakdown {
    /// Split steps measured (the fewest of any phase's series).
    pub steps: usize,
    /// Whole steps measured (0 in summaries stored before this was kept).
    #[serde(default)]
    pub whole_steps: usize,
    pub parts: Vec<PartTime>,
    /// The parts' means summed: the mean split step.
    pub parts_sum_s: f64,
    /// The mean whole (unsplit, synchronised) step.
    pub whole_step_s: f64,
    pub whole_step_ci95: Option<Interval>,
    /// `parts_sum_s / whole_step_s - 1`: what splitting the step cost, plus noise.
    pub split_difference: f64,
    /// How far the two may differ and still agree, relative to the whole step.
    pub tolerance: f64,
    /// Whether the parts sum to the whole step within `tolerance`.
    pub agrees: bool,
    /// The timed windows' steady step time (global batch ÷ steady throughput),
    /// for comparison: windows are not synchronised per step.
    pub steady_step_s: Option<f64>,
    pub global_batch: u64,
    /// What the framework fuses (the `fused step` part), in words.
    pub fused: Option<String>,
    /// How communication is accounted for, in words (data-parallel runs).
    pub communication: Option<String>,
    /// Communication's share of the parts' sum, where it was measured.
    pub communication_share: Option<f64>,
    /// How the figures were measured, in words.
    pub method: String,
}

/// The relative part of the agreement tolerance: the split step adds a
/// device synchronisation and two clock reads per phase (microseconds on a
/// CPU; on a GPU each synchronisation also drains the launch queue, which the
/// unsplit step overlaps), so a split step may honestly run up to this much
/// longer than a whole one on small steps.
pub const SPLIT_OVERHEAD_ALLOWED: f64 = 0.10;

/// Standard errors of the difference of the two means added to the tolerance
/// (3: a 99.7 % band for the noise of means over a handful of steps).
pub const NOISE_STANDARD_ERRORS: f64 = 3.0;

pub const METHOD: &str = "after the timed windows and the last evaluation, the worker times extra steps in two kinds, alternating: whole steps (batch preparation to the end of the optimizer update, one device synchronisation at each end) and split steps (a synchronisation and a clock read after each phase); figures are means over those steps. The timed windows are not touched.";

fn stats(v: &[f64]) -> Option<(f64, f64, usize)> {
    match v {
        [] => None,
        [x] => Some((*x, 0.0, 1)),
        _ => mean_var(v),
    }
}

fn ci(mean: f64, var: f64, n: usize) -> Option<Interval> {
    (n >= 2).then(|| {
        let half = t_quantile_975(n - 1) * (var / n as f64).sqrt();
        Interval {
            low: mean - half,
            high: mean + half,
        }
    })
}

/// The figures of a run's step breakdown; `None` when the worker measured no
/// step (or sent series of no use).
pub fn breakdown(
    t: &StepTimings,
    global_batch: u64,
    steady_throughput: Option<f64>,
) -> Option<StepBreakdown> {
    let gb = global_batch.max(1) as f64;
    let (whole, whole_var, whole_n) = stats(&t.whole_step_s)?;
    let mut raw: Vec<(Part, f64, f64, usize)> = Vec::new();
    let mut split_sum_var = 0.0;
    let mut steps = usize::MAX;
    for p in &t.phases {
        let Some((m, v, n)) = stats(&p.seconds) else {
            continue;
        };
        let part = match p.phase {
            StepPhase::Data => Part::Data,
            StepPhase::Forward => Part::Forward,
            StepPhase::Backward => Part::Backward,
            StepPhase::Optimizer => Part::Optimizer,
            StepPhase::Step => Part::Step,
            StepPhase::BackwardLocal => continue,
        };
        steps = steps.min(n);
        split_sum_var += v;
        raw.push((part, m, v, n));
    }
    if raw.is_empty() {
        return None;
    }
    // Communication: backward with the all-reduce minus backward without it;
    // the backward part then shows the local backward alone.
    let mut communication_share = None;
    let local = t.series(StepPhase::BackwardLocal).and_then(stats);
    let mut parts: Vec<(Part, f64, Option<Interval>)> = Vec::new();
    for &(part, m, v, n) in &raw {
        match (part, local) {
            (Part::Backward, Some((lm, lv, ln))) => {
                parts.push((Part::Backward, lm, ci(lm, lv, ln)));
                let d = m - lm;
                let se2 = v / n as f64 + lv / ln as f64;
                let interval = (n >= 2 && ln >= 2).then(|| {
                    let df = welch_df(v / n as f64, n, lv / ln as f64, ln);
                    let half = t_quantile_975(df) * se2.sqrt();
                    Interval {
                        low: d - half,
                        high: d + half,
                    }
                });
                parts.push((Part::Communication, d, interval));
            }
            _ => parts.push((part, m, ci(m, v, n))),
        }
    }
    parts.sort_by_key(|p| p.0);
    let parts_sum_s: f64 = raw.iter().map(|r| r.1).sum();
    if parts_sum_s <= 0.0 || whole <= 0.0 {
        return None;
    }
    if let Some(c) = parts.iter().find(|p| p.0 == Part::Communication) {
        communication_share = Some(c.1 / parts_sum_s);
    }
    // The split steps' total varies as the sum of its phases would if they
    // were independent; the phases of one step are timed back to back, so
    // the sum of variances is the honest first-order figure.
    let n = steps.min(whole_n).max(1) as f64;
    let se = (split_sum_var / n + whole_var / whole_n.max(1) as f64).sqrt();
    let tolerance = SPLIT_OVERHEAD_ALLOWED + NOISE_STANDARD_ERRORS * se / whole;
    let split_difference = parts_sum_s / whole - 1.0;
    Some(StepBreakdown {
        steps,
        whole_steps: whole_n,
        parts: parts
            .into_iter()
            .map(|(part, mean_s, ci95)| PartTime {
                part,
                mean_s,
                ci95,
                per_sample_s: mean_s / gb,
                share: mean_s / parts_sum_s,
            })
            .collect(),
        parts_sum_s,
        whole_step_s: whole,
        whole_step_ci95: ci(whole, whole_var, whole_n),
        split_difference,
        tolerance,
        agrees: split_difference.abs() <= tolerance,
        steady_step_s: steady_throughput.filter(|tp| *tp > 0.0).map(|tp| gb / tp),
        global_batch,
        fused: t.fused.clone(),
        communication: t.communication.clone(),
        communication_share,
        method: METHOD.into(),
    })
}

impl StepBreakdown {
    pub fn part(&self, part: Part) -> Option<&PartTime> {
        self.parts.iter().find(|p| p.part == part)
    }

    /// Mean seconds per step of everything but data.
    pub fn compute_s(&self) -> f64 {
        self.parts
            .iter()
            .filter(|p| p.part.is_compute())
            .map(|p| p.mean_s)
            .sum()
    }

    /// Whether the framework fused the compute into one program.
    pub fn is_fused(&self) -> bool {
        self.part(Part::Step).is_some()
    }

    /// Seconds per sample of each part at a granularity: `fused` folds every
    /// compute part into [`Part::Step`].
    fn per_sample(&self, fused: bool) -> Vec<(Part, f64)> {
        let mut out: Vec<(Part, f64)> = Vec::new();
        for p in &self.parts {
            let part = if fused && p.part.is_compute() {
                Part::Step
            } else {
                p.part
            };
            match out.iter_mut().find(|o| o.0 == part) {
                Some(o) => o.1 += p.per_sample_s,
                None => out.push((part, p.per_sample_s)),
            }
        }
        out
    }
}

/// Repeats of one configuration as one breakdown: each part's mean over the
/// runs' means (so each run weighs the same), no interval (the repeats'
/// spread is in their own breakdowns). `None` for no breakdown.
pub fn average(runs: &[&StepBreakdown]) -> Option<StepBreakdown> {
    let first = *runs.first()?;
    if runs.len() == 1 {
        return Some(first.clone());
    }
    let n = runs.len() as f64;
    let mean = |f: &dyn Fn(&StepBreakdown) -> f64| runs.iter().map(|b| f(b)).sum::<f64>() / n;
    let mut parts: Vec<PartTime> = Vec::new();
    for part in Part::ALL {
        let have: Vec<&PartTime> = runs.iter().filter_map(|b| b.part(part)).collect();
        if have.is_empty() {
            continue;
        }
        let m = have.iter().map(|p| p.mean_s).sum::<f64>() / n;
        parts.push(PartTime {
            part,
            mean_s: m,
            ci95: None,
            per_sample_s: have.iter().map(|p| p.per_sample_s).sum::<f64>() / n,
            share: 0.0,
        });
    }
    let parts_sum_s: f64 = parts.iter().map(|p| p.mean_s).sum();
    for p in &mut parts {
        p.share = if parts_sum_s > 0.0 {
            p.mean_s / parts_sum_s
        } else {
            0.0
        };
    }
    let whole_step_s = mean(&|b| b.whole_step_s);
    let split_difference = parts_sum_s / whole_step_s - 1.0;
    let tolerance = mean(&|b| b.tolerance);
    Some(StepBreakdown {
        steps: runs.iter().map(|b| b.steps).sum(),
        whole_steps: runs.iter().map(|b| b.whole_steps).sum(),
        parts,
        parts_sum_s,
        whole_step_s,
        whole_step_ci95: None,
        split_difference,
        tolerance,
        agrees: runs.iter().all(|b| b.agrees),
        steady_step_s: runs
            .iter()
            .map(|b| b.steady_step_s)
            .sum::<Option<f64>>()
            .map(|s| s / n),
        global_batch: first.global_batch,
        fused: first.fused.clone(),
        communication: first.communication.clone(),
        communication_share: runs
            .iter()
            .map(|b| b.communication_share)
            .sum::<Option<f64>>()
            .map(|s| s / n),
        method: format!(
            "{} Averaged over {} repeats (each run's means weigh the same).",
            METHOD,
            runs.len()
        ),
    })
}

/// One part's share of the gap between two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct GapPart {
    pub part: Part,
    /// Seconds per sample in A and in B (0 where a run has no such part).
    pub a_per_sample_s: f64,
    pub b_per_sample_s: f64,
    /// B − A, seconds per sample.
    pub difference_s: f64,
    /// Fraction of the total gap this part accounts for (signed: a part that
    /// went the other way has a negative share); `None` when there is no gap.
    pub share_of_gap: Option<f64>,
}

/// How a difference in time per sample between two runs splits over the parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Explanation {
    /// Sum of the parts per sample in A and in B.
    pub a_per_sample_s: f64,
    pub b_per_sample_s: f64,
    /// B − A, seconds per sample.
    pub gap_s: f64,
    pub parts: Vec<GapPart>,
    /// Why parts were merged (one side fuses its compute), or null.
    pub granularity_note: Option<String>,
    /// One sentence: which part accounts for most of the gap.
    pub verdict: String,
}

/// The gap in time per sample between A and B, part by part. Where one side
/// fuses forward, backward and optimizer into one program the other side's
/// compute parts are merged the same way, so like is compared with like.
pub fn explain(a: &StepBreakdown, b: &StepBreakdown, a_label: &str, b_label: &str) -> Explanation {
    let fused = a.is_fused() || b.is_fused();
    let pa = a.per_sample(fused);
    let pb = b.per_sample(fused);
    let a_total: f64 = pa.iter().map(|p| p.1).sum();
    let b_total: f64 = pb.iter().map(|p| p.1).sum();
    let gap = b_total - a_total;
    let mut parts: Vec<GapPart> = Part::ALL
        .iter()
        .filter_map(|&part| {
            let x = pa.iter().find(|p| p.0 == part).map(|p| p.1);
            let y = pb.iter().find(|p| p.0 == part).map(|p| p.1);
            if x.is_none() && y.is_none() {
                return None;
            }
            let (x, y) = (x.unwrap_or(0.0), y.unwrap_or(0.0));
            Some(GapPart {
                part,
                a_per_sample_s: x,
                b_per_sample_s: y,
                difference_s: y - x,
                share_of_gap: (gap != 0.0).then(|| (y - x) / gap),
            })
        })
        .collect();
    parts.sort_by_key(|p| p.part);
    let granularity_note = fused.then(|| {
        let who = match (a.is_fused(), b.is_fused()) {
            (true, true) => "both runs fuse".to_owned(),
            (true, false) => format!("{a_label} fuses"),
            _ => format!("{b_label} fuses"),
        };
        let mut note = format!("{who} forward, backward and optimizer into one program, so the compute is compared as one part");
        if a.is_fused() != b.is_fused() {
            // The data parts then do not measure the same work.
            let (fused_side, eager_side) = if a.is_fused() {
                (a_label, b_label)
            } else {
                (b_label, a_label)
            };
            note.push_str(&format!(
                "; the data parts differ in what they hold: {fused_side}'s is only the host work before its program (what the program itself gathers or copies counts as compute), {eager_side}'s the whole batch preparation and copy to the device, so a gap in data is partly a difference in where the batch is prepared"
            ));
        }
        note
    });
    let verdict = if gap == 0.0 || a_total <= 0.0 {
        "no gap in time per sample between the two breakdowns".to_owned()
    } else {
        let (slower, faster) = if gap > 0.0 {
            (b_label, a_label)
        } else {
            (a_label, b_label)
        };
        let top = parts
            .iter()
            .filter(|p| p.difference_s * gap > 0.0)
            .max_by(|x, y| x.difference_s.abs().total_cmp(&y.difference_s.abs()));
        let ratio = b_total.max(a_total) / b_total.min(a_total);
        match top {
            Some(t) => format!(
                "{slower} takes {ratio:.2}× the time per sample of {faster} in the breakdown steps; {} accounts for {:.0} % of the gap ({} vs {} per sample)",
                t.part.as_str(),
                t.share_of_gap.unwrap_or(0.0) * 100.0,
                fmt_s(if gap > 0.0 { t.b_per_sample_s } else { t.a_per_sample_s }),
                fmt_s(if gap > 0.0 { t.a_per_sample_s } else { t.b_per_sample_s }),
            ),
            None => format!("{slower} takes {ratio:.2}× the time per sample of {faster}"),
        }
    };
    Explanation {
        a_per_sample_s: a_total,
        b_per_sample_s: b_total,
        gap_s: gap,
        parts,
        granularity_note,
        verdict,
    }
}

/// Seconds in the unit a person reads (s, ms, µs).
pub fn fmt_s(s: f64) -> String {
    let a = s.abs();
    if a >= 1.0 {
        format!("{s:.3} s")
    } else if a >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

#[cfg(test)]
mod tests;

//! What the search decides after each round: estimates, failures, the
//! candidates stopped (settled slower, lower half), the next round, the
//! confirmation's ratio, and the outcome in words.

use super::{
    figure_text, interval_text, CandidateTrace, Confirmation, Fate, RoundKind, RoundPlan, Search,
    TuneOutcome,
};
use crate::compare::speedup::{ratio_from_intervals, ratio_over_repeats};
use crate::stats::{mean_ci95, Interval};
use crate::tune::Ended;

/// Each candidate once, in the order of its first run.
fn unique(order: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for &c in order {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// `each` candidates' runs, `repeats` times, interleaved (A B A B …).
fn interleave(each: &[usize], repeats: u32) -> Vec<usize> {
    (0..repeats).flat_map(|_| each.iter().copied()).collect()
}

impl Search {
    /// The score (higher is better) and its interval of a candidate's
    /// latest estimate.
    fn score(&self, c: usize) -> Option<(f64, Option<Interval>)> {
        let (v, ci) = self.candidates[c].latest()?;
        Some(self.settings.objective.score(v, ci))
    }

    /// Each candidate's estimate for the round: one run's figure and its
    /// own interval, or the geometric mean of several with a Student-t
    /// interval on their logarithms.
    pub(super) fn estimate_round(&mut self, plan: &RoundPlan) {
        for c in unique(&plan.order) {
            let Some(e) = self.candidates[c]
                .rounds
                .iter_mut()
                .find(|r| r.round == plan.round)
            else {
                continue;
            };
            let values: Vec<f64> = e.runs.iter().filter_map(|r| r.value).collect();
            match values.as_slice() {
                [] => (e.value, e.ci95) = (None, None),
                [one] => e.value = Some(*one),
                many => {
                    // On the logarithms, as the confirmation's ratio is: a
                    // positive interval however few the runs.
                    let logs: Vec<f64> = many.iter().map(|v| v.ln()).collect();
                    let (mean, ci) = mean_ci95(&logs).expect("two or more values");
                    e.value = Some(mean.exp());
                    e.ci95 = Some(Interval {
                        low: ci.low.exp(),
                        high: ci.high.exp(),
                    });
                }
            }
        }
    }

    /// Concludes a round that ran to its end; the next round, or `None`
    /// once the search is over.
    pub(super) fn after_round(&mut self, plan: &RoundPlan) -> Option<RoundPlan> {
        self.estimate_round(plan);
        let ran = unique(&plan.order);
        for &c in &ran {
            let cand = &mut self.candidates[c];
            let evidence = cand.rounds.iter().find(|r| r.round == plan.round);
            if cand.fate == Fate::InPlay && evidence.is_none_or(|e| e.value.is_none()) {
                let reason = evidence
                    .and_then(|e| e.runs.iter().find_map(|r| r.failure.clone()))
                    .unwrap_or_else(|| "no figure measured".into());
                cand.fate = Fate::Failed;
                cand.why = format!("failed at round {}: {reason}", plan.round);
            }
        }
        if plan.kind == RoundKind::Confirm {
            let confirmation = self.confirmation(plan);
            self.finish(Ended::Finished, confirmation);
            return None;
        }
        self.stop_settled(plan.round);
        self.halve(plan.round, &ran);
        let in_play = self.ranked(self.in_play());
        let next_round = plan.round + 1;
        let length_factor = plan.length_factor * 2;
        if in_play.is_empty() {
            self.finish(Ended::Finished, None);
            return None;
        }
        if in_play.len() <= 2 || plan.round >= self.settings.max_race_rounds {
            return self.confirm_round(&in_play, next_round, length_factor);
        }
        for &c in &in_play {
            self.candidates[c].why = format!("in the race at round {next_round}");
        }
        Some(RoundPlan {
            round: next_round,
            kind: RoundKind::Race,
            length_factor,
            order: interleave(&in_play, self.settings.race_repeats),
        })
    }

    /// `cands` best first by their latest score.
    fn ranked(&self, mut cands: Vec<usize>) -> Vec<usize> {
        let key = |c: usize| self.score(c).map_or(f64::NEG_INFINITY, |s| s.0);
        cands.sort_by(|&a, &b| key(b).total_cmp(&key(a)));
        cands
    }

    /// Stops each candidate whose interval lies wholly below the leader's
    /// by more than the objective's tolerance.
    fn stop_settled(&mut self, round: u32) {
        let in_play = self.ranked(self.in_play());
        let Some(&leader) = in_play.first() else {
            return;
        };
        let Some((_, Some(lead_ci))) = self.score(leader) else {
            return;
        };
        let tolerance = self.settings.objective.tolerance();
        for &c in &in_play[1..] {
            let Some((_, Some(ci))) = self.score(c) else {
                continue;
            };
            if ci.high < lead_ci.low * (1.0 - tolerance) {
                let mine = self.candidates[c].latest().and_then(|l| l.1);
                let theirs = self.candidates[leader].latest().and_then(|l| l.1);
                let why = format!(
                    "settled worse at round {round}: its 95 % interval ({}) is wholly worse than the leader's ({}, {}) by more than {:.0} %",
                    interval_text(mine),
                    interval_text(theirs),
                    self.candidates[leader].label,
                    tolerance * 100.0
                );
                let cand = &mut self.candidates[c];
                cand.fate = Fate::StoppedSlower;
                cand.why = why;
            }
        }
    }

    /// Keeps the better half (at least two) of the candidates that ran in
    /// the round, ranked together with those just settled worse (so none
    /// goes on behind one that was stopped); stops the rest.
    fn halve(&mut self, round: u32, ran: &[usize]) {
        let keep = ran.len().div_ceil(2).max(2);
        let measured: Vec<usize> = ran
            .iter()
            .copied()
            .filter(|&c| self.candidates[c].fate != Fate::Failed)
            .collect();
        let ranked = self.ranked(measured);
        let Some(&leader) = ranked.first() else {
            return;
        };
        let lead = self.candidates[leader].latest().map(|l| l.0);
        for &c in ranked.iter().skip(keep) {
            if self.candidates[c].fate != Fate::InPlay {
                continue;
            }
            let mine = self.candidates[c].latest().map(|l| l.0);
            let cand = &mut self.candidates[c];
            cand.fate = Fate::StoppedLowerHalf;
            cand.why = format!(
                "not in the better half at round {round}: {} against the leader's {}",
                mine.map_or_else(|| "no figure".into(), figure_text),
                lead.map_or_else(|| "no figure".into(), figure_text),
            );
        }
    }

    /// The confirmation round of the leader and the runner-up (the best
    /// other candidate in play, else the best one stopped last).
    fn confirm_round(
        &mut self,
        in_play: &[usize],
        round: u32,
        length_factor: u32,
    ) -> Option<RoundPlan> {
        let leader = in_play[0];
        for &c in in_play.iter().skip(2) {
            let cand = &mut self.candidates[c];
            cand.fate = Fate::StoppedLowerHalf;
            cand.why = format!("not in the top two after the last race round ({round})");
        }
        let runner_up = in_play.get(1).copied().or_else(|| {
            let stopped: Vec<usize> = (0..self.candidates.len())
                .filter(|&c| {
                    c != leader
                        && matches!(
                            self.candidates[c].fate,
                            Fate::StoppedSlower | Fate::StoppedLowerHalf
                        )
                })
                .collect();
            let furthest = stopped
                .iter()
                .filter_map(|&c| self.candidates[c].round_reached)
                .max()?;
            self.ranked(stopped)
                .into_iter()
                .find(|&c| self.candidates[c].round_reached == Some(furthest))
        });
        let Some(runner_up) = runner_up else {
            let only = Confirmation {
                winner: leader,
                runner_up: None,
                ratio: None,
            };
            self.finish(Ended::Finished, Some(only));
            return None;
        };
        if self.candidates[runner_up].fate != Fate::InPlay {
            self.candidates[runner_up].fate = Fate::InPlay;
        }
        for c in [leader, runner_up] {
            self.candidates[c].why = format!("in the confirmation (round {round})");
        }
        Some(RoundPlan {
            round,
            kind: RoundKind::Confirm,
            length_factor,
            order: interleave(&[leader, runner_up], self.settings.confirm_repeats),
        })
    }

    /// The winner of the confirmation and the ratio of its figure to the
    /// runner-up's (as scores: ≥ 1 means the winner is better).
    fn confirmation(&self, plan: &RoundPlan) -> Option<Confirmation> {
        let (a, b) = (plan.order[0], *plan.order.get(1)?);
        let scores = |c: usize| -> Vec<(f64, Option<Interval>)> {
            let Some(e) = self.candidates[c]
                .rounds
                .iter()
                .find(|r| r.round == plan.round)
            else {
                return Vec::new();
            };
            let one_ci = (e.runs.iter().filter(|r| r.value.is_some()).count() == 1)
                .then_some(e.ci95)
                .flatten();
            e.runs
                .iter()
                .filter_map(|r| r.value)
                .map(|v| self.settings.objective.score(v, one_ci))
                .collect()
        };
        let (sa, sb) = (scores(a), scores(b));
        match (sa.is_empty(), sb.is_empty()) {
            (true, true) => return None,
            (false, true) | (true, false) => {
                let winner = if sa.is_empty() { b } else { a };
                return Some(Confirmation {
                    winner,
                    runner_up: Some(if winner == a { b } else { a }),
                    ratio: None,
                });
            }
            (false, false) => {}
        }
        let values = |s: &[(f64, Option<Interval>)]| s.iter().map(|x| x.0).collect::<Vec<_>>();
        let (va, vb) = (values(&sa), values(&sb));
        let estimate = match (sa.as_slice(), sb.as_slice()) {
            _ if va.len() >= 2 && vb.len() >= 2 => {
                ratio_over_repeats(&va, &vb).map(|r| (r.ratio, Some(r.ci95)))
            }
            ([(x, Some(cx))], [(y, Some(cy))]) => {
                ratio_from_intervals(*x, *cx, *y, *cy).map(|r| (r.ratio, Some(r.ci95)))
            }
            _ => None,
        };
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (ratio, ci) = estimate.unwrap_or((mean(&va) / mean(&vb), None));
        Some(if ratio >= 1.0 {
            Confirmation {
                winner: a,
                runner_up: Some(b),
                ratio: Some((ratio, ci)),
            }
        } else {
            let flipped = ci.map(|c| Interval {
                low: 1.0 / c.high,
                high: 1.0 / c.low,
            });
            Confirmation {
                winner: b,
                runner_up: Some(a),
                ratio: Some((1.0 / ratio, flipped)),
            }
        })
    }

    /// The best candidates so far: furthest round reached, then score.
    fn best_so_far(&self) -> Vec<usize> {
        let mut ranked: Vec<usize> = (0..self.candidates.len())
            .filter(|&c| {
                !matches!(self.candidates[c].fate, Fate::Failed | Fate::Unsupported)
                    && self.score(c).is_some()
            })
            .collect();
        let key = |c: usize| {
            (
                self.candidates[c].round_reached.unwrap_or(0),
                self.score(c).map_or(f64::NEG_INFINITY, |s| s.0),
            )
        };
        ranked.sort_by(|&a, &b| {
            let (ka, kb) = (key(a), key(b));
            kb.0.cmp(&ka.0).then(kb.1.total_cmp(&ka.1))
        });
        ranked
    }

    /// The outcome as it stands: the confirmation's, else the best so far.
    pub(super) fn outcome(&self, ended: Ended, conf: Option<Confirmation>) -> TuneOutcome {
        let objective = self.settings.objective;
        let mut candidates: Vec<CandidateTrace> = self.candidates.clone();
        let (winner, runner_up, score_ratio) = match conf {
            Some(c) => (Some(c.winner), c.runner_up, c.ratio),
            None => {
                let best = self.best_so_far();
                (best.first().copied(), best.get(1).copied(), None)
            }
        };
        // The ratio of figures: for "lower is better" the inverse of the scores'.
        let ratio = score_ratio.map(|(r, ci)| {
            if objective.higher_is_better() {
                (r, ci)
            } else {
                let ci = ci.map(|c| Interval {
                    low: 1.0 / c.high,
                    high: 1.0 / c.low,
                });
                (1.0 / r, ci)
            }
        });
        let tie = ratio
            .and_then(|(_, ci)| ci)
            .map(|c| c.low <= 1.0 && 1.0 <= c.high);
        let confirmed = conf.is_some_and(|c| c.runner_up.is_some() && c.ratio.is_some());
        let label = |c: usize| candidates[c].label.clone();
        let what = objective.title();
        let verdict = match (winner, runner_up, ratio) {
            (Some(w), Some(r), Some((x, Some(ci)))) if ended == Ended::Finished => {
                let ci_text = format!("95 % CI {:.2}–{:.2}", ci.low, ci.high);
                if tie == Some(true) {
                    format!("a tie: {} and {} ({x:.2}× its {what}, {ci_text}: the interval holds 1, either will do)", label(w), label(r))
                } else {
                    format!("{} wins: {x:.2}× the {what} of the runner-up, {}, {ci_text}", label(w), label(r))
                }
            }
            (Some(w), Some(r), Some((x, None))) if ended == Ended::Finished => format!(
                "{} wins: {x:.2}× the {what} of the runner-up, {} (no interval: too few runs measured)",
                label(w),
                label(r)
            ),
            (Some(w), Some(r), None) if ended == Ended::Finished && conf.is_some() => format!(
                "{} wins: the runner-up, {}, failed in the confirmation",
                label(w),
                label(r)
            ),
            (Some(w), None, _) if ended == Ended::Finished => {
                format!("{} wins: the only candidate that ran", label(w))
            }
            (Some(w), _, _) => format!(
                "best so far: {} ({} {}); not confirmed: {}",
                label(w),
                candidates[w].latest().map_or_else(|| "–".into(), |l| figure_text(l.0)),
                objective.unit(),
                ended.words()
            ),
            (None, _, _) => match ended {
                Ended::Finished => "no candidate could run: each failed or was refused (see why)".into(),
                other => format!("no candidate measured yet: {}", other.words()),
            },
        };
        if ended == Ended::Finished {
            if let Some(w) = winner {
                candidates[w].fate = Fate::Winner;
                candidates[w].why = "the winner".into();
            }
            if let Some(r) = runner_up.filter(|_| conf.is_some()) {
                candidates[r].fate = Fate::RunnerUp;
                candidates[r].why = "the runner-up, in the confirmation".into();
            }
        }
        TuneOutcome {
            objective,
            unit: objective.unit().into(),
            ended,
            winner,
            runner_up,
            ratio: ratio.map(|r| r.0),
            ratio_ci95: ratio.and_then(|r| r.1),
            tie,
            confirmed,
            verdict,
            rounds: candidates
                .iter()
                .filter_map(|c| c.round_reached)
                .max()
                .map_or(0, |r| r + 1),
            candidates,
        }
    }
}

//! Bisection over a framework's releases: which release first changed a
//! metric (throughput), by binary search between a good and a bad release.
//! Pure: [`Bisection::next`] says which release to measure and how many runs
//! more; [`Bisection::record`] takes what those runs measured. Each step's
//! repeats are sized by the spread measured so far (at least `min_repeats`,
//! more while a release cannot be told apart from either side, at most
//! `max_repeats`); a release is placed with the side whose interval holds it.

use crate::compare::speedup::{ratio_over_repeats, repeats_needed};
use crate::error::SpecError;
use crate::stats::{mean_ci95, Interval};
use crate::versions::Release;

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Measure `release` (index `index` in the list) `runs` more times.
    Measure {
        index: usize,
        release: Release,
        runs: u32,
    },
    /// The search is over.
    Done(Outcome),
}

/// One release's runs as evidence.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Evidence {
    pub release: Release,
    pub values: Vec<f64>,
    pub mean: f64,
    pub ci95: Option<Interval>,
}

/// What the bisection found.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// The first release whose metric differs from the good release's;
    /// `None` when good and bad were not told apart.
    pub first_changed: Option<Release>,
    /// The release before it (the last like the good one).
    pub last_same: Option<Release>,
    /// first_changed ÷ last_same, with its interval.
    pub ratio: Option<f64>,
    pub ratio_ci95: Option<Interval>,
    /// Whether every placement was decided by the intervals (not only by
    /// which side a release was closer to).
    pub certain: bool,
    pub verdict: String,
    /// Every release measured, in release order.
    pub evidence: Vec<Evidence>,
}

/// The releases from `good` through `bad` (both included) among
/// `available` (the registry's, oldest first): what a bisection walks.
pub fn releases_between(
    available: &[Release],
    good: Release,
    bad: Release,
) -> Result<Vec<Release>, SpecError> {
    let listed = |field: &'static str, r: Release| {
        if available.contains(&r) {
            return Ok(());
        }
        let names: Vec<String> = available.iter().map(ToString::to_string).collect();
        Err(SpecError::new(
            field,
            r,
            &format!(
                "a release the registry lists and the studio supports: {}",
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            ),
        ))
    };
    listed("good", good)?;
    listed("bad", bad)?;
    if bad <= good {
        return Err(SpecError::new(
            "bad",
            bad,
            &format!("a release after good = {good} (the older release is the good one)"),
        ));
    }
    let mut between: Vec<Release> = available
        .iter()
        .copied()
        .filter(|r| (good..=bad).contains(r))
        .collect();
    between.sort();
    between.dedup();
    Ok(between)
}

/// The state of a bisection between `releases[0]` (good) and the last (bad).
#[derive(Debug, Clone)]
pub struct Bisection {
    releases: Vec<Release>,
    samples: Vec<Vec<f64>>,
    /// Like the good release, like the bad one.
    lo: usize,
    hi: usize,
    min_repeats: u32,
    max_repeats: u32,
    certain: bool,
}

fn like(a: &[f64], b: &[f64]) -> Option<bool> {
    ratio_over_repeats(a, b).map(|r| r.ci95.low <= 1.0 && 1.0 <= r.ci95.high)
}

fn mean_log(v: &[f64]) -> f64 {
    v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64
}

impl Bisection {
    /// `releases` in ascending order, good first, bad last (at least two).
    pub fn new(
        releases: Vec<Release>,
        min_repeats: u32,
        max_repeats: u32,
    ) -> Result<Bisection, SpecError> {
        if releases.len() < 2 || releases.windows(2).any(|w| w[0] >= w[1]) {
            return Err(SpecError::new(
                "releases",
                releases.len(),
                "at least two releases in ascending order (the good one before the bad one)",
            ));
        }
        if !(2..=50).contains(&min_repeats) || max_repeats < min_repeats {
            return Err(SpecError::new(
                "repeats",
                min_repeats,
                "2 to 50 runs per release, the most at least the fewest",
            ));
        }
        let n = releases.len();
        Ok(Bisection {
            samples: vec![Vec::new(); n],
            releases,
            lo: 0,
            hi: n - 1,
            min_repeats,
            max_repeats,
            certain: true,
        })
    }

    /// Runs wanted at `i` so far: the fewest, or what the spread between
    /// `i` and `other` says would separate them (within the most).
    fn wanted(&self, i: usize, other: usize) -> u32 {
        let have = self.samples[i].len() as u32;
        let needed =
            repeats_needed(&self.samples[i], &self.samples[other]).unwrap_or(self.max_repeats);
        have.max(self.min_repeats).max(needed.min(self.max_repeats))
    }

    fn measure(&self, i: usize, want: u32) -> Option<Step> {
        let have = self.samples[i].len() as u32;
        (have < want).then(|| Step::Measure {
            index: i,
            release: self.releases[i],
            runs: want - have,
        })
    }

    /// What to measure next, or the outcome.
    pub fn next(&self) -> Step {
        let (good, bad) = (0, self.releases.len() - 1);
        for i in [good, bad] {
            if let Some(s) = self.measure(i, self.min_repeats) {
                return s;
            }
        }
        // Good and bad must differ beyond the interval, else there is nothing to find.
        if like(&self.samples[bad], &self.samples[good]) != Some(false) {
            // The spread's estimate (a test on the difference) can say enough
            // while the two intervals still overlap: then at least one more
            // run at each end, until they part or the most is reached.
            let have = self.samples[good].len().min(self.samples[bad].len()) as u32;
            let more = self
                .wanted(good, bad)
                .max(self.wanted(bad, good))
                .max(have + 1)
                .min(self.max_repeats);
            for i in [good, bad] {
                if let Some(s) = self.measure(i, more) {
                    return s;
                }
            }
            return Step::Done(self.outcome(false));
        }
        if self.hi == self.lo + 1 {
            return Step::Done(self.outcome(true));
        }
        let mid = (self.lo + self.hi) / 2;
        let have = self.samples[mid].len() as u32;
        let want = if have < self.min_repeats {
            self.min_repeats
        } else {
            // Still undecided (record places it once it can): more runs, as
            // the spread says, at least two more, within the most.
            self.wanted(mid, good)
                .max(self.wanted(mid, bad))
                .max(have + 2)
                .min(self.max_repeats)
        };
        Step::Measure {
            index: mid,
            release: self.releases[mid],
            runs: want.saturating_sub(have).max(1),
        }
    }

    /// Adds what `runs` at release `index` measured, and moves the search on
    /// while the release in the middle can be placed.
    pub fn record(&mut self, index: usize, values: &[f64]) {
        if let Some(s) = self.samples.get_mut(index) {
            s.extend(values.iter().copied().filter(|v| v.is_finite() && *v > 0.0));
        }
        let (good, bad) = (0, self.releases.len() - 1);
        while self.hi > self.lo + 1 {
            let mid = (self.lo + self.hi) / 2;
            let m = &self.samples[mid];
            if m.len() < self.min_repeats as usize {
                return;
            }
            let (g, b) = (&self.samples[good], &self.samples[bad]);
            match (like(m, g), like(m, b)) {
                (Some(true), Some(false)) => self.lo = mid,
                (Some(false), Some(true)) => self.hi = mid,
                _ if (m.len() as u32) < self.max_repeats => return,
                _ => {
                    // At the most runs and still not placed by the intervals:
                    // with the closer side on the log scale.
                    self.certain = false;
                    if (mean_log(m) - mean_log(g)).abs() <= (mean_log(m) - mean_log(b)).abs() {
                        self.lo = mid;
                    } else {
                        self.hi = mid;
                    }
                }
            }
        }
    }

    fn outcome(&self, found: bool) -> Outcome {
        let evidence: Vec<Evidence> = self
            .releases
            .iter()
            .zip(&self.samples)
            .filter(|(_, v)| !v.is_empty())
            .map(|(r, v)| {
                let ci = mean_ci95(v);
                Evidence {
                    release: *r,
                    values: v.clone(),
                    mean: ci.map_or_else(|| v[0], |c| c.0),
                    ci95: ci.map(|c| c.1),
                }
            })
            .collect();
        let (first, good) = (self.releases[self.hi], self.releases[self.lo]);
        let est = ratio_over_repeats(&self.samples[self.hi], &self.samples[self.lo]);
        let verdict = if !found {
            format!(
                "no change shown between {} and {} at {} runs each: their intervals overlap",
                self.releases[0],
                self.releases[self.releases.len() - 1],
                self.samples[0].len()
            )
        } else {
            format!(
                "the metric first changed in {first}: {:.3}× {good}'s{}{}",
                est.map_or(f64::NAN, |e| e.ratio),
                est.map(|e| format!(" (95 % CI {:.3}–{:.3})", e.ci95.low, e.ci95.high))
                    .unwrap_or_default(),
                if self.certain {
                    ""
                } else {
                    "; a release in between was placed by which side it was closer to, its interval overlapping both"
                }
            )
        };
        Outcome {
            first_changed: found.then_some(first),
            last_same: found.then_some(good),
            ratio: found.then(|| est.map(|e| e.ratio)).flatten(),
            ratio_ci95: found.then(|| est.map(|e| e.ci95)).flatten(),
            certain: self.certain,
            verdict,
            evidence,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn releases(n: u32) -> Vec<Release> {
        (0..n).map(|i| Release::new(0, 6 + i / 3, i % 3)).collect()
    }

    /// Runs the bisection against `measure(index, run) -> value`; the
    /// outcome and which releases were measured.
    fn bisect(n: u32, measure: impl Fn(usize, u32) -> f64) -> (Outcome, Vec<usize>) {
        let mut b = Bisection::new(releases(n), 3, 9).unwrap();
        let mut measured = Vec::new();
        let mut counts = vec![0u32; n as usize];
        for _ in 0..200 {
            match b.next() {
                Step::Done(o) => return (o, measured),
                Step::Measure { index, runs, .. } => {
                    let values: Vec<f64> = (0..runs)
                        .map(|k| measure(index, counts[index] + k))
                        .collect();
                    counts[index] += runs;
                    if !measured.contains(&index) {
                        measured.push(index);
                    }
                    b.record(index, &values);
                }
            }
        }
        panic!("the bisection did not end");
    }

    /// ±1 % around `level`, the same small pattern at every release.
    fn jitter(level: f64, run: u32) -> f64 {
        level * (1.0 + [0.01, -0.01, 0.004, -0.006, 0.008][run as usize % 5])
    }

    #[test]
    fn a_known_change_is_found_in_few_steps() {
        for change in [1usize, 5, 7, 11] {
            let (o, measured) = bisect(12, |i, run| {
                jitter(if i < change { 100.0 } else { 90.0 }, run)
            });
            assert_eq!(o.first_changed, Some(releases(12)[change]), "{o:?}");
            assert_eq!(o.last_same, Some(releases(12)[change - 1]));
            assert!(o.certain, "{o:?}");
            // Good, bad and at most ⌈log2 11⌉ = 4 in between.
            assert!(measured.len() <= 6, "{measured:?}");
            let r = o.ratio.unwrap();
            assert!((r - 0.9).abs() < 0.02, "{r}");
            assert!(o.verdict.starts_with(&format!(
                "the metric first changed in {}",
                releases(12)[change]
            )));
        }
    }

    #[test]
    fn good_and_bad_alike_end_without_an_answer() {
        let (o, measured) = bisect(8, |_, run| jitter(100.0, run));
        assert_eq!(o.first_changed, None);
        assert_eq!(measured, vec![0, 7]);
        assert!(
            o.verdict
                .starts_with("no change shown between 0.6.0 and 0.8.1"),
            "{}",
            o.verdict
        );
    }

    #[test]
    fn ends_whose_intervals_overlap_get_more_runs_before_no_change_is_said() {
        // Two runs each on a busy machine: the difference's test says two
        // suffice, but each mean's interval (t = 12.7 at one degree of
        // freedom) still overlaps the other's.
        let mut b = Bisection::new(releases(3), 2, 9).unwrap();
        b.record(0, &[155.3, 111.4]);
        b.record(2, &[24.3, 19.9]);
        assert!(
            matches!(b.next(), Step::Measure { runs: 1, .. }),
            "{:?}",
            b.next()
        );
        b.record(0, &[140.0]);
        b.record(2, &[22.0]);
        match b.next() {
            Step::Measure { index, .. } => assert_eq!(index, 1),
            Step::Done(o) => panic!("the ends part at 3 runs each: {o:?}"),
        }
    }

    #[test]
    fn a_noisy_release_gets_more_runs_before_it_is_placed() {
        // The release in the middle is noisy at first: 3 runs cannot place it.
        let (o, _) = bisect(5, |i, run| match (i, run) {
            (2, 0) => 80.0,
            (2, 1) => 120.0,
            _ => jitter(if i < 3 { 100.0 } else { 90.0 }, run),
        });
        assert_eq!(o.first_changed, Some(releases(5)[3]), "{o:?}");
        let mid = o
            .evidence
            .iter()
            .find(|e| e.release == releases(5)[2])
            .unwrap();
        assert!(mid.values.len() > 3, "{mid:?}");
    }

    #[test]
    fn the_releases_between_are_the_listed_ones_and_bad_ends_name_their_field() {
        let listed = releases(9);
        let (good, bad) = (listed[2], listed[6]);
        assert_eq!(releases_between(&listed, good, bad).unwrap(), listed[2..=6]);
        assert_eq!(
            releases_between(&listed, bad, good).unwrap_err().field,
            "bad"
        );
        assert_eq!(
            releases_between(&listed, good, good).unwrap_err().field,
            "bad"
        );
        let e = releases_between(&listed, Release::new(0, 4, 30), bad).unwrap_err();
        assert_eq!(e.field, "good");
        assert!(e.to_string().contains("0.6.0, 0.6.1"), "{e}");
        assert_eq!(
            releases_between(&listed, good, Release::new(9, 0, 0))
                .unwrap_err()
                .field,
            "bad"
        );
    }

    #[test]
    fn bad_input_names_the_field() {
        assert_eq!(
            Bisection::new(releases(1), 3, 9).unwrap_err().field,
            "releases"
        );
        let mut backwards = releases(3);
        backwards.reverse();
        assert_eq!(
            Bisection::new(backwards, 3, 9).unwrap_err().field,
            "releases"
        );
        assert_eq!(
            Bisection::new(releases(3), 1, 9).unwrap_err().field,
            "repeats"
        );
    }
}

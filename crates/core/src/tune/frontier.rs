//! The frontier of a search: the candidates no other candidate beats on
//! both counts at once — throughput against peak memory, and throughput
//! against cost per epoch when a price was given. The winner answers "which
//! is best by the objective"; the frontier answers "what does each step of
//! speed cost": a person short of memory reads the smallest candidate that
//! is still on it.
//!
//! Each candidate's figures are the geometric means of its completed runs
//! in the last round it ran (a candidate stopped at the probe has only its
//! probe). The frontier compares those means, not intervals: it shows the
//! trade-off measured; the search's verdict says which differences are
//! settled.

use serde::{Deserialize, Serialize};

/// One candidate's measured figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Point {
    /// Its index among the search's candidates.
    pub candidate: usize,
    pub label: String,
    pub samples_per_s: f64,
    /// Peak memory in MiB (the worker's peak resident memory on the CPU,
    /// the framework allocator's peak on a GPU).
    pub peak_memory_mib: Option<f64>,
    /// Cost per epoch in US dollars at the search's price offering.
    pub cost_per_epoch_usd: Option<f64>,
}

/// The two frontiers, fastest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Frontier {
    /// Throughput against peak memory.
    pub memory: Vec<Point>,
    /// Throughput against cost per epoch (empty without a price).
    pub cost: Vec<Point>,
}

/// The points of `points` that no other point beats on both counts: at
/// least as fast and at most as costly by `cost`, and strictly better in
/// one. Points without the figure are left out. Fastest first.
fn pareto(points: &[Point], cost: impl Fn(&Point) -> Option<f64>) -> Vec<Point> {
    let usable: Vec<(&Point, f64)> = points
        .iter()
        .filter(|p| p.samples_per_s.is_finite() && p.samples_per_s > 0.0)
        .filter_map(|p| cost(p).filter(|c| c.is_finite()).map(|c| (p, c)))
        .collect();
    let beaten = |p: &Point, c: f64| {
        usable.iter().any(|&(q, qc)| {
            q.samples_per_s >= p.samples_per_s
                && qc <= c
                && (q.samples_per_s > p.samples_per_s || qc < c)
        })
    };
    let mut out: Vec<Point> = usable
        .iter()
        .filter(|&&(p, c)| !beaten(p, c))
        .map(|&(p, _)| p.clone())
        .collect();
    out.sort_by(|a, b| b.samples_per_s.total_cmp(&a.samples_per_s));
    out
}

/// The frontiers of a search's measured candidates.
pub fn frontier(points: &[Point]) -> Frontier {
    Frontier {
        memory: pareto(points, |p| p.peak_memory_mib),
        cost: pareto(points, |p| p.cost_per_epoch_usd),
    }
}

/// The geometric mean of positive finite values (`None`: none).
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = values
        .iter()
        .filter(|v| v.is_finite() && **v > 0.0)
        .map(|v| v.ln())
        .collect();
    if logs.is_empty() {
        return None;
    }
    #[allow(clippy::cast_precision_loss, reason = "a handful of runs")]
    let n = logs.len() as f64;
    Some((logs.iter().sum::<f64>() / n).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(candidate: usize, speed: f64, mib: Option<f64>, usd: Option<f64>) -> Point {
        Point {
            candidate,
            label: format!("c{candidate}"),
            samples_per_s: speed,
            peak_memory_mib: mib,
            cost_per_epoch_usd: usd,
        }
    }

    fn ids(points: &[Point]) -> Vec<usize> {
        points.iter().map(|p| p.candidate).collect()
    }

    #[test]
    fn a_candidate_beaten_on_both_counts_is_off_the_frontier() {
        let f = frontier(&[
            p(0, 200.0, Some(900.0), None), // fastest, largest
            p(1, 150.0, Some(400.0), None), // slower, smaller: on it
            p(2, 140.0, Some(500.0), None), // slower and larger than 1: off
            p(3, 100.0, Some(300.0), None), // smallest: on it
            p(4, 90.0, Some(300.0), None),  // as small as 3, slower: off
        ]);
        assert_eq!(ids(&f.memory), [0, 1, 3]);
        assert!(f.cost.is_empty(), "no price, no cost frontier");
    }

    #[test]
    fn equal_figures_stay_on_together_and_missing_figures_are_left_out() {
        let f = frontier(&[
            p(0, 100.0, Some(300.0), Some(0.5)),
            p(1, 100.0, Some(300.0), Some(0.4)),
            p(2, 120.0, None, Some(0.6)),
            p(3, f64::NAN, Some(10.0), None),
        ]);
        assert_eq!(ids(&f.memory), [0, 1], "neither beats the other");
        assert_eq!(ids(&f.cost), [2, 1], "1 is cheaper than 0 at its speed");
    }

    #[test]
    fn the_geometric_mean_skips_what_is_not_a_figure() {
        let g = geometric_mean(&[2.0, 8.0, f64::NAN, 0.0]).unwrap();
        assert!((g - 4.0).abs() < 1e-12, "{g}");
        assert_eq!(geometric_mean(&[]), None);
    }
}

//! Statistics behind every number the studio shows (definitions in
//! `docs/metrics.md`).
//!
//! - Throughput of a run: the median of the per-window throughputs of its steady
//!   windows, with a distribution-free 95 % confidence interval from order
//!   statistics (valid for any window distribution; needs ≥ 6 windows).
//! - Across repeats: the mean of the repeats' medians with a Student-t 95 % CI.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// One timing window as the worker reported it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowTiming {
    pub samples: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

impl WindowTiming {
    pub fn seconds(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    pub fn throughput(&self) -> f64 {
        let s = self.seconds();
        if s > 0.0 {
            self.samples as f64 / s
        } else {
            f64::NAN
        }
    }
}

/// A 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// How the warm-up windows were chosen, in words stored with every summary.
pub const WARMUP_RULE: &str = "the first window is warm-up when there are at least 3 windows; further leading windows are warm-up while their throughput is below 90 % of the median of the run's second half; at most half the windows are excluded";

/// Steady-state throughput of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SteadyThroughput {
    pub windows_total: usize,
    pub windows_warmup: usize,
    pub median_samples_per_s: f64,
    /// `None` with fewer than 6 steady windows.
    pub ci95: Option<Interval>,
    pub warmup_rule: &'static str,
}

pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    })
}

/// Distribution-free 95 % CI of the median: order statistics x(k) and x(n+1-k)
/// (1-based) with the largest k such that P(Bin(n, ½) ≤ k-1) ≤ 2.5 %, so the
/// coverage is at least 95 %. `None` for fewer than 6 values.
pub fn median_ci95(values: &[f64]) -> Option<Interval> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n < 6 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    // P(Bin(n, ½) ≤ k), accumulated term by term in log space: O(n) overall
    // (runs can have tens of thousands of windows).
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0; // ln C(n, 0)
    let mut cdf = (ln_choose + ln_half_n).exp();
    let mut k = 0;
    while k < n / 2 && cdf <= 0.025 {
        k += 1;
        ln_choose += ((n - k + 1) as f64).ln() - (k as f64).ln();
        cdf += (ln_choose + ln_half_n).exp();
    }
    // k is now the count of order statistics we may drop from each side.
    if k == 0 {
        return None;
    }
    Some(Interval {
        low: v[k - 1],
        high: v[n - k],
    })
}

/// Welch–Satterthwaite degrees of freedom of a difference of two means,
/// from each mean's squared standard error (`q = s² ÷ n`) and count (≥ 2
/// each), rounded down and at least 1.
pub fn welch_df(qa: f64, na: usize, qb: f64, nb: usize) -> usize {
    let den = qa * qa / (na.max(2) - 1) as f64 + qb * qb / (nb.max(2) - 1) as f64;
    if den <= 0.0 {
        return (na + nb).saturating_sub(2).max(1);
    }
    ((((qa + qb).powi(2) / den) + 1e-9).floor() as usize).max(1)
}

/// Two-sided 97.5 % quantile of Student's t with `df` degrees of freedom.
pub fn t_quantile_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        // Cornish-Fisher expansion around the normal quantile; < 0.001 off past 30.
        _ => {
            let z: f64 = 1.959_964;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// Mean and sample variance (n − 1) of the finite values, with their count
/// (`None` for fewer than 2).
pub fn mean_var(values: &[f64]) -> Option<(f64, f64, usize)> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n < 2 {
        return None;
    }
    let mean = v.iter().sum::<f64>() / n as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((mean, var, n))
}

/// Mean with a Student-t 95 % CI (`None` for fewer than 2 values).
pub fn mean_ci95(values: &[f64]) -> Option<(f64, Interval)> {
    let (mean, var, n) = mean_var(values)?;
    let half = t_quantile_975(n - 1) * (var / n as f64).sqrt();
    Some((
        mean,
        Interval {
            low: mean - half,
            high: mean + half,
        },
    ))
}

/// Number of leading warm-up windows under [`WARMUP_RULE`].
pub fn warmup_windows(throughputs: &[f64]) -> usize {
    let n = throughputs.len();
    if n < 3 {
        return 0;
    }
    let Some(reference) = median(&throughputs[n / 2..]) else {
        return 0;
    };
    let mut excluded = 1;
    // A NaN window (no time measured) counts as warm-up too.
    let steady = |x: f64| {
        matches!(
            x.partial_cmp(&(0.9 * reference)),
            Some(Ordering::Greater | Ordering::Equal)
        )
    };
    while excluded < n / 2 && !steady(throughputs[excluded]) {
        excluded += 1;
    }
    excluded
}

/// Steady-state throughput of a run's windows; `None` when no window has time.
pub fn steady_throughput(windows: &[WindowTiming]) -> Option<SteadyThroughput> {
    let tps: Vec<f64> = windows.iter().map(WindowTiming::throughput).collect();
    let warm = warmup_windows(&tps);
    let steady = &tps[warm..];
    let median_samples_per_s = median(steady)?;
    Some(SteadyThroughput {
        windows_total: windows.len(),
        windows_warmup: warm,
        median_samples_per_s,
        ci95: median_ci95(steady),
        warmup_rule: WARMUP_RULE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn median_ci_uses_order_statistics() {
        // n = 10: P(Bin(10,.5) ≤ 1) = 11/1024 ≈ 1.1 % ≤ 2.5 %, P(≤ 2) = 56/1024 ≈ 5.5 %.
        // So k = 2: the CI is [x(2), x(9)].
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(
            median_ci95(&v),
            Some(Interval {
                low: 2.0,
                high: 9.0
            })
        );
        // n = 6: P(≤ 0) = 1/64 ≈ 1.6 % → [x(1), x(6)].
        let v: Vec<f64> = (1..=6).map(f64::from).collect();
        assert_eq!(
            median_ci95(&v),
            Some(Interval {
                low: 1.0,
                high: 6.0
            })
        );
        assert_eq!(median_ci95(&v[..5]), None);
    }

    #[test]
    fn mean_ci_matches_hand_computation() {
        // mean 2, s = 1, n = 3: half-width = 4.303 × 1/√3 = 2.4843.
        let (m, ci) = mean_ci95(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(m, 2.0);
        assert!((ci.high - 4.484_3).abs() < 1e-3, "{ci:?}");
        assert!((t_quantile_975(40) - 2.021).abs() < 2e-3);
        assert!((t_quantile_975(120) - 1.980).abs() < 2e-3);
    }

    #[test]
    fn warmup_excludes_slow_leading_windows() {
        assert_eq!(
            warmup_windows(&[10.0, 50.0, 95.0, 100.0, 100.0, 101.0, 99.0, 100.0]),
            2
        );
        assert_eq!(warmup_windows(&[100.0; 8]), 1);
        assert_eq!(warmup_windows(&[100.0, 100.0]), 0);
        // Never more than half.
        assert_eq!(
            warmup_windows(&[1.0, 1.0, 1.0, 1.0, 100.0, 100.0, 100.0, 100.0]),
            4
        );
    }

    #[test]
    fn steady_throughput_from_fixed_windows() {
        let w = |samples, secs: f64| WindowTiming {
            samples,
            start_ns: 0,
            end_ns: (secs * 1e9) as u64,
        };
        let windows = vec![
            w(100, 10.0),
            w(100, 1.0),
            w(100, 1.0),
            w(100, 0.5),
            w(100, 1.0),
            w(100, 2.0),
            w(100, 1.0),
            w(100, 1.0),
        ];
        let s = steady_throughput(&windows).unwrap();
        assert_eq!(s.windows_warmup, 1);
        assert_eq!(s.median_samples_per_s, 100.0);
        assert_eq!(
            s.ci95,
            Some(Interval {
                low: 50.0,
                high: 200.0
            })
        );
    }
}

//! Comparisons that settle: each entry's throughput as a ratio of the
//! baseline's (its speed-up), with a 95 % interval, a plain verdict and the
//! number of repeats that would tell the two apart at the observed spread.
//!
//! - **Repeats on both sides** (≥ 2 runs each): Welch's t interval on the
//!   logarithms of the runs' steady throughputs, so the interval of the
//!   ratio is `exp(mean ln A − mean ln B ± t · se)`. Its degrees of freedom
//!   are Welch–Satterthwaite's, rounded down. This covers run-to-run spread.
//! - **One run on each side, each with ≥ 6 steady windows**: a circular
//!   moving-block bootstrap over windows — [`BOOTSTRAP_RESAMPLES`] resamples
//!   of each run's steady window throughputs, each built from blocks of
//!   `⌈n^⅓⌉` consecutive windows (wrapping round) starting at random
//!   windows, the ratio of the two resampled medians each time, and the
//!   2.5 % and 97.5 % quantiles of those ratios (percentile interval).
//!   Blocks, not single windows, because neighbouring windows of one run are
//!   not independent (clocks, caches and the host drift slowly); resampling
//!   single windows would treat a slow drift as noise and draw the interval
//!   too narrow. The generator is seeded with a constant, so a comparison
//!   gives the same interval every time it is computed.
//! - **Otherwise one run on a side**: each run's own 95 % interval (the
//!   distribution-free interval of its median window) is read as a normal
//!   interval on the log scale, `se = ln(high ÷ low) ÷ (2 × 1.96)`, and the
//!   two are combined.
//!
//!   Both single-run methods cover the spread of windows within these runs
//!   only, not between runs, and the method says so.
//! - **Repeats needed**: the smallest n (runs per side, up to 1,000) with
//!   `t(2n − 2) × √((s²_A + s²_B) ÷ n) < |mean ln A − mean ln B|`, using the
//!   spread observed over the repeats.

use serde::{Deserialize, Serialize};

use crate::stats::{mean_var, t_quantile_975, welch_df, Interval};

/// The speed-up of one entry against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Speedup {
    /// Index into `entries`.
    pub entry: usize,
    /// Throughput of the entry ÷ throughput of the baseline.
    pub ratio: f64,
    pub ci95: Option<Interval>,
    /// Whether the interval excludes 1: the data tell the two apart.
    pub settled: bool,
    /// Runs with a throughput on each side: (entry, baseline).
    pub runs: (u32, u32),
    /// How the interval was made, in words.
    pub method: String,
    /// The verdict for a person: "A is 1.18× B, 95 % CI 1.12–1.24", or
    /// "no difference shown at this many repeats".
    pub verdict: String,
    /// Runs per side that would separate the two at the observed spread
    /// (only from repeats; `None` with one run, or no difference at all).
    pub repeats_needed: Option<u32>,
}

/// The ratio A ÷ B and its interval on the log scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioEstimate {
    pub ratio: f64,
    pub ci95: Interval,
    /// Mean difference of the logarithms, and its standard error.
    pub log_diff: f64,
    pub se: f64,
}

/// Mean, variance and count of the logarithms of each side's throughputs
/// (≥ 2 per side, every one positive and finite).
struct LogStats {
    a: (f64, f64, usize),
    b: (f64, f64, usize),
}

impl LogStats {
    fn of(a: &[f64], b: &[f64]) -> Option<LogStats> {
        let logs = |values: &[f64]| -> Option<Vec<f64>> {
            values
                .iter()
                .map(|&v| (v.is_finite() && v > 0.0).then(|| v.ln()))
                .collect()
        };
        Some(LogStats {
            a: mean_var(&logs(a)?)?,
            b: mean_var(&logs(b)?)?,
        })
    }

    /// Mean ln A − mean ln B.
    fn diff(&self) -> f64 {
        self.a.0 - self.b.0
    }
}

/// Welch's interval for A ÷ B from repeated runs (≥ 2 per side, all > 0).
pub fn ratio_over_repeats(a: &[f64], b: &[f64]) -> Option<RatioEstimate> {
    let s = LogStats::of(a, b)?;
    let ((_, va, na), (_, vb, nb)) = (s.a, s.b);
    let (qa, qb) = (va / na as f64, vb / nb as f64);
    let se = (qa + qb).sqrt();
    let d = s.diff();
    let half = if se > 0.0 {
        t_quantile_975(welch_df(qa, na, qb, nb)) * se
    } else {
        0.0
    };
    Some(RatioEstimate {
        ratio: d.exp(),
        ci95: Interval {
            low: (d - half).exp(),
            high: (d + half).exp(),
        },
        log_diff: d,
        se,
    })
}

/// A ÷ B from one run each, with each run's own 95 % interval read as a
/// normal interval on the log scale.
pub fn ratio_from_intervals(
    a: f64,
    a_ci: Interval,
    b: f64,
    b_ci: Interval,
) -> Option<RatioEstimate> {
    let ok = |v: f64, ci: Interval| v > 0.0 && ci.low > 0.0 && ci.high >= ci.low && v.is_finite();
    if !ok(a, a_ci) || !ok(b, b_ci) {
        return None;
    }
    let z = 1.959_964;
    let se_a = (a_ci.high / a_ci.low).ln() / (2.0 * z);
    let se_b = (b_ci.high / b_ci.low).ln() / (2.0 * z);
    let se = (se_a * se_a + se_b * se_b).sqrt();
    let d = (a / b).ln();
    Some(RatioEstimate {
        ratio: a / b,
        ci95: Interval {
            low: (d - z * se).exp(),
            high: (d + z * se).exp(),
        },
        log_diff: d,
        se,
    })
}

/// Resamples of the bootstrap over windows.
pub const BOOTSTRAP_RESAMPLES: usize = 4000;

/// SplitMix64: a small, well-mixed generator, seeded with a constant so the
/// bootstrap is reproducible.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n ≥ 1; the modulo bias is below 2⁻⁵⁰ for window counts).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn median_sorted(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Consecutive windows per block of the moving-block bootstrap: `⌈n^⅓⌉`.
pub fn bootstrap_block(n: usize) -> usize {
    ((n as f64).cbrt().ceil() as usize).clamp(1, n.max(1))
}

/// Fills `out` with a circular moving-block resample of `w`.
fn block_resample(w: &[f64], out: &mut [f64], rng: &mut SplitMix) {
    let (n, b) = (w.len(), bootstrap_block(w.len()));
    let mut i = 0;
    while i < out.len() {
        let start = rng.below(n);
        for k in 0..b.min(out.len() - i) {
            out[i + k] = w[(start + k) % n];
        }
        i += b;
    }
}

/// A ÷ B (ratio of median window throughputs) from one run each, with a
/// percentile moving-block bootstrap interval over their steady windows
/// (≥ 6 per run, every one positive and finite).
pub fn ratio_by_bootstrap(a_windows: &[f64], b_windows: &[f64]) -> Option<RatioEstimate> {
    let ok = |w: &[f64]| w.len() >= 6 && w.iter().all(|x| x.is_finite() && *x > 0.0);
    if !ok(a_windows) || !ok(b_windows) {
        return None;
    }
    let ratio = median_sorted(&mut a_windows.to_vec()) / median_sorted(&mut b_windows.to_vec());
    let mut rng = SplitMix(0x7472_6169_6E62_656E); // "trainben"
    let (mut ra, mut rb) = (vec![0.0; a_windows.len()], vec![0.0; b_windows.len()]);
    let mut logs: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            block_resample(a_windows, &mut ra, &mut rng);
            block_resample(b_windows, &mut rb, &mut rng);
            (median_sorted(&mut ra) / median_sorted(&mut rb)).ln()
        })
        .collect();
    logs.sort_by(f64::total_cmp);
    let at = |q: f64| logs[((q * (logs.len() - 1) as f64).round() as usize).min(logs.len() - 1)];
    let (low, high) = (at(0.025), at(0.975));
    let (_, var, _) = mean_var(&logs)?;
    Some(RatioEstimate {
        ratio,
        ci95: Interval {
            low: low.exp().min(ratio),
            high: high.exp().max(ratio),
        },
        log_diff: ratio.ln(),
        se: var.sqrt(),
    })
}

/// Runs per side that would separate A and B at the spread of these repeats:
/// the smallest n ≤ 1,000 with `t(2n − 2) · √((s²_A + s²_B) ÷ n) < |d|`.
/// `None` when there is no difference at all, or too few repeats to know the spread.
pub fn repeats_needed(a: &[f64], b: &[f64]) -> Option<u32> {
    let s = LogStats::of(a, b)?;
    let (d, va, vb) = (s.diff().abs(), s.a.1, s.b.1);
    if d == 0.0 {
        return None;
    }
    (2..=1000u32)
        .find(|&n| t_quantile_975(2 * n as usize - 2) * ((va + vb) / f64::from(n)).sqrt() < d)
}

fn times(r: f64) -> String {
    format!("{r:.2}×")
}

/// The speed-up of `entry` (throughputs `a`, or one run with its interval)
/// against the baseline (`b`), with labels for the verdict.
pub fn speedup(
    entry: usize,
    label: &str,
    baseline_label: &str,
    a: &[(f64, Option<Interval>)],
    b: &[(f64, Option<Interval>)],
    windows: (&[f64], &[f64]),
) -> Option<Speedup> {
    let av: Vec<f64> = a.iter().map(|x| x.0).collect();
    let bv: Vec<f64> = b.iter().map(|x| x.0).collect();
    let runs = (av.len() as u32, bv.len() as u32);
    let (estimate, method, needed) = if av.len() >= 2 && bv.len() >= 2 {
        (
            ratio_over_repeats(&av, &bv),
            format!(
                "Welch's t on the log throughputs of {} and {} runs (run-to-run spread)",
                runs.0, runs.1
            ),
            repeats_needed(&av, &bv),
        )
    } else {
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let one = |s: &[(f64, Option<Interval>)]| match s {
            [(v, Some(ci))] => Some((*v, *ci)),
            _ => None,
        };
        let bootstrap = (a.len() == 1 && b.len() == 1)
            .then(|| ratio_by_bootstrap(windows.0, windows.1))
            .flatten();
        match (one(a), one(b)) {
            _ if bootstrap.is_some() => (
                bootstrap,
                format!(
                    "moving-block bootstrap over windows: {BOOTSTRAP_RESAMPLES} resamples of each run's {} and {} steady windows in blocks of {} and {} consecutive windows, ratio of medians, percentile interval (spread within these runs only; repeat runs for run-to-run spread)",
                    windows.0.len(),
                    windows.1.len(),
                    bootstrap_block(windows.0.len()),
                    bootstrap_block(windows.1.len())
                ),
                None,
            ),
            (Some((va, ca)), Some((vb, cb))) => (
                ratio_from_intervals(va, ca, vb, cb),
                "each run's own window interval, combined on the log scale (spread within these runs only; repeat runs for run-to-run spread)".to_string(),
                None,
            ),
            _ if !av.is_empty() && !bv.is_empty() && mean(&bv) > 0.0 => {
                let r = mean(&av) / mean(&bv);
                if !r.is_finite() {
                    return None;
                }
                return Some(Speedup {
                    entry,
                    ratio: r,
                    ci95: None,
                    settled: false,
                    runs,
                    method: "no interval: too few runs or windows on one side".into(),
                    verdict: format!(
                        "{label} is {} {baseline_label} on point values; no interval (too few runs or windows)",
                        times(r)
                    ),
                    repeats_needed: None,
                });
            }
            _ => return None,
        }
    };
    let e = estimate?;
    let settled = e.ci95.low > 1.0 || e.ci95.high < 1.0;
    let ci_text = format!("95 % CI {:.2}–{:.2}", e.ci95.low, e.ci95.high);
    let verdict = if settled {
        format!("{label} is {} {baseline_label}, {ci_text}", times(e.ratio))
    } else {
        let more = match needed {
            Some(n) if n > runs.0.min(runs.1) => {
                format!("; about {n} runs each would tell them apart at the observed spread")
            }
            Some(_) => String::new(),
            None if runs.0 >= 2 && runs.1 >= 2 => {
                "; more than 1,000 runs each would be needed at the observed spread".into()
            }
            None => "; repeat the runs to know how many would tell them apart".into(),
        };
        format!(
            "no difference shown between {label} and {baseline_label} at {} and {} run(s) (ratio {}, {ci_text}){more}",
            runs.0,
            runs.1,
            times(e.ratio)
        )
    };
    Some(Speedup {
        entry,
        ratio: e.ratio,
        ci95: Some(e.ci95),
        settled,
        runs,
        method,
        verdict,
        repeats_needed: needed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// By hand: ln A = ln 100 + {0.1, 0.2, 0.3}, ln B = ln 100 + {0.0, 0.1, −0.1}.
    /// Means differ by 0.2; both variances are 0.01; se = √(0.01/3 + 0.01/3) =
    /// 0.081650; Welch df = (0.006667)² ÷ (2 × 0.003333² ÷ 2) = 4, t = 2.776;
    /// half width 0.226660. Ratio e^0.2 = 1.22140, CI e^−0.02666 = 0.97369 to
    /// e^0.42666 = 1.53211. Repeats: n = 3 gives 2.776 × √(0.02/3) = 0.2267 ≥ 0.2;
    /// n = 4 gives t(6) = 2.447 × √(0.02/4) = 0.1730 < 0.2, so 4.
    #[test]
    fn welch_ratio_matches_the_hand_computation() {
        let a: Vec<f64> = [0.1, 0.2, 0.3]
            .iter()
            .map(|x: &f64| 100.0 * x.exp())
            .collect();
        let b: Vec<f64> = [0.0, 0.1, -0.1]
            .iter()
            .map(|x: &f64| 100.0 * x.exp())
            .collect();
        let e = ratio_over_repeats(&a, &b).unwrap_or_else(|| panic!("no estimate"));
        assert!(close(e.ratio, 1.221_40, 1e-4), "{e:?}");
        assert!(close(e.se, 0.081_650, 1e-5), "{e:?}");
        assert!(close(e.ci95.low, 0.973_69, 1e-4), "{e:?}");
        assert!(close(e.ci95.high, 1.532_11, 1e-4), "{e:?}");
        assert_eq!(repeats_needed(&a, &b), Some(4));
        let b_pairs: Vec<(f64, Option<Interval>)> = b.iter().map(|&x| (x, None)).collect();
        let a_pairs: Vec<(f64, Option<Interval>)> = a.iter().map(|&x| (x, None)).collect();
        let s =
            speedup(1, "A", "B", &a_pairs, &b_pairs, (&[], &[])).unwrap_or_else(|| panic!("none"));
        assert!(!s.settled);
        assert_eq!(
            s.verdict,
            "no difference shown between A and B at 3 and 3 run(s) (ratio 1.22×, 95 % CI 0.97–1.53); about 4 runs each would tell them apart at the observed spread"
        );
    }

    /// Tighter repeats settle: ln A = {0.18, 0.20, 0.22}, ln B = {−0.02, 0, 0.02}
    /// (+ ln 100): variances 0.0004, se = √(0.0008/3) = 0.016330, df = 4,
    /// half 2.776 × 0.016330 = 0.045332; CI e^0.154668 = 1.16726 to
    /// e^0.245332 = 1.27803.
    #[test]
    fn a_clear_difference_gives_the_plain_verdict() {
        let a: Vec<(f64, Option<Interval>)> = [0.18, 0.2, 0.22]
            .iter()
            .map(|x: &f64| (100.0 * x.exp(), None))
            .collect();
        let b: Vec<(f64, Option<Interval>)> = [-0.02, 0.0, 0.02]
            .iter()
            .map(|x: &f64| (100.0 * x.exp(), None))
            .collect();
        let s = speedup(2, "jax", "tch", &a, &b, (&[], &[])).unwrap_or_else(|| panic!("none"));
        assert!(s.settled);
        let ci = s.ci95.unwrap_or_else(|| panic!("no ci"));
        assert!(
            close(ci.low, 1.167_26, 1e-4) && close(ci.high, 1.278_03, 1e-4),
            "{ci:?}"
        );
        assert_eq!(s.verdict, "jax is 1.22× tch, 95 % CI 1.17–1.28");
        assert_eq!(s.runs, (3, 3));
    }

    /// One run each: A = 120 with CI [110, 130], B = 100 with CI [95, 105].
    /// se_A = ln(130/110) / 3.919928 = 0.042617, se_B = ln(105/95) / 3.919928 =
    /// 0.025532; se = 0.049680; ln 1.2 = 0.182322 ± 1.959964 × 0.049680 =
    /// 0.097373 → CI e^0.084949 = 1.08866 to e^0.279695 = 1.32272.
    #[test]
    fn one_run_each_combines_the_runs_own_intervals() {
        let a = [(
            120.0,
            Some(Interval {
                low: 110.0,
                high: 130.0,
            }),
        )];
        let b = [(
            100.0,
            Some(Interval {
                low: 95.0,
                high: 105.0,
            }),
        )];
        let s = speedup(1, "A", "B", &a, &b, (&[], &[])).unwrap_or_else(|| panic!("none"));
        let ci = s.ci95.unwrap_or_else(|| panic!("no ci"));
        assert!(
            close(ci.low, 1.088_66, 1e-4) && close(ci.high, 1.322_72, 1e-4),
            "{ci:?}"
        );
        assert!(s.settled && s.repeats_needed.is_none());
        assert!(s.method.contains("within these runs only"));
        // Without a window interval there is no interval at all, and it says so.
        let s = speedup(1, "A", "B", &[(120.0, None)], &b, (&[], &[]))
            .unwrap_or_else(|| panic!("none"));
        assert!(s.ci95.is_none() && !s.settled);
        assert!(s.verdict.contains("no interval"), "{}", s.verdict);
    }

    #[test]
    fn identical_repeats_need_no_more_runs_and_bad_values_give_nothing() {
        let same = [100.0, 101.0, 99.0];
        assert_eq!(repeats_needed(&same, &same), None);
        assert!(ratio_over_repeats(&[100.0, -1.0], &same).is_none());
        assert!(ratio_over_repeats(&[100.0], &same).is_none());
    }

    /// Constant windows: every resample has the same medians, so the
    /// interval is the ratio itself, 150 ÷ 100 = 1.5 exactly.
    #[test]
    fn bootstrap_of_constant_windows_is_the_ratio() {
        let e = ratio_by_bootstrap(&[150.0; 8], &[100.0; 7]).unwrap();
        assert_eq!(e.ratio, 1.5);
        assert_eq!((e.ci95.low, e.ci95.high), (1.5, 1.5));
        assert!(
            ratio_by_bootstrap(&[150.0; 5], &[100.0; 7]).is_none(),
            "6 windows needed"
        );
    }

    /// Hand-checkable bounds: every resampled median of A lies in [min A,
    /// max A] and of B in [min B, max B], so the interval lies inside
    /// [min A ÷ max B, max A ÷ min B] = [110/104, 130/96]; here the two sets
    /// are apart, so it excludes 1, and the same data give the same interval.
    #[test]
    fn bootstrap_over_windows_is_bounded_settles_and_repeats() {
        let a = [110.0, 115.0, 120.0, 125.0, 130.0, 118.0, 122.0, 121.0];
        let b = [96.0, 98.0, 100.0, 102.0, 104.0, 99.0, 101.0];
        let e = ratio_by_bootstrap(&a, &b).unwrap();
        // Medians 120.5 and 100: ratio 1.205.
        assert!((e.ratio - 1.205).abs() < 1e-12);
        assert!(
            e.ci95.low >= 110.0 / 104.0 && e.ci95.high <= 130.0 / 96.0,
            "{e:?}"
        );
        assert!(
            e.ci95.low > 1.0 && e.ci95.low < e.ratio && e.ci95.high > e.ratio,
            "{e:?}"
        );
        assert_eq!(ratio_by_bootstrap(&a, &b), Some(e));
        assert_eq!(
            [1, 6, 8, 9, 10, 27, 28].map(bootstrap_block),
            [1, 2, 2, 3, 3, 3, 4]
        );
        let s = speedup(1, "A", "B", &[(120.5, None)], &[(100.0, None)], (&a, &b)).unwrap();
        assert!(
            s.settled
                && s.method
                    .starts_with("moving-block bootstrap over windows: 4000 resamples of each run's 8 and 7 steady windows in blocks of 2 and 2"),
            "{s:?}"
        );
        assert!(
            s.verdict.starts_with("A is 1.21× B, 95 % CI"),
            "{}",
            s.verdict
        );
    }
}

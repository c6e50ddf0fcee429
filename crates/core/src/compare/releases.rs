//! Version sweeps: entries whose runs trained in one release of a framework
//! (`jax==0.7.2`, stored as their environment). A newer release slower than
//! an older one beyond the interval — the speed-up against the baseline
//! settled below 1 (or, the baseline being the newer, above 1) — is a
//! regression, said as a warning that starts `regression:`.

use super::speedup::Speedup;
use crate::record::RunRow;
use crate::versions::{parse_pin, Pin};

/// The release an entry's runs trained in, when they all name the same one.
fn release_of(runs: &[&RunRow]) -> Option<Pin> {
    let first = parse_pin(runs.first()?.environment.as_deref()?).ok()??;
    runs.iter()
        .all(|r| r.environment.as_deref() == Some(first.to_string().as_str()))
        .then_some(first)
}

/// One line per regression between an entry and the baseline.
pub(super) fn regressions(
    groups: &[(String, Vec<&RunRow>)],
    speedups: &[Speedup],
    baseline: usize,
) -> Vec<String> {
    let Some(base) = groups.get(baseline).and_then(|g| release_of(&g.1)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in speedups.iter().filter(|s| s.settled) {
        let Some(other) = groups.get(s.entry).and_then(|g| release_of(&g.1)) else {
            continue;
        };
        if other.framework != base.framework || other.release == base.release {
            continue;
        }
        // The interval of newer ÷ older (inverted when the baseline is newer).
        let interval = |invert: bool| {
            s.ci95
                .map(|c| {
                    let (lo, hi) = if invert {
                        (1.0 / c.high, 1.0 / c.low)
                    } else {
                        (c.low, c.high)
                    };
                    format!(", 95 % CI {lo:.3}–{hi:.3}")
                })
                .unwrap_or_default()
        };
        let line = if other.release > base.release && s.ratio < 1.0 {
            Some(format!(
                "regression: {other} trains at {:.3}× the throughput of the older {base}{} — slower beyond the interval",
                s.ratio,
                interval(false)
            ))
        } else if other.release < base.release && s.ratio > 1.0 {
            Some(format!(
                "regression: {base} trains at {:.3}× the throughput of the older {other}{} — slower beyond the interval",
                1.0 / s.ratio,
                interval(true)
            ))
        } else {
            None
        };
        out.extend(line);
    }
    out
}

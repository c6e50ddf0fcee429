//! The largest batch that fits (`--batch-size max`): doubling from the first
//! batch tried (1 unless the user starts higher), each probed by a short run
//! in a fresh worker process, until the first that does not fit (out of
//! memory on the device, or over the host memory limit the user set for a
//! CPU run) or the cap; when the first batch tried does not fit, halving
//! until one does. The run then uses the largest that fitted. This module
//! holds the rule; the app runs the probes and stores them.

use serde::{Deserialize, Serialize};

/// Steps each probe trains: the first allocates the activations and the
/// optimizer state, the next ones reach the steady peak (allocator caches,
/// gradients kept between steps).
pub const PROBE_STEPS: u32 = 3;

/// The largest batch searched unless the user caps it lower.
pub const DEFAULT_CAP: u32 = 65_536;

fn first_batch() -> u32 {
    1
}

/// What a search is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BatchSearch {
    /// The largest batch to try (a power of two is tried only up to it).
    pub cap: u32,
    /// The first batch tried (1 unless a known-good size saves probes).
    #[serde(default = "first_batch")]
    pub from: u32,
    /// Resident memory the worker's processes may use (bytes), for a CPU
    /// run; `None` on a GPU, where the device's memory is the limit.
    pub memory_limit_bytes: Option<u64>,
}

/// How one probe ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ProbeOutcome {
    /// It trained its steps within the memory there is.
    Fits,
    /// The framework ran out of device (or host) memory.
    OutOfMemory,
    /// Its resident memory went over the user's limit (stopped, or measured
    /// over it at the end).
    OverLimit,
    /// It failed for another reason: the search cannot go on.
    Failed,
}

impl ProbeOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeOutcome::Fits => "fits",
            ProbeOutcome::OutOfMemory => "out_of_memory",
            ProbeOutcome::OverLimit => "over_limit",
            ProbeOutcome::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "fits" => ProbeOutcome::Fits,
            "out_of_memory" => ProbeOutcome::OutOfMemory,
            "over_limit" => ProbeOutcome::OverLimit,
            "failed" => ProbeOutcome::Failed,
            _ => return None,
        })
    }

    /// In words, for a person.
    pub fn label(self) -> &'static str {
        match self {
            ProbeOutcome::Fits => "fits",
            ProbeOutcome::OutOfMemory => "out of memory",
            ProbeOutcome::OverLimit => "over the memory limit",
            ProbeOutcome::Failed => "failed",
        }
    }
}

/// One probe's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BatchProbe {
    pub batch_size: u32,
    pub outcome: ProbeOutcome,
    /// The probe's peak memory (the device's on a GPU, resident memory on a
    /// CPU), when it was measured.
    pub peak_memory_bytes: Option<u64>,
    pub peak_memory_source: Option<String>,
    /// Wall time of the probe's process, start to end.
    pub seconds: f64,
    /// Why it did not fit or failed, as the worker or the runner said it.
    pub reason: Option<String>,
}

/// The batch to probe next, or `None` when the search is over: doubling
/// from `search.from` until the first probe that does not fit or the cap;
/// when no probe has fitted yet and the last ran out of memory (or over the
/// limit), half of it; after a probe that failed for another reason, none.
pub fn next_probe(probes: &[BatchProbe], search: &BatchSearch) -> Option<u32> {
    let Some(last) = probes.last() else {
        return (search.from >= 1 && search.from <= search.cap).then_some(search.from);
    };
    let none_fit = probes.iter().all(|p| p.outcome != ProbeOutcome::Fits);
    match last.outcome {
        ProbeOutcome::Fits if probes.iter().any(|p| p.outcome != ProbeOutcome::Fits) => None,
        ProbeOutcome::Fits => last.batch_size.checked_mul(2).filter(|b| *b <= search.cap),
        ProbeOutcome::OutOfMemory | ProbeOutcome::OverLimit if none_fit => {
            (last.batch_size > 1).then_some(last.batch_size / 2)
        }
        _ => None,
    }
}

/// The largest batch that fitted, if any did.
pub fn largest_fit(probes: &[BatchProbe]) -> Option<u32> {
    probes
        .iter()
        .filter(|p| p.outcome == ProbeOutcome::Fits)
        .map(|p| p.batch_size)
        .max()
}

/// Whether a completed probe fits under the limit, from its peak resident
/// memory (a probe whose peak was not measured cannot be said to fit a limit).
pub fn within_limit(peak_bytes: Option<u64>, limit: Option<u64>) -> bool {
    match limit {
        None => true,
        Some(l) => peak_bytes.is_some_and(|p| p <= l),
    }
}

/// Parses a memory size: bytes, or a number with `K`, `M`, `G`, `T` (powers
/// of 1024, with or without `iB`/`B`): `8G`, `8GiB`, `512MiB`, `1.5G`.
pub fn parse_memory(s: &str) -> Option<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let unit = unit.trim().to_ascii_lowercase();
    let unit = unit.trim_end_matches('b').trim_end_matches('i');
    let mult = match unit {
        "" => 1u64,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    let bytes = n * mult as f64;
    (bytes.is_finite() && bytes >= 1.0).then_some(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up_to(cap: u32) -> BatchSearch {
        BatchSearch {
            cap,
            from: 1,
            memory_limit_bytes: None,
        }
    }

    fn probe(b: u32, outcome: ProbeOutcome) -> BatchProbe {
        BatchProbe {
            batch_size: b,
            outcome,
            peak_memory_bytes: None,
            peak_memory_source: None,
            seconds: 1.0,
            reason: None,
        }
    }

    #[test]
    fn doubling_stops_at_the_first_that_does_not_fit() {
        let mut probes = Vec::new();
        let mut tried = Vec::new();
        // Batches up to 24 fit: 1, 2, 4, 8, 16 fit, 32 does not.
        while let Some(b) = next_probe(&probes, &up_to(DEFAULT_CAP)) {
            tried.push(b);
            let outcome = if b <= 24 {
                ProbeOutcome::Fits
            } else {
                ProbeOutcome::OutOfMemory
            };
            probes.push(probe(b, outcome));
        }
        assert_eq!(tried, [1, 2, 4, 8, 16, 32]);
        assert_eq!(largest_fit(&probes), Some(16));
    }

    #[test]
    fn the_cap_ends_a_search_where_everything_fits() {
        let mut probes = Vec::new();
        while let Some(b) = next_probe(&probes, &up_to(100)) {
            probes.push(probe(b, ProbeOutcome::Fits));
        }
        let tried: Vec<u32> = probes.iter().map(|p| p.batch_size).collect();
        assert_eq!(tried, [1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(largest_fit(&probes), Some(64));
        assert_eq!(next_probe(&[], &up_to(0)), None);
    }

    #[test]
    fn nothing_fits_when_batch_one_does_not() {
        let probes = vec![probe(1, ProbeOutcome::OverLimit)];
        assert_eq!(next_probe(&probes, &up_to(DEFAULT_CAP)), None);
        assert_eq!(largest_fit(&probes), None);
        let failed = vec![probe(1, ProbeOutcome::Fits), probe(2, ProbeOutcome::Failed)];
        assert_eq!(next_probe(&failed, &up_to(DEFAULT_CAP)), None);
        assert_eq!(largest_fit(&failed), Some(1));
    }

    /// Tries the search against a device where batches up to `fits` fit.
    fn search(from: u32, cap: u32, fits: u32) -> (Vec<u32>, Option<u32>) {
        let s = BatchSearch {
            cap,
            from,
            memory_limit_bytes: None,
        };
        let mut probes = Vec::new();
        while let Some(b) = next_probe(&probes, &s) {
            let outcome = if b <= fits {
                ProbeOutcome::Fits
            } else {
                ProbeOutcome::OutOfMemory
            };
            probes.push(probe(b, outcome));
        }
        let tried = probes.iter().map(|p| p.batch_size).collect();
        (tried, largest_fit(&probes))
    }

    #[test]
    fn a_search_from_a_known_batch_doubles_up_or_halves_down() {
        // Up from 64 where 300 fit: 64, 128, 256 fit, 512 does not.
        assert_eq!(search(64, 1024, 300), (vec![64, 128, 256, 512], Some(256)));
        // Down from 64 where 20 fit: 64, 32 out of memory, 16 fits, then stop.
        assert_eq!(search(64, 1024, 20), (vec![64, 32, 16], Some(16)));
        // Nothing fits: down to 1, then stop.
        assert_eq!(search(4, 1024, 0), (vec![4, 2, 1], None));
        // Up to the cap, and a start over the cap tries nothing.
        assert_eq!(search(64, 256, 10_000), (vec![64, 128, 256], Some(256)));
        assert_eq!(search(512, 256, 10_000), (vec![], None));
        // A failure for another reason on the way down ends the search.
        let s = BatchSearch {
            cap: 64,
            from: 64,
            memory_limit_bytes: None,
        };
        let failed = [
            probe(64, ProbeOutcome::OutOfMemory),
            probe(32, ProbeOutcome::Failed),
        ];
        assert_eq!(next_probe(&failed, &s), None);
    }

    #[test]
    fn limits_and_sizes() {
        assert!(within_limit(None, None));
        assert!(!within_limit(None, Some(10)));
        assert!(within_limit(Some(10), Some(10)));
        assert!(!within_limit(Some(11), Some(10)));
        assert_eq!(parse_memory("8G"), Some(8 << 30));
        assert_eq!(parse_memory("8GiB"), Some(8 << 30));
        assert_eq!(parse_memory("512MiB"), Some(512 << 20));
        assert_eq!(parse_memory("1.5g"), Some(3 << 29));
        assert_eq!(parse_memory("4096"), Some(4096));
        assert_eq!(parse_memory("lots"), None);
        assert_eq!(parse_memory("-1G"), None);
        assert_eq!(parse_memory("0"), None);
        for o in [
            ProbeOutcome::Fits,
            ProbeOutcome::OutOfMemory,
            ProbeOutcome::OverLimit,
            ProbeOutcome::Failed,
        ] {
            assert_eq!(ProbeOutcome::parse(o.as_str()), Some(o));
        }
    }
}

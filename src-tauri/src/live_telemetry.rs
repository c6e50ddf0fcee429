//! A live run's telemetry with a bounded number of points per source, so the
//! live view of a day-long run on 8 GPUs (7.8 million samples at 10 Hz) holds
//! the same few thousand points as a minute-long one — in the app and in the
//! window. When a source passes the bound, every other of its points is
//! dropped and from then on only every second (fourth, …) new sample is
//! kept; the series' generation changes, and watchers are sent it whole.
//! The database keeps every sample; this is only what the curves draw.

use std::collections::HashMap;

use serde::Serialize;

/// Device or host use at one instant.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct LiveTelemetry {
    pub t_s: f64,
    /// `host` or `gpu:N`.
    pub source: String,
    /// Device memory in use (GPU) or the worker's resident memory (host).
    pub memory_bytes: Option<u64>,
    pub util_percent: Option<f64>,
    pub power_w: Option<f64>,
    pub cpu_percent: Option<f64>,
}

/// Points kept per source in a live view.
pub const LIVE_POINTS_PER_SOURCE: usize = 2_000;

/// How a live run's series is thinned, per source.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Thinning {
    /// Per source: samples seen, keep one in `stride`, points kept.
    sources: HashMap<String, (u64, u64, usize)>,
    /// Changes whenever points already sent are dropped.
    pub generation: u64,
}

/// Appends `p` unless its source's stride skips it; a source over `cap`
/// points loses every other one and its stride doubles.
pub fn push(series: &mut Vec<LiveTelemetry>, th: &mut Thinning, p: LiveTelemetry, cap: usize) {
    let (seen, stride, kept) = th.sources.entry(p.source.clone()).or_insert((0, 1, 0));
    let keep = *seen % *stride == 0;
    *seen += 1;
    if !keep {
        return;
    }
    let source = p.source.clone();
    series.push(p);
    *kept += 1;
    if *kept <= cap.max(2) {
        return;
    }
    let mut i = 0usize;
    series.retain(|q| {
        if q.source != source {
            return true;
        }
        i += 1;
        i % 2 == 1
    });
    *kept = i.div_ceil(2);
    *stride *= 2;
    th.generation += 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(source: &str, t: u64) -> LiveTelemetry {
        LiveTelemetry {
            t_s: t as f64 / 10.0,
            source: source.into(),
            memory_bytes: Some(t),
            util_percent: None,
            power_w: None,
            cpu_percent: None,
        }
    }

    #[test]
    fn a_day_of_eight_gpus_stays_within_the_bound_and_spans_the_day() {
        let mut series = Vec::new();
        let mut th = Thinning::default();
        let sources: Vec<String> = std::iter::once("host".to_owned())
            .chain((0..8).map(|i| format!("gpu:{i}")))
            .collect();
        // 24 h at 10 Hz, every source.
        for t in 0..864_000u64 {
            for s in &sources {
                push(&mut series, &mut th, point(s, t), LIVE_POINTS_PER_SOURCE);
            }
        }
        for s in &sources {
            let of: Vec<&LiveTelemetry> = series.iter().filter(|p| &p.source == s).collect();
            assert!(
                of.len() <= LIVE_POINTS_PER_SOURCE && of.len() > LIVE_POINTS_PER_SOURCE / 2,
                "{s}: {}",
                of.len()
            );
            assert_eq!(of[0].t_s, 0.0, "the start is kept");
            assert!(of[of.len() - 1].t_s > 86_000.0, "the last hours are there");
            assert!(of.windows(2).all(|w| w[0].t_s < w[1].t_s), "in time order");
        }
        assert!(th.generation > 0);
    }
}

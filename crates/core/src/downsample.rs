//! Telemetry of long runs, averaged into time buckets once the run's summary
//! has been computed from every sample. A 24-hour run on 8 GPUs at 10 Hz
//! takes 7.8 million samples; the store keeps at most [`KEEP_PER_SOURCE`]
//! per source, so the database, its exports and every chart stay small.
//!
//! Each bucket of one source becomes one sample at the time of its last
//! sample: rates, percentages, power and clocks averaged over the samples
//! that have them; memory (RSS, GPU memory in use) and other processes at
//! their highest; the energy counter at its last reading (a counter's value
//! at that instant, so energy between two stored samples stays exact); the
//! throttle reasons OR'ed. Peaks, energy between stored instants and the
//! curves' shape survive; single 100 ms readings do not.

use crate::telemetry::TelemetrySample;

/// The most samples of one source a run keeps (a 1-hour run at 10 Hz has
/// 36,000); more are averaged into buckets.
pub const KEEP_PER_SOURCE: usize = 20_000;

/// `samples` (one source, ascending time) averaged into buckets of
/// `width_ns`, counted from the first sample; one sample per bucket.
pub fn downsample(samples: &[TelemetrySample], width_ns: u64) -> Vec<TelemetrySample> {
    let Some(first) = samples.first() else {
        return Vec::new();
    };
    let width = width_ns.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    while start < samples.len() {
        let bucket = (samples[start].t_ns - first.t_ns) / width;
        let mut end = start + 1;
        while end < samples.len() && (samples[end].t_ns - first.t_ns) / width == bucket {
            end += 1;
        }
        out.push(merge(&samples[start..end]));
        start = end;
    }
    out
}

/// The bucket width that leaves at most `keep` samples of a source spanning
/// `span_ns` (at least 1 ns).
pub fn width_for(span_ns: u64, keep: usize) -> u64 {
    (span_ns / keep.max(1) as u64 + 1).max(1)
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / f64::from(n))
}

fn merge(bucket: &[TelemetrySample]) -> TelemetrySample {
    let last = &bucket[bucket.len() - 1];
    let mean_of = |f: fn(&TelemetrySample) -> Option<f64>| mean(bucket.iter().filter_map(f));
    let mean_u32 = |f: fn(&TelemetrySample) -> Option<u32>| {
        mean(bucket.iter().filter_map(f).map(f64::from)).map(|m| m.round() as u32)
    };
    TelemetrySample {
        t_ns: last.t_ns,
        source: last.source.clone(),
        cpu_percent: mean_of(|s| s.cpu_percent),
        rss_bytes: bucket.iter().filter_map(|s| s.rss_bytes).max(),
        host_cpu_percent: mean_of(|s| s.host_cpu_percent),
        mem_used_bytes: bucket.iter().filter_map(|s| s.mem_used_bytes).max(),
        util_percent: mean_of(|s| s.util_percent),
        power_w: mean_of(|s| s.power_w),
        energy_mj: bucket.iter().rev().find_map(|s| s.energy_mj),
        sm_clock_mhz: mean_u32(|s| s.sm_clock_mhz),
        mem_clock_mhz: mean_u32(|s| s.mem_clock_mhz),
        throttle_reasons: bucket
            .iter()
            .filter_map(|s| s.throttle_reasons)
            .reduce(|a, b| a | b),
        other_processes: bucket.iter().filter_map(|s| s.other_processes).max(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(t_s: u64, power: f64, mem: u64, energy: u64, throttle: u64) -> TelemetrySample {
        TelemetrySample {
            t_ns: t_s * 100_000_000,
            source: "gpu:0".into(),
            power_w: Some(power),
            util_percent: Some(power / 10.0),
            mem_used_bytes: Some(mem),
            energy_mj: Some(energy),
            throttle_reasons: Some(throttle),
            sm_clock_mhz: Some(1000 + t_s as u32),
            ..Default::default()
        }
    }

    #[test]
    fn buckets_keep_means_peaks_the_last_counter_and_every_reason() {
        // 10 samples at 10 Hz in buckets of 0.5 s: two buckets of 5.
        let samples: Vec<TelemetrySample> = (0..10)
            .map(|i| {
                gpu(
                    i,
                    100.0 + i as f64,
                    1000 + (i % 3) * 7,
                    40 * i,
                    if i == 2 {
                        0x4
                    } else if i == 7 {
                        0x20
                    } else {
                        0
                    },
                )
            })
            .collect();
        let out = downsample(&samples, 500_000_000);
        assert_eq!(out.len(), 2);
        assert_eq!(
            out[0].t_ns, samples[4].t_ns,
            "a bucket is dated by its last sample"
        );
        assert_eq!(out[0].power_w, Some(102.0));
        assert_eq!(out[1].power_w, Some(107.0));
        assert_eq!(out[0].mem_used_bytes, Some(1014));
        assert_eq!(out[0].energy_mj, Some(160));
        assert_eq!(out[1].energy_mj, Some(360), "the counter's last reading");
        assert_eq!(out[0].throttle_reasons, Some(0x4));
        assert_eq!(out[1].throttle_reasons, Some(0x20));
        assert_eq!(out[0].sm_clock_mhz, Some(1002));
        // Energy between the stored instants is the raw counter's.
        let raw = samples[9].energy_mj.unwrap() - samples[4].energy_mj.unwrap();
        assert_eq!(out[1].energy_mj.unwrap() - out[0].energy_mj.unwrap(), raw);
    }

    #[test]
    fn a_day_of_samples_fits_the_bound() {
        let day_ns = 24 * 3600 * 1_000_000_000u64;
        let n = 864_000usize;
        let samples: Vec<TelemetrySample> = (0..n)
            .map(|i| TelemetrySample {
                t_ns: i as u64 * (day_ns / n as u64),
                source: "host".into(),
                rss_bytes: Some(if i == 123_456 { 9 << 30 } else { 1 << 30 }),
                ..Default::default()
            })
            .collect();
        let width = width_for(samples[n - 1].t_ns - samples[0].t_ns, KEEP_PER_SOURCE);
        let out = downsample(&samples, width);
        assert!(
            out.len() <= KEEP_PER_SOURCE && out.len() > KEEP_PER_SOURCE * 9 / 10,
            "{}",
            out.len()
        );
        assert_eq!(
            out.iter().filter_map(|s| s.rss_bytes).max(),
            Some(9 << 30),
            "the peak survives"
        );
        assert_eq!(out.last().unwrap().t_ns, samples[n - 1].t_ns);
        assert!(downsample(&[], 1).is_empty());
    }
}

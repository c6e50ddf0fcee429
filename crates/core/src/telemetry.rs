//! One telemetry sample, as the probe takes it and the store keeps it.

use serde::{Deserialize, Serialize};

/// One sample of one source at one instant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct TelemetrySample {
    /// CLOCK_MONOTONIC nanoseconds (the clock worker events use).
    pub t_ns: u64,
    /// `host` (worker process + machine) or `gpu:N`.
    pub source: String,
    /// CPU use of the worker process, % of one core.
    pub cpu_percent: Option<f64>,
    pub rss_bytes: Option<u64>,
    /// CPU use of the whole machine, % of one core (200 % = two cores busy).
    pub host_cpu_percent: Option<f64>,
    pub mem_used_bytes: Option<u64>,
    pub util_percent: Option<f64>,
    pub power_w: Option<f64>,
    /// NVML's total-energy counter, millijoules.
    pub energy_mj: Option<u64>,
    pub sm_clock_mhz: Option<u32>,
    pub mem_clock_mhz: Option<u32>,
    pub throttle_reasons: Option<u64>,
    /// Compute processes on this GPU that are not the run's (NVML's list).
    #[serde(default)]
    pub other_processes: Option<u32>,
}

/// NVML clock-event ("throttle") reasons that slow a run down: software
/// power cap, hardware slowdown, software and hardware thermal slowdown,
/// power brake. Idle, application/display clock settings and sync boost are
/// not counted.
pub const SLOWDOWN_REASONS: &[(u64, &str)] = &[
    (0x4, "software power cap"),
    (0x8, "hardware slowdown"),
    (0x20, "software thermal slowdown"),
    (0x40, "hardware thermal slowdown"),
    (0x80, "hardware power brake"),
];

/// The names of the slowdown reasons set in an NVML bit mask.
pub fn slowdown_names(bits: u64) -> Vec<&'static str> {
    SLOWDOWN_REASONS
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect()
}

/// What NVML saw on a run's GPUs during its steady (timed, after warm-up)
/// windows. Energy comes from the total-energy counter only; power samples
/// are kept apart so the two can be checked against each other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct GpuDigest {
    /// The GPUs (`gpu:N`) the run used.
    pub sources: Vec<String>,
    /// NVML samples of those GPUs inside the steady span.
    pub samples: u32,
    /// Time inside the steady windows, seconds (the denominator of energy).
    pub steady_s: f64,
    /// Energy over the steady windows, joules, summed over the GPUs: each
    /// counter's rate between its first and last reading in the span × the
    /// steady windows' time. `None`: not measured (see `energy_note`).
    pub energy_j: Option<f64>,
    /// How the energy was measured, or why it was not.
    pub energy_note: String,
    /// Mean NVML power over the span, watts, summed over the GPUs: readings
    /// taken at least `NVML_AVERAGING_NS` after the span began, so that each
    /// one averages steady time only. `None` when no reading qualifies (a
    /// span of a second or less).
    pub mean_power_w: Option<f64>,
    /// Power readings that went into `mean_power_w` (per GPU, the fewest).
    #[serde(default)]
    pub power_readings: u32,
    /// Mean utilisation over the span, %, averaged over the GPUs (the same
    /// readings as power).
    pub mean_util_percent: Option<f64>,
    /// Highest memory in use NVML reported on one of the GPUs, bytes.
    pub peak_mem_used_bytes: Option<u64>,
    /// Slowdown reasons (`SLOWDOWN_REASONS`) seen in any sample, OR'ed.
    pub slowdown_bits: u64,
    /// Samples with at least one slowdown reason set.
    pub slowdown_samples: u32,
    /// The most processes that were not the run's seen on one GPU at once.
    pub max_other_processes: u32,
}

/// How far back one NVML power or utilisation reading looks, nanoseconds.
/// `nvmlDeviceGetPowerUsage` returns power averaged over the last second on
/// Ampere (except GA100) and newer GPUs, and utilisation covers "the past
/// sample period" of 1/6 s to 1 s. A reading taken less than this after the
/// steady span begins still averages warm-up (on an H100, readings ramped
/// from 125 W to 594 W over the first second while the energy counter's rate
/// was already 590 W), so means use only readings at least this far inside
/// the span. On GPUs with instantaneous power this drops a second of
/// readings and changes nothing else.
pub const NVML_AVERAGING_NS: u64 = 1_000_000_000;

/// Reduces the run's GPU samples to what NVML saw during the steady windows
/// `steady` (start, end in CLOCK_MONOTONIC ns). `gpu_indices` are the GPUs the
/// run trained on. `None` when the span holds no sample of those GPUs.
pub fn digest_gpu(
    samples: &[TelemetrySample],
    gpu_indices: &[u32],
    steady: &[(u64, u64)],
) -> Option<GpuDigest> {
    let (start, end) = (
        steady.iter().map(|w| w.0).min()?,
        steady.iter().map(|w| w.1).max()?,
    );
    let steady_s: f64 = steady
        .iter()
        .map(|(a, b)| b.saturating_sub(*a) as f64 / 1e9)
        .sum();
    let sources: Vec<String> = gpu_indices.iter().map(|i| format!("gpu:{i}")).collect();
    let mut in_span: Vec<&TelemetrySample> = samples
        .iter()
        .filter(|s| sources.contains(&s.source) && s.t_ns >= start && s.t_ns <= end)
        .collect();
    if in_span.is_empty() {
        return None;
    }
    in_span.sort_by_key(|s| s.t_ns);

    let mut energy_j = Some(0.0);
    let mut notes = Vec::new();
    let mut mean_power_w = Some(0.0);
    let mut power_readings = u32::MAX;
    let mut utils = Vec::new();
    let averaged_from = start.saturating_add(NVML_AVERAGING_NS);
    for source in &sources {
        let of: Vec<&&TelemetrySample> = in_span.iter().filter(|s| &s.source == source).collect();
        let readings: Vec<(u64, u64)> = of
            .iter()
            .filter_map(|s| Some((s.t_ns, s.energy_mj?)))
            .collect();
        let backwards = readings.windows(2).any(|w| w[1].1 < w[0].1);
        match (readings.first(), readings.last()) {
            _ if backwards => {
                notes.push(format!(
                    "not measured: the energy counter of {source} went backwards during the steady windows (wrapped or reset)"
                ));
                energy_j = None;
            }
            (Some(a), Some(b)) if readings.len() >= 2 && b.0 > a.0 => {
                let rate_w = (b.1 - a.1) as f64 / 1000.0 / ((b.0 - a.0) as f64 / 1e9);
                energy_j = energy_j.map(|e| e + rate_w * steady_s);
            }
            _ if readings.is_empty() => {
                notes.push(format!(
                    "not measured: NVML gives no energy counter for {source}"
                ));
                energy_j = None;
            }
            _ => {
                notes.push(format!(
                    "not measured: fewer than 2 energy readings of {source} inside the steady windows"
                ));
                energy_j = None;
            }
        }
        let settled: Vec<&&&TelemetrySample> =
            of.iter().filter(|s| s.t_ns >= averaged_from).collect();
        let powers: Vec<f64> = settled.iter().filter_map(|s| s.power_w).collect();
        power_readings = power_readings.min(powers.len() as u32);
        mean_power_w = match (mean_power_w, powers.is_empty()) {
            (Some(p), false) => Some(p + powers.iter().sum::<f64>() / powers.len() as f64),
            _ => None,
        };
        let u: Vec<f64> = settled.iter().filter_map(|s| s.util_percent).collect();
        if !u.is_empty() {
            utils.push(u.iter().sum::<f64>() / u.len() as f64);
        }
    }
    let energy_note = if energy_j.is_some() {
        format!(
            "NVML total-energy counter of {}: its rate between the first and last reading inside the steady span × {steady_s:.3} s of steady windows",
            sources.join(", ")
        )
    } else {
        notes.join("; ")
    };
    let slowdown_mask: u64 = SLOWDOWN_REASONS.iter().map(|r| r.0).sum();
    let slow: Vec<u64> = in_span
        .iter()
        .filter_map(|s| s.throttle_reasons)
        .map(|b| b & slowdown_mask)
        .filter(|b| *b != 0)
        .collect();
    Some(GpuDigest {
        sources,
        samples: in_span.len() as u32,
        steady_s,
        energy_j,
        energy_note,
        mean_power_w,
        power_readings: if mean_power_w.is_some() {
            power_readings
        } else {
            0
        },
        mean_util_percent: (!utils.is_empty())
            .then(|| utils.iter().sum::<f64>() / utils.len() as f64),
        peak_mem_used_bytes: in_span.iter().filter_map(|s| s.mem_used_bytes).max(),
        slowdown_bits: slow.iter().fold(0, |a, b| a | b),
        slowdown_samples: slow.len() as u32,
        max_other_processes: in_span
            .iter()
            .filter_map(|s| s.other_processes)
            .max()
            .unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t_s: f64, energy_mj: Option<u64>, power_w: f64) -> TelemetrySample {
        TelemetrySample {
            t_ns: (t_s * 1e9) as u64,
            source: "gpu:0".into(),
            power_w: Some(power_w),
            energy_mj,
            ..Default::default()
        }
    }

    #[test]
    fn energy_is_the_counter_rate_times_the_steady_time() {
        // 400 W: 40 J every 0.1 s; two steady windows of 1 s each.
        let samples: Vec<_> = (0..=20)
            .map(|i| {
                s(
                    10.0 + f64::from(i) * 0.1,
                    Some(1_000_000 + 40_000 * i as u64),
                    400.0,
                )
            })
            .collect();
        let d = digest_gpu(
            &samples,
            &[0],
            &[
                (10_000_000_000, 11_000_000_000),
                (11_000_000_000, 12_000_000_000),
            ],
        )
        .unwrap();
        assert!((d.energy_j.unwrap() - 800.0).abs() < 1e-6, "{d:?}");
        assert_eq!(d.mean_power_w, Some(400.0));
        assert_eq!(d.samples, 21);
    }

    #[test]
    fn power_means_skip_readings_that_still_average_warm_up() {
        // What an H100 showed: the counter's rate is 600 W from the span's
        // start, while NVML's 1 s power average ramps up from 100 W over the
        // first second. Readings inside that second would give ~470 W.
        let samples: Vec<_> = (0..=25)
            .map(|i| {
                let t = f64::from(i) * 0.1;
                let averaged = 100.0 + 500.0 * (t / 1.0).min(1.0);
                let mut x = s(5.0 + t, Some(60_000 * i as u64), averaged);
                x.util_percent = Some(if t < 1.0 { 40.0 } else { 95.0 });
                x
            })
            .collect();
        let d = digest_gpu(&samples, &[0], &[(5_000_000_000, 7_500_000_000)]).unwrap();
        assert!((d.energy_j.unwrap() / 2.5 - 600.0).abs() < 1e-6, "{d:?}");
        assert_eq!(d.mean_power_w, Some(600.0), "{d:?}");
        assert_eq!(d.power_readings, 16);
        assert_eq!(d.mean_util_percent, Some(95.0));
        assert_eq!(d.samples, 26);
        // A span of under a second has no reading that averages steady time only.
        let d = digest_gpu(&samples, &[0], &[(5_000_000_000, 5_900_000_000)]).unwrap();
        assert_eq!((d.mean_power_w, d.power_readings), (None, 0), "{d:?}");
        assert!(d.energy_j.is_some());
    }

    #[test]
    fn a_counter_that_goes_backwards_or_is_missing_is_not_measured() {
        let wrapped = vec![
            s(1.0, Some(5_000), 100.0),
            s(1.1, Some(15_000), 100.0),
            s(1.2, Some(10), 100.0),
        ];
        let d = digest_gpu(&wrapped, &[0], &[(1_000_000_000, 1_200_000_000)]).unwrap();
        assert_eq!(d.energy_j, None);
        assert!(
            d.energy_note.contains("went backwards"),
            "{}",
            d.energy_note
        );
        let missing = vec![s(1.0, None, 100.0), s(1.1, None, 100.0)];
        let d = digest_gpu(&missing, &[0], &[(1_000_000_000, 1_200_000_000)]).unwrap();
        assert_eq!(d.energy_j, None);
        assert!(
            d.energy_note.contains("no energy counter"),
            "{}",
            d.energy_note
        );
        assert_eq!(
            digest_gpu(&missing, &[1], &[(1_000_000_000, 1_200_000_000)]),
            None
        );
    }

    #[test]
    fn slowdown_reasons_ignore_idle_and_clock_settings() {
        let mut a = s(1.0, Some(1), 1.0);
        a.throttle_reasons = Some(0x1 | 0x2 | 0x100);
        let mut b = s(1.1, Some(2), 1.0);
        b.throttle_reasons = Some(0x4 | 0x40);
        b.other_processes = Some(2);
        let d = digest_gpu(&[a, b], &[0], &[(1_000_000_000, 1_100_000_000)]).unwrap();
        assert_eq!(d.slowdown_samples, 1);
        assert_eq!(
            slowdown_names(d.slowdown_bits),
            vec!["software power cap", "hardware thermal slowdown"]
        );
        assert_eq!(d.max_other_processes, 2);
    }
}

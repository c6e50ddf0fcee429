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
}

//! Telemetry and provenance for the runner.
//!
//! - [`HostSampler`]: the worker process's CPU use and resident memory, and the
//!   machine's CPU use, from procfs. Always available on Linux.
//! - [`GpuProbe`]: NVML through `nvml-wrapper`, which loads the driver's library
//!   at run time. Without an NVIDIA driver, [`GpuProbe::open`] says why once and
//!   the probe samples nothing; nothing else changes.
//! - [`provenance`]: what a run's numbers depend on (machine, OS, GPUs, driver,
//!   CUDA, the studio's own version and git revision).

use std::time::Instant;

use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::Nvml;
use serde::Serialize;
pub use trainbench_core::telemetry::TelemetrySample;

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// utime + stime of a process, in clock ticks.
fn process_ticks(pid: u32) -> Option<u64> {
    let stat = read(&format!("/proc/{pid}/stat"))?;
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// (busy, total) jiffies of the whole machine.
fn host_ticks() -> Option<(u64, u64)> {
    let stat = read("/proc/stat")?;
    let line = stat.lines().next()?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = v.iter().sum();
    let idle = v.get(3)? + v.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

fn process_rss(pid: u32) -> Option<u64> {
    let status = read(&format!("/proc/{pid}/status"))?;
    let kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Clock ticks per second (USER_HZ): 100 on every Linux this runs on.
const TICKS_PER_S: f64 = 100.0;

/// Samples a worker process and the host from procfs.
#[derive(Debug)]
pub struct HostSampler {
    pid: u32,
    last: Option<(Instant, u64)>,
    last_host: Option<(u64, u64)>,
    cores: f64,
}

impl HostSampler {
    pub fn new(pid: u32) -> Self {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get() as f64)
            .unwrap_or(1.0);
        HostSampler {
            pid,
            last: None,
            last_host: None,
            cores,
        }
    }

    /// One sample; CPU percentages need two samples, so the first has none.
    /// `cpu_percent` is of one core (200 % = two cores busy).
    pub fn sample(&mut self, t_ns: u64) -> TelemetrySample {
        let now = Instant::now();
        let ticks = process_ticks(self.pid);
        let cpu_percent = match (self.last, ticks) {
            (Some((t0, k0)), Some(k1)) => {
                let dt = now.duration_since(t0).as_secs_f64();
                (dt > 0.0).then(|| (k1.saturating_sub(k0)) as f64 / TICKS_PER_S / dt * 100.0)
            }
            _ => None,
        };
        if let Some(k) = ticks {
            self.last = Some((now, k));
        }
        let host = host_ticks();
        let host_cpu_percent = match (self.last_host, host) {
            (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => {
                Some((b1 - b0) as f64 / (t1 - t0) as f64 * 100.0 * self.cores)
            }
            _ => None,
        };
        self.last_host = host;
        TelemetrySample {
            t_ns,
            source: "host".into(),
            cpu_percent,
            rss_bytes: process_rss(self.pid),
            host_cpu_percent,
            ..Default::default()
        }
    }
}

/// CPU time this process has used so far, seconds (for measuring the runner's
/// own overhead).
pub fn self_cpu_seconds() -> Option<f64> {
    Some(process_ticks(std::process::id())? as f64 / TICKS_PER_S)
}

/// NVML, when a driver is present.
pub struct GpuProbe {
    nvml: Option<Nvml>,
    /// Why there is no NVML, said once.
    pub unavailable: Option<String>,
}

impl std::fmt::Debug for GpuProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuProbe")
            .field("available", &self.nvml.is_some())
            .field("unavailable", &self.unavailable)
            .finish()
    }
}

/// A GPU as NVML describes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuInfo {
    pub index: u32,
    pub name: String,
    pub memory_total_bytes: Option<u64>,
    pub power_limit_w: Option<f64>,
    pub sm_clock_max_mhz: Option<u32>,
}

impl GpuProbe {
    pub fn open() -> GpuProbe {
        if std::env::var_os("TRAINBENCH_NO_NVML").is_some() {
            return GpuProbe {
                nvml: None,
                unavailable: Some("no NVIDIA GPU: NVML disabled by TRAINBENCH_NO_NVML".into()),
            };
        }
        match Nvml::init() {
            Ok(nvml) => GpuProbe {
                nvml: Some(nvml),
                unavailable: None,
            },
            Err(e) => GpuProbe {
                nvml: None,
                unavailable: Some(format!("no NVIDIA GPU: NVML is not available ({e})")),
            },
        }
    }

    pub fn gpus(&self) -> Vec<GpuInfo> {
        let Some(nvml) = &self.nvml else {
            return Vec::new();
        };
        let count = nvml.device_count().unwrap_or(0);
        (0..count)
            .filter_map(|i| {
                let d = nvml.device_by_index(i).ok()?;
                Some(GpuInfo {
                    index: i,
                    name: d.name().unwrap_or_else(|_| "unknown NVIDIA GPU".into()),
                    memory_total_bytes: d.memory_info().ok().map(|m| m.total),
                    power_limit_w: d
                        .enforced_power_limit()
                        .ok()
                        .map(|mw| f64::from(mw) / 1000.0),
                    sm_clock_max_mhz: d.max_clock_info(Clock::SM).ok(),
                })
            })
            .collect()
    }

    pub fn driver_version(&self) -> Option<String> {
        self.nvml.as_ref()?.sys_driver_version().ok()
    }

    pub fn cuda_driver_version(&self) -> Option<String> {
        let v = self.nvml.as_ref()?.sys_cuda_driver_version().ok()?;
        Some(format!("{}.{}", v / 1000, (v % 1000) / 10))
    }

    /// GPU memory NVML attributes to process `pid` (and its children, for
    /// workers that launch several processes), per GPU index, in bytes.
    pub fn process_memory(&self, pids: &[u32]) -> Vec<(u32, u64)> {
        let Some(nvml) = &self.nvml else {
            return Vec::new();
        };
        let count = nvml.device_count().unwrap_or(0);
        (0..count)
            .filter_map(|i| {
                let d = nvml.device_by_index(i).ok()?;
                let used: u64 = d
                    .running_compute_processes()
                    .ok()?
                    .iter()
                    .filter(|p| pids.contains(&p.pid))
                    .filter_map(|p| match p.used_gpu_memory {
                        nvml_wrapper::enums::device::UsedGpuMemory::Used(b) => Some(b),
                        nvml_wrapper::enums::device::UsedGpuMemory::Unavailable => None,
                    })
                    .sum();
                (used > 0).then_some((i, used))
            })
            .collect()
    }

    /// One sample per GPU.
    pub fn sample(&self, t_ns: u64) -> Vec<TelemetrySample> {
        let Some(nvml) = &self.nvml else {
            return Vec::new();
        };
        let count = nvml.device_count().unwrap_or(0);
        (0..count)
            .filter_map(|i| {
                let d = nvml.device_by_index(i).ok()?;
                Some(TelemetrySample {
                    t_ns,
                    source: format!("gpu:{i}"),
                    mem_used_bytes: d.memory_info().ok().map(|m| m.used),
                    util_percent: d.utilization_rates().ok().map(|u| f64::from(u.gpu)),
                    power_w: d.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
                    energy_mj: d.total_energy_consumption().ok(),
                    sm_clock_mhz: d.clock_info(Clock::SM).ok(),
                    mem_clock_mhz: d.clock_info(Clock::Memory).ok(),
                    throttle_reasons: d.current_throttle_reasons().ok().map(|r| r.bits()),
                    ..Default::default()
                })
            })
            .collect()
    }
}

fn first_line_after(path: &str, key: &str) -> Option<String> {
    read(path)?
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_once(':').or_else(|| l.split_once('=')))
        .map(|(_, v)| v.trim().trim_matches('"').to_owned())
}

/// What a run's numbers depend on.
pub fn provenance(gpu: &GpuProbe) -> serde_json::Value {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let mem_total = first_line_after("/proc/meminfo", "MemTotal")
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kib| kib * 1024);
    serde_json::json!({
        "studio_version": env!("CARGO_PKG_VERSION"),
        "studio_git_revision": env!("TRAINBENCH_GIT_REV"),
        "cpu_model": first_line_after("/proc/cpuinfo", "model name"),
        "cpu_cores": cores,
        "memory_total_bytes": mem_total,
        "os": first_line_after("/etc/os-release", "PRETTY_NAME"),
        "kernel": read("/proc/sys/kernel/osrelease").map(|s| s.trim().to_owned()),
        "hostname": read("/proc/sys/kernel/hostname").map(|s| s.trim().to_owned()),
        "gpus": gpu.gpus(),
        "nvidia_driver": gpu.driver_version(),
        "cuda_driver": gpu.cuda_driver_version(),
        "gpu_probe": gpu.unavailable.clone().unwrap_or_else(|| "nvml".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_sampler_reads_this_process() {
        let mut s = HostSampler::new(std::process::id());
        let first = s.sample(1);
        assert!(first.rss_bytes.unwrap() > 0);
        assert_eq!(first.cpu_percent, None);
        let mut x = 0u64;
        for i in 0..3_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x > 0);
        let second = s.sample(2);
        assert!(second.cpu_percent.is_some());
    }

    #[test]
    fn provenance_names_the_machine_without_a_gpu() {
        let gpu = GpuProbe::open();
        let p = provenance(&gpu);
        assert!(p["cpu_cores"].as_u64().unwrap() >= 1);
        assert!(p["kernel"].is_string());
        if gpu.unavailable.is_some() {
            assert!(p["gpu_probe"]
                .as_str()
                .unwrap()
                .starts_with("no NVIDIA GPU"));
            assert_eq!(p["gpus"].as_array().unwrap().len(), 0);
        }
    }
}

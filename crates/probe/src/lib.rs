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

/// The git revision the studio was built from (`-dirty` with local changes).
pub const GIT_REVISION: &str = env!("TRAINBENCH_GIT_REV");

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The fields of `/proc/PID/stat` after the command name (field 3, `state`,
/// is index 0), so that a name with spaces or parentheses cannot shift them.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = read(&format!("/proc/{pid}/stat"))?;
    let after = stat.get(stat.rfind(')')? + 2..)?;
    Some(after.split_whitespace().map(str::to_owned).collect())
}

/// utime + stime of a process, in clock ticks.
fn process_ticks(pid: u32) -> Option<u64> {
    let f = stat_fields(pid)?;
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

/// Parent pid of a process.
fn parent_of(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(1)?.parse().ok()
}

/// `root` and every process descended from it (a launcher such as torchrun
/// and its ranks), read from procfs.
pub fn process_tree(root: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            if let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            {
                if let Some(ppid) = parent_of(pid) {
                    parents.push((pid, ppid));
                }
            }
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        tree.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    tree
}

/// How often the set of worker processes is re-read (a scan of /proc).
const TREE_RESCAN: std::time::Duration = std::time::Duration::from_secs(2);

/// Samples a worker's processes (the worker and its descendants, so that a
/// multi-process run counts every rank) and the host from procfs.
#[derive(Debug)]
pub struct HostSampler {
    root: u32,
    pids: Vec<u32>,
    scanned: Option<Instant>,
    last: Option<(Instant, std::collections::HashMap<u32, u64>)>,
    last_host: Option<(u64, u64)>,
    cores: f64,
}

impl HostSampler {
    pub fn new(pid: u32) -> Self {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get() as f64)
            .unwrap_or(1.0);
        HostSampler {
            root: pid,
            pids: vec![pid],
            scanned: None,
            last: None,
            last_host: None,
            cores,
        }
    }

    /// The worker's processes as last scanned.
    pub fn pids(&self) -> &[u32] {
        &self.pids
    }

    /// One sample; CPU percentages need two samples, so the first has none.
    /// `cpu_percent` is of one core (200 % = two cores busy), summed over the
    /// worker's processes, as is `rss_bytes`.
    pub fn sample(&mut self, t_ns: u64) -> TelemetrySample {
        let now = Instant::now();
        if self
            .scanned
            .is_none_or(|t| now.duration_since(t) >= TREE_RESCAN)
        {
            self.pids = process_tree(self.root);
            self.scanned = Some(now);
        }
        let ticks: std::collections::HashMap<u32, u64> = self
            .pids
            .iter()
            .filter_map(|&p| Some((p, process_ticks(p)?)))
            .collect();
        let cpu_percent = match &self.last {
            Some((t0, before)) if !ticks.is_empty() => {
                let dt = now.duration_since(*t0).as_secs_f64();
                // Only processes seen both times: one that just started or
                // ended has no interval to measure.
                let used: u64 = ticks
                    .iter()
                    .filter_map(|(p, k1)| before.get(p).map(|k0| k1.saturating_sub(*k0)))
                    .sum();
                (dt > 0.0).then(|| used as f64 / TICKS_PER_S / dt * 100.0)
            }
            _ => None,
        };
        let rss: Vec<u64> = self.pids.iter().filter_map(|&p| process_rss(p)).collect();
        if !ticks.is_empty() {
            self.last = Some((now, ticks));
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
            rss_bytes: (!rss.is_empty()).then(|| rss.iter().sum()),
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
        // The driver's library, or another one (a test's fake NVML) by path.
        let lib = std::env::var_os("TRAINBENCH_NVML_LIB");
        let opened = match &lib {
            Some(path) => Nvml::builder().lib_path(path).init(),
            None => Nvml::init(),
        };
        match opened {
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

    /// Every GPU NVML can open, with its index; none without NVML.
    fn devices(&self) -> Vec<(u32, nvml_wrapper::Device<'_>)> {
        let Some(nvml) = &self.nvml else {
            return Vec::new();
        };
        (0..nvml.device_count().unwrap_or(0))
            .filter_map(|i| Some((i, nvml.device_by_index(i).ok()?)))
            .collect()
    }

    pub fn gpus(&self) -> Vec<GpuInfo> {
        self.devices()
            .into_iter()
            .map(|(i, d)| GpuInfo {
                index: i,
                name: d.name().unwrap_or_else(|_| "unknown NVIDIA GPU".into()),
                memory_total_bytes: d.memory_info().ok().map(|m| m.total),
                power_limit_w: d
                    .enforced_power_limit()
                    .ok()
                    .map(|mw| f64::from(mw) / 1000.0),
                sm_clock_max_mhz: d.max_clock_info(Clock::SM).ok(),
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

    /// One sample per GPU, with the compute processes NVML lists on it:
    /// GPU memory of the worker's processes (`worker_pids`: the worker and its
    /// descendants) per GPU index, and how many processes that are not the
    /// worker's use each GPU (another job skews what the run measures).
    pub fn sample(&self, t_ns: u64, worker_pids: &[u32]) -> GpuSample {
        let me = std::process::id();
        let mut out = GpuSample::default();
        for (i, d) in self.devices() {
            let processes = d.running_compute_processes().ok();
            let other = processes.as_ref().map(|ps| {
                ps.iter()
                    .filter(|p| p.pid != me && !worker_pids.contains(&p.pid))
                    .count() as u32
            });
            let worker_bytes: u64 = processes
                .iter()
                .flatten()
                .filter(|p| worker_pids.contains(&p.pid))
                .filter_map(|p| match p.used_gpu_memory {
                    nvml_wrapper::enums::device::UsedGpuMemory::Used(b) => Some(b),
                    nvml_wrapper::enums::device::UsedGpuMemory::Unavailable => None,
                })
                .sum();
            if worker_bytes > 0 {
                out.worker_memory.push((i, worker_bytes));
            }
            out.samples.push(TelemetrySample {
                t_ns,
                source: format!("gpu:{i}"),
                mem_used_bytes: d.memory_info().ok().map(|m| m.used),
                util_percent: d.utilization_rates().ok().map(|u| f64::from(u.gpu)),
                power_w: d.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
                energy_mj: d.total_energy_consumption().ok(),
                sm_clock_mhz: d.clock_info(Clock::SM).ok(),
                mem_clock_mhz: d.clock_info(Clock::Memory).ok(),
                throttle_reasons: d.current_throttle_reasons().ok().map(|r| r.bits()),
                other_processes: other,
                ..Default::default()
            });
        }
        out
    }
}

/// What one NVML sample of every GPU found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct GpuSample {
    pub samples: Vec<TelemetrySample>,
    /// (GPU index, bytes) NVML attributes to the worker's processes.
    pub worker_memory: Vec<(u32, u64)>,
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

//! The machine the studio runs on: its CPU, memory and the GPUs NVML sees,
//! described for a person (the wizard, `trainbench env check`) and for the
//! sweep planner (how many devices a configuration may ask for).

use serde::Serialize;
use trainbench_core::spec::Machine;
use trainbench_probe::GpuProbe;

/// One GPU as the wizard lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MachineGpu {
    pub index: u32,
    pub name: String,
    pub memory_total_bytes: Option<u64>,
}

/// What this machine offers, as the probe sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MachineInfo {
    pub hostname: String,
    pub cpu_model: Option<String>,
    pub cpu_cores: u32,
    pub memory_total_bytes: Option<u64>,
    pub gpus: Vec<MachineGpu>,
    /// Why there are no GPUs ("no NVIDIA GPU: NVML is not available …").
    pub gpu_unavailable: Option<String>,
}

/// The host's devices: NVML opened once (or "unavailable" with the reason).
#[derive(Debug)]
pub struct Host {
    pub(crate) gpu: GpuProbe,
}

/// Logical CPU cores of this machine (1 when unknown).
pub fn cpu_cores() -> u32 {
    std::thread::available_parallelism()
        .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
        .unwrap_or(1)
}

impl Host {
    /// Opens NVML (at run time; `TRAINBENCH_NVML_LIB` names another library).
    pub fn open() -> Host {
        Host {
            gpu: GpuProbe::open(),
        }
    }

    /// GPUs NVML sees.
    pub fn gpu_count(&self) -> u32 {
        u32::try_from(self.gpu.gpus().len()).unwrap_or(u32::MAX)
    }

    /// The GPUs NVML sees, with their limits (power, clocks).
    pub fn gpus(&self) -> Vec<trainbench_probe::GpuInfo> {
        self.gpu.gpus()
    }

    /// Why there is no GPU, when there is none.
    pub fn gpu_unavailable(&self) -> Option<&str> {
        self.gpu.unavailable.as_deref()
    }

    /// What the sweep planner checks device counts against.
    pub fn machine(&self) -> Machine {
        Machine {
            gpus: self.gpu_count(),
            cpu_cores: cpu_cores(),
        }
    }

    /// The machine for a person: host name, CPU, memory, GPUs.
    pub fn describe(&self) -> MachineInfo {
        let prov = trainbench_probe::provenance(&self.gpu);
        MachineInfo {
            hostname: trainbench_store::hostname(),
            cpu_model: prov["cpu_model"].as_str().map(str::to_owned),
            cpu_cores: cpu_cores(),
            memory_total_bytes: prov["memory_total_bytes"].as_u64(),
            gpus: self
                .gpu
                .gpus()
                .into_iter()
                .map(|g| MachineGpu {
                    index: g.index,
                    name: g.name,
                    memory_total_bytes: g.memory_total_bytes,
                })
                .collect(),
            gpu_unavailable: self.gpu.unavailable.clone(),
        }
    }
}

//! The candidates of a search: framework × compile mode × precision ×
//! batch × CPU threads × device count × loader workers × cuDNN's benchmark
//! mode. An axis left empty takes its default from what is installed and
//! what the device supports; a comma list given for an axis replaces the
//! default (narrows or widens it).
//!
//! Defaults: every installed framework; each compile mode that framework
//! has (`Compile::allowed_for`); the precisions of the device (fp32 and
//! amp-bf16 on the CPU, all four on a GPU); the batch asked for
//! ([`DEFAULT_BATCH`] when none) and its half; on the CPU, the machine's
//! cores, half of them and a quarter (at least 1); the run's own device
//! count, loader workers and cuDNN mode (the last three are searched only
//! when given: each multiplies the space).

use serde::{Deserialize, Serialize};

use crate::error::SpecError;
use crate::spec::{Compile, Device, Precision};
use crate::Framework;

/// The batch a search starts from when none is given.
pub const DEFAULT_BATCH: i64 = 64;
/// The most candidates one search takes.
pub const MAX_CANDIDATES: usize = 256;

/// The axes as a person gave them (empty: the default).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Axes {
    /// Framework keys (`tch`, `pytorch`, `pytorch@NAME`, `jax==0.7.2`).
    pub framework: Vec<String>,
    pub compile: Vec<String>,
    pub precision: Vec<String>,
    pub batch_size: Vec<i64>,
    pub threads: Vec<i64>,
    /// Devices per run (a data-parallel run over several: DDP, a
    /// MirroredStrategy, a JAX mesh).
    #[serde(default)]
    pub devices: Vec<i64>,
    /// The image folder's loader workers (`data = folder` only).
    #[serde(default)]
    pub loader_workers: Vec<i64>,
    /// cuDNN's benchmark mode on or off (PyTorch and tch on a GPU).
    #[serde(default)]
    pub cudnn_benchmark: Vec<bool>,
}

/// One framework's share of the space: every combination of its lists is
/// a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FrameworkAxes {
    pub framework: String,
    pub compile: Vec<String>,
    pub precision: Vec<String>,
    pub batch_size: Vec<i64>,
    /// Empty: the framework's own choice (on a GPU).
    pub threads: Vec<i64>,
    /// Empty: the run's own (as for the two below); one value: every
    /// candidate's; several: an axis.
    #[serde(default)]
    pub devices: Vec<i64>,
    #[serde(default)]
    pub loader_workers: Vec<i64>,
    #[serde(default)]
    pub cudnn_benchmark: Vec<bool>,
}

impl FrameworkAxes {
    /// Candidates this share makes.
    pub fn count(&self) -> usize {
        self.compile.len()
            * self.precision.len()
            * self.batch_size.len()
            * self.threads.len().max(1)
            * self.devices.len().max(1)
            * self.loader_workers.len().max(1)
            * self.cudnn_benchmark.len().max(1)
    }
}

/// What this machine offers a search.
#[derive(Debug, Clone, PartialEq)]
pub struct Offer {
    /// The installed frameworks' keys.
    pub installed: Vec<String>,
    pub device: Device,
    pub cpu_cores: u32,
}

/// The framework a key names (`pytorch@NAME`, `jax==0.7.2` → its framework).
fn framework_of(key: &str) -> Option<Framework> {
    let name = key.split(['@', '=']).next().unwrap_or(key);
    Framework::parse(name.trim()).ok()
}

/// Thread counts of the CPU by default: all cores, half, a quarter.
pub fn default_threads(cpu_cores: u32) -> Vec<i64> {
    let cores = i64::from(cpu_cores.max(1));
    let mut t: Vec<i64> = [cores / 4, cores / 2, cores]
        .into_iter()
        .filter(|&n| n >= 1)
        .collect();
    t.dedup();
    t
}

/// Precisions a device runs by default.
pub fn default_precisions(device: Device) -> Vec<Precision> {
    if device.is_cuda() {
        Precision::ALL.to_vec()
    } else {
        vec![Precision::Fp32, Precision::AmpBf16]
    }
}

fn whole_numbers(field: &str, values: &[i64]) -> Result<(), SpecError> {
    match values.iter().find(|&&v| v < 1) {
        Some(v) => Err(SpecError::new(
            field,
            v,
            "whole numbers ≥ 1, comma-separated",
        )),
        None => Ok(()),
    }
}

/// Every framework's share of the space, checked: values named as they
/// are allowed, at most [`MAX_CANDIDATES`] candidates in all.
pub fn space(given: &Axes, offer: &Offer) -> Result<Vec<FrameworkAxes>, SpecError> {
    for c in &given.compile {
        Compile::parse(c)?;
    }
    for p in &given.precision {
        Precision::parse(p)?;
    }
    whole_numbers("batch_size", &given.batch_size)?;
    whole_numbers("threads", &given.threads)?;
    whole_numbers("devices", &given.devices)?;
    if let Some(w) = given
        .loader_workers
        .iter()
        .find(|&&w| !(0..=64).contains(&w))
    {
        return Err(SpecError::new(
            "loader_workers",
            w,
            "whole numbers from 0 to 64, comma-separated",
        ));
    }
    let frameworks = if given.framework.is_empty() {
        offer.installed.clone()
    } else {
        given.framework.clone()
    };
    if frameworks.is_empty() {
        return Err(SpecError::new(
            "framework",
            "none",
            "an installed framework: none is (`trainbench env install pytorch` makes one)",
        ));
    }
    let precision = if given.precision.is_empty() {
        default_precisions(offer.device)
            .into_iter()
            .map(|p| p.as_str().to_string())
            .collect()
    } else {
        given.precision.clone()
    };
    let batch_size = if given.batch_size.is_empty() {
        vec![DEFAULT_BATCH, DEFAULT_BATCH / 2]
    } else {
        given.batch_size.clone()
    };
    let threads = match (&given.threads, offer.device) {
        (t, _) if !t.is_empty() => t.clone(),
        (_, Device::Cpu) => default_threads(offer.cpu_cores),
        _ => Vec::new(),
    };
    let shares: Vec<FrameworkAxes> = frameworks
        .iter()
        .map(|key| FrameworkAxes {
            framework: key.clone(),
            compile: if given.compile.is_empty() {
                framework_of(key)
                    .map_or(&[Compile::Off][..], Compile::allowed_for)
                    .iter()
                    .map(|c| c.as_str().to_string())
                    .collect()
            } else {
                given.compile.clone()
            },
            precision: precision.clone(),
            batch_size: batch_size.clone(),
            threads: threads.clone(),
            devices: given.devices.clone(),
            loader_workers: given.loader_workers.clone(),
            cudnn_benchmark: given.cudnn_benchmark.clone(),
        })
        .collect();
    let total: usize = shares.iter().map(FrameworkAxes::count).sum();
    if total > MAX_CANDIDATES {
        return Err(SpecError::new(
            "space",
            format!("{total} candidates"),
            &format!(
                "at most {MAX_CANDIDATES} candidates: narrow an axis (--framework, --compile, --precision, --batch-size, --threads, --devices, --loader-workers, --cudnn-benchmark)"
            ),
        ));
    }
    Ok(shares)
}

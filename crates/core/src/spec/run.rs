//! [`RunSpec`]: a run specification validated, every value typed
//! ([`super::validate`] makes one from a [`super::RawSpec`]).

use serde::Serialize;

use super::options::{Compile, DataSource, Device, Length, Parallel, Precision};
use crate::models::ModelConfig;

/// A validated run specification.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RunSpec {
    pub model: String,
    pub model_config: ModelConfig,
    pub precision: Precision,
    pub compile: Compile,
    pub device: Device,
    pub devices: u32,
    /// Machines, each with `devices` devices (1 unless the run spans a
    /// cluster's nodes; left out of the configuration key when 1).
    #[serde(skip_serializing_if = "is_one")]
    pub nodes: u32,
    pub parallel: Parallel,
    /// Per device: the global batch is `batch_size × devices`.
    pub batch_size: u64,
    pub length: Length,
    pub data: DataSource,
    pub data_path: Option<String>,
    /// With `data = folder` only: the loader's workers (0: the training
    /// thread decodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loader_workers: Option<u32>,
    pub seed: u64,
    pub lr: f64,
    pub weight_decay: f64,
    /// `None`: 5 % of the total steps (at least one).
    pub warmup_steps: Option<u64>,
    pub window_steps: u64,
    pub eval_every_steps: Option<u64>,
    pub target_accuracy: Option<f64>,
    /// A held-out loss to reach, instead of an accuracy.
    pub target_loss: Option<f64>,
    pub stop_at_target: bool,
    pub threads: Option<u32>,
    pub synthetic_samples: u64,
    /// Environment variables set for the worker; left out of the key when
    /// none are set (keys of runs without them are unchanged).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: super::env::WorkerEnv,
    /// cuDNN's benchmark mode on a GPU (PyTorch, tch); `None`: the worker's
    /// default. Left out of the key when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cudnn_benchmark: Option<bool>,
    /// The operator profile after the timed part: kept out of the
    /// configuration keys (which serialise this struct) and sent to the
    /// worker in the plan (`WorkerPlan::profile`).
    #[serde(skip)]
    pub profile: bool,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

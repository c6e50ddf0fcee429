//! The spec as a person or the runner writes it, before validation.

use serde::{Deserialize, Serialize};

use crate::protocol::PROTOCOL_VERSION;

fn default_protocol() -> u32 {
    PROTOCOL_VERSION
}
fn default_precision() -> String {
    "fp32".into()
}
fn default_parallel() -> String {
    "ddp".into()
}
fn default_compile() -> String {
    "off".into()
}
fn default_device() -> String {
    "cpu".into()
}
fn default_one() -> i64 {
    1
}
fn default_data() -> String {
    "synthetic".into()
}
fn default_lr() -> f64 {
    1e-3
}
fn default_wd() -> f64 {
    0.05
}
fn default_window() -> i64 {
    10
}
fn default_synthetic_samples() -> i64 {
    1024
}

/// The spec as written by a person or the runner: loose types, so that a bad
/// value can be reported with its field instead of as a JSON type error.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSpec {
    #[serde(default = "default_protocol")]
    pub protocol: u32,
    pub model: String,
    #[serde(default = "default_precision")]
    pub precision: String,
    #[serde(default = "default_compile")]
    pub compile: String,
    #[serde(default = "default_parallel")]
    pub parallel: String,
    #[serde(default = "default_device")]
    pub device: String,
    #[serde(default = "default_one")]
    pub devices: i64,
    /// Machines the run spans (each with `devices` devices); more than one
    /// runs under Slurm, over a host's peers or on a Ray cluster
    /// (docs/remote.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<i64>,
    pub batch_size: i64,
    #[serde(default)]
    pub steps: Option<i64>,
    #[serde(default)]
    pub epochs: Option<i64>,
    #[serde(default = "default_data")]
    pub data: String,
    #[serde(default)]
    pub data_path: Option<String>,
    /// Processes or threads that decode and augment images for `data =
    /// folder` (0: on the training thread itself); no value with other data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loader_workers: Option<i64>,
    #[serde(default)]
    pub num_classes: Option<i64>,
    #[serde(default)]
    pub image_size: Option<i64>,
    #[serde(default)]
    pub in_channels: Option<i64>,
    #[serde(default)]
    pub seq_len: Option<i64>,
    #[serde(default)]
    pub vocab_size: Option<i64>,
    /// A file model's SHA-256 (`model` = `PATH.py:FUNCTION`): what the studio
    /// read when it planned the run; the worker refuses other bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_sha256: Option<String>,
    /// A training script's arguments (`model` = `script:PATH.py`): its
    /// `sys.argv[1:]`; left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub script_args: Vec<String>,
    /// What a library or file model is called in tables and comparisons
    /// (`--model-name`): two frameworks' versions of one architecture named
    /// alike compare as one model. `None`: the model's reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "default_lr")]
    pub lr: f64,
    #[serde(default = "default_wd")]
    pub weight_decay: f64,
    #[serde(default)]
    pub warmup_steps: Option<i64>,
    #[serde(default = "default_window")]
    pub window_steps: i64,
    #[serde(default)]
    pub eval_every_steps: Option<i64>,
    #[serde(default)]
    pub target_accuracy: Option<f64>,
    /// A held-out loss to reach (time-to-loss; a decoder's loss per token).
    #[serde(default)]
    pub target_loss: Option<f64>,
    #[serde(default)]
    pub stop_at_target: bool,
    #[serde(default)]
    pub threads: Option<i64>,
    #[serde(default = "default_synthetic_samples")]
    pub synthetic_samples: i64,
    /// Environment variables set for the worker (`spec::env`): part of the
    /// configuration; left out when none are set.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: super::env::WorkerEnv,
    /// `torch.backends.cudnn.benchmark` for PyTorch and the libtorch worker
    /// on a GPU; `None`: the worker's default (on for a convolutional
    /// network, off otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cudnn_benchmark: Option<bool>,
    /// Profile a few steps after the timed part (the operator profile).
    /// Not part of the configuration's identity: it never touches the timed
    /// windows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profile: bool,
}

impl RawSpec {
    /// The spec of `model` at `batch_size` per device with every other value
    /// at its default (the length still to be set: `steps` or `epochs`).
    pub fn new(model: &str, batch_size: i64) -> RawSpec {
        RawSpec {
            protocol: default_protocol(),
            model: model.to_owned(),
            precision: default_precision(),
            compile: default_compile(),
            parallel: default_parallel(),
            device: default_device(),
            devices: default_one(),
            nodes: None,
            batch_size,
            steps: None,
            epochs: None,
            data: default_data(),
            data_path: None,
            loader_workers: None,
            num_classes: None,
            image_size: None,
            in_channels: None,
            seq_len: None,
            vocab_size: None,
            model_sha256: None,
            script_args: Vec::new(),
            model_name: None,
            seed: 0,
            lr: default_lr(),
            weight_decay: default_wd(),
            warmup_steps: None,
            window_steps: default_window(),
            eval_every_steps: None,
            target_accuracy: None,
            target_loss: None,
            stop_at_target: false,
            threads: None,
            synthetic_samples: default_synthetic_samples(),
            env: Default::default(),
            cudnn_benchmark: None,
            profile: false,
        }
    }

    /// The spec as one JSON object (what the libtorch worker reads and the
    /// store keeps as the run's `spec_json`).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

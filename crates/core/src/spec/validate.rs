//! [`RunSpec`]: a [`RawSpec`] validated, every value typed.

use serde::Serialize;

use super::options::{Compile, DataSource, Device, Parallel, Precision};
use super::raw::RawSpec;
use crate::error::SpecError;
use crate::models::{self, CatalogEntry, Family, ModelConfig, ModelOptions};
use crate::protocol::PROTOCOL_VERSION;

/// Loader workers of an image folder when the spec names none.
pub const DEFAULT_LOADER_WORKERS: u32 = 2;
/// The most loader workers a spec may ask for.
pub const MAX_LOADER_WORKERS: u32 = 64;

/// How long a run trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Length {
    Steps(u64),
    Epochs(u64),
}

/// A validated run specification.
#[derive(Debug, Clone, Serialize)]
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
    /// The operator profile after the timed part: kept out of the
    /// configuration keys (which serialise this struct) and sent to the
    /// worker in the plan (`WorkerPlan::profile`).
    #[serde(skip)]
    pub profile: bool,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn at_least_one(field: &str, v: i64) -> Result<u64, SpecError> {
    u64::try_from(v)
        .ok()
        .filter(|&x| x >= 1)
        .ok_or_else(|| SpecError::new(field, v, "a whole number ≥ 1"))
}

impl RunSpec {
    /// Parses and validates a JSON spec.
    pub fn from_json(text: &str) -> Result<RunSpec, SpecError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            SpecError::new(
                "spec",
                "(the text given)",
                &format!("one JSON object ({e})"),
            )
        })?;
        let raw: RawSpec = serde_path_to_error::deserialize(&value).map_err(|e| {
            let path = e.path().to_string();
            let field = if path == "." { "spec".to_owned() } else { path };
            let given = value
                .pointer(&format!("/{}", field.replace('.', "/")))
                .map(|v| v.to_string())
                .unwrap_or_else(|| "(missing)".into());
            SpecError::new(&field, given, &e.inner().to_string())
        })?;
        RunSpec::from_raw(raw)
    }

    /// Validates a loosely typed spec.
    pub fn from_raw(raw: RawSpec) -> Result<RunSpec, SpecError> {
        if raw.protocol != PROTOCOL_VERSION {
            return Err(SpecError::new(
                "protocol",
                raw.protocol,
                &format!("{PROTOCOL_VERSION} (the protocol this build speaks)"),
            ));
        }
        let entry: &CatalogEntry = models::lookup(&raw.model).ok_or_else(|| {
            SpecError::new(
                "model",
                &raw.model,
                &format!("one of {}", models::model_names().join(", ")),
            )
        })?;
        let precision = Precision::parse(&raw.precision)?;
        let compile = Compile::parse(&raw.compile)?;
        let device = Device::parse(&raw.device)?;
        let devices = u32::try_from(at_least_one("devices", raw.devices)?)
            .map_err(|_| SpecError::new("devices", raw.devices, "a whole number ≥ 1"))?;
        let nodes = match raw.nodes {
            None => 1,
            Some(n) => u32::try_from(at_least_one("nodes", n)?)
                .ok()
                .filter(|&n| n <= 4096)
                .ok_or_else(|| SpecError::new("nodes", n, "a whole number from 1 to 4096"))?,
        };
        let parallel = Parallel::parse(&raw.parallel)?;
        if parallel == Parallel::Fsdp && devices < 2 {
            return Err(SpecError::new(
                "parallel",
                "fsdp",
                &format!("ddp with devices = {devices} (fsdp shards over 2 or more devices)"),
            ));
        }
        let batch_size = at_least_one("batch_size", raw.batch_size)?;
        let length = match (raw.steps, raw.epochs) {
            (Some(s), None) => Length::Steps(at_least_one("steps", s)?),
            (None, Some(e)) => Length::Epochs(at_least_one("epochs", e)?),
            (Some(s), Some(e)) => {
                return Err(SpecError::new(
                    "steps",
                    format!("{s} (with epochs = {e})"),
                    "either steps or epochs, not both",
                ))
            }
            (None, None) => {
                return Err(SpecError::new(
                    "steps",
                    "(missing)",
                    "either steps or epochs",
                ))
            }
        };
        let data = DataSource::parse(&raw.data)?;
        if data == DataSource::Cifar10 && raw.data_path.is_none() {
            return Err(SpecError::new(
                "data_path",
                "(missing)",
                "the directory holding CIFAR-10's binary batches (data_batch_1.bin … test_batch.bin)",
            ));
        }
        if data == DataSource::Folder && raw.data_path.is_none() {
            return Err(SpecError::new(
                "data_path",
                "(missing)",
                "the directory holding the images: train/<class>/*.jpg|png (and val/<class>/), or <class>/*.jpg|png",
            ));
        }
        let loader_workers = match (data, raw.loader_workers) {
            (DataSource::Folder, None) => Some(DEFAULT_LOADER_WORKERS),
            (DataSource::Folder, Some(n)) => Some(
                u32::try_from(n)
                    .ok()
                    .filter(|&n| n <= MAX_LOADER_WORKERS)
                    .ok_or_else(|| {
                        SpecError::new(
                            "loader_workers",
                            n,
                            &format!("a whole number from 0 to {MAX_LOADER_WORKERS}"),
                        )
                    })?,
            ),
            (_, None) => None,
            (other, Some(n)) => {
                return Err(SpecError::new(
                    "loader_workers",
                    n,
                    &format!(
                        "no value with data = {other} (only an image folder is decoded while training runs)"
                    ),
                ))
            }
        };
        let mut opts = ModelOptions {
            num_classes: raw.num_classes,
            image_size: raw.image_size,
            in_channels: raw.in_channels,
            seq_len: raw.seq_len,
            vocab_size: raw.vocab_size,
        };
        if let Some((channels, size, classes)) = data.image_shape() {
            if !entry.family.is_image() {
                return Err(SpecError::new(
                    "data",
                    data.as_str(),
                    &format!(
                        "synthetic for the text model {} (image data sets need an image model)",
                        raw.model
                    ),
                ));
            }
            for (field, given, needed) in [
                ("in_channels", raw.in_channels, channels),
                ("image_size", raw.image_size, size),
                ("num_classes", raw.num_classes, classes),
            ] {
                if let Some(g) = given.filter(|&g| g != needed) {
                    return Err(SpecError::new(
                        field,
                        g,
                        &format!("{needed} (what data set {} has) or no value", data.as_str()),
                    ));
                }
            }
            opts.in_channels = Some(channels);
            opts.image_size = Some(size);
            opts.num_classes = Some(classes);
        }
        if data == DataSource::Folder {
            if !entry.family.is_image() {
                return Err(SpecError::new(
                    "data",
                    data.as_str(),
                    &format!(
                        "synthetic for the text model {} (an image folder needs an image model)",
                        raw.model
                    ),
                ));
            }
            if let Some(c) = raw.in_channels.filter(|&c| c != 3) {
                return Err(SpecError::new(
                    "in_channels",
                    c,
                    "3 (images are decoded as RGB) or no value",
                ));
            }
            opts.in_channels = Some(3);
            if raw.num_classes.is_none() {
                return Err(SpecError::new(
                    "num_classes",
                    "(missing)",
                    "the number of class folders under data_path (the studio counts them when it plans a sweep)",
                ));
            }
        }
        if data == DataSource::Text && entry.family != Family::Decoder {
            return Err(SpecError::new(
                "data",
                "text",
                &format!(
                    "synthetic{} for {} (the text corpus trains decoder language models)",
                    if entry.family.is_image() {
                        ", mnist or cifar10"
                    } else {
                        ""
                    },
                    raw.model
                ),
            ));
        }
        let model_config = entry.config(&opts)?;
        if data == DataSource::Text {
            if let ModelConfig::Decoder(c) = &model_config {
                if c.vocab_size < 256 {
                    return Err(SpecError::new(
                        "vocab_size",
                        c.vocab_size,
                        "256 or more with data = text (byte-level tokens)",
                    ));
                }
            }
        }
        if !(raw.lr.is_finite() && raw.lr > 0.0) {
            return Err(SpecError::new("lr", raw.lr, "a finite number > 0"));
        }
        if !(raw.weight_decay.is_finite() && raw.weight_decay >= 0.0) {
            return Err(SpecError::new(
                "weight_decay",
                raw.weight_decay,
                "a finite number ≥ 0",
            ));
        }
        let warmup_steps = match raw.warmup_steps {
            None => None,
            Some(w) => Some(
                u64::try_from(w)
                    .map_err(|_| SpecError::new("warmup_steps", w, "a whole number ≥ 0"))?,
            ),
        };
        let window_steps = at_least_one("window_steps", raw.window_steps)?;
        let eval_every_steps = raw
            .eval_every_steps
            .map(|v| at_least_one("eval_every_steps", v))
            .transpose()?;
        if let Some(t) = raw.target_accuracy {
            if !(t > 0.0 && t <= 1.0) {
                return Err(SpecError::new("target_accuracy", t, "a number in (0, 1]"));
            }
            if data == DataSource::Synthetic {
                return Err(SpecError::new(
                    "target_accuracy",
                    t,
                    "no value with synthetic data (accuracy on random labels means nothing); use mnist, cifar10, text or folder",
                ));
            }
        }
        if let Some(t) = raw.target_loss {
            if !(t.is_finite() && t > 0.0) {
                return Err(SpecError::new("target_loss", t, "a finite number > 0"));
            }
            if data == DataSource::Synthetic {
                return Err(SpecError::new(
                    "target_loss",
                    t,
                    "no value with synthetic data (there is no held-out split); use mnist, cifar10, text or folder",
                ));
            }
            if let Some(a) = raw.target_accuracy {
                return Err(SpecError::new(
                    "target_loss",
                    format!("{t} (with target_accuracy = {a})"),
                    "one target: target_accuracy or target_loss",
                ));
            }
        }
        if raw.stop_at_target && raw.target_accuracy.is_none() && raw.target_loss.is_none() {
            return Err(SpecError::new(
                "stop_at_target",
                true,
                "false unless target_accuracy or target_loss is set",
            ));
        }
        let threads = raw
            .threads
            .map(|t| {
                at_least_one("threads", t).and_then(|x| {
                    u32::try_from(x).map_err(|_| SpecError::new("threads", t, "a whole number ≥ 1"))
                })
            })
            .transpose()?;
        let synthetic_samples = at_least_one("synthetic_samples", raw.synthetic_samples)?;
        Ok(RunSpec {
            model: raw.model,
            model_config,
            precision,
            compile,
            device,
            devices,
            nodes,
            parallel,
            batch_size,
            length,
            data,
            data_path: raw.data_path,
            loader_workers,
            seed: raw.seed,
            lr: raw.lr,
            weight_decay: raw.weight_decay,
            warmup_steps,
            window_steps,
            eval_every_steps,
            target_accuracy: raw.target_accuracy,
            target_loss: raw.target_loss,
            stop_at_target: raw.stop_at_target,
            threads,
            synthetic_samples,
            profile: raw.profile,
        })
    }

    /// Processes in the run's process group: devices on every node.
    pub fn world_size(&self) -> u32 {
        self.devices.saturating_mul(self.nodes)
    }

    pub fn family(&self) -> Family {
        self.model_config.family()
    }
}

/// A spec as written and as validated, built once and carried together from
/// the wizard or the CLI to the store and the worker: the libtorch worker
/// reads [`RawSpec::to_json`], a Python worker the plan of the typed spec.
#[derive(Debug, Clone)]
pub struct CheckedSpec {
    pub raw: RawSpec,
    pub spec: RunSpec,
}

impl CheckedSpec {
    pub fn new(raw: RawSpec) -> Result<CheckedSpec, SpecError> {
        let spec = RunSpec::from_raw(raw.clone())?;
        Ok(CheckedSpec { raw, spec })
    }
}

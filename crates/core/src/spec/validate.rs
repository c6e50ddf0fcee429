//! [`RunSpec`] from a [`RawSpec`]: every value validated and typed.

use super::fields::{self, at_least_one};
use super::options::{Compile, Device, Precision};
pub use super::options::{Length, DEFAULT_LOADER_WORKERS, MAX_LOADER_WORKERS};
use super::raw::RawSpec;
pub use super::run::RunSpec;
use crate::error::SpecError;
use crate::models::{self, CatalogEntry, Family, FileRef, LibraryRef, ModelConfig, ScriptRef};
use crate::protocol::PROTOCOL_VERSION;

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
        if let Some(script) = ScriptRef::parse(&raw.model)? {
            return super::script::script_spec(raw, script);
        }
        if let Some(first) = raw.script_args.first() {
            return Err(SpecError::new(
                "script_args",
                first.chars().take(80).collect::<String>(),
                "no value for a model that is not a training script (script:PATH.py)",
            ));
        }
        let file = FileRef::parse(&raw.model)?;
        let library = match file {
            Some(_) => None,
            None => LibraryRef::parse(&raw.model)?,
        };
        if file.is_none() {
            if let Some(sha) = &raw.model_sha256 {
                return Err(SpecError::new(
                    "model_sha256",
                    sha.chars().take(80).collect::<String>(),
                    "no value for a model that is not a file (PATH.py:FUNCTION)",
                ));
            }
        }
        check_model_name(&raw, library.is_some() || file.is_some())?;
        let entry: Option<&CatalogEntry> = match (&library, &file) {
            (Some(_), _) | (_, Some(_)) => None,
            (None, None) => Some(models::lookup(&raw.model).ok_or_else(|| {
                SpecError::new(
                    "model",
                    &raw.model,
                    &format!(
                        "one of {}, or timm:NAME, hf:MODEL_TYPE[?key=value&…], keras:NAME, PATH.py:FUNCTION or script:PATH.py",
                        models::model_names().join(", ")
                    ),
                )
            })?),
        };
        let precision = Precision::parse(&raw.precision)?;
        let compile = Compile::parse(&raw.compile)?;
        let device = Device::parse(&raw.device)?;
        let (devices, nodes, parallel) = fields::devices(&raw)?;
        let batch_size = at_least_one("batch_size", raw.batch_size)?;
        let length = fields::length(&raw)?;
        let (data, loader_workers) = fields::data(&raw)?;
        let model_config = match (file, library, entry) {
            (Some(file), _, _) => super::file_model::file_model(&raw, file, data)?,
            (None, Some(library), _) => fields::library_model(&raw, library, data)?,
            (None, None, Some(entry)) => fields::model(&raw, entry, data)?,
            (None, None, None) => return Err(SpecError::new("model", &raw.model, "a model name")),
        };
        let warmup_steps = fields::optimizer(&raw)?;
        let window_steps = at_least_one("window_steps", raw.window_steps)?;
        let eval_every_steps = raw
            .eval_every_steps
            .map(|v| at_least_one("eval_every_steps", v))
            .transpose()?;
        fields::targets(&raw, data)?;
        let threads = raw
            .threads
            .map(|t| {
                at_least_one("threads", t).and_then(|x| {
                    u32::try_from(x).map_err(|_| SpecError::new("threads", t, "a whole number ≥ 1"))
                })
            })
            .transpose()?;
        let synthetic_samples = at_least_one("synthetic_samples", raw.synthetic_samples)?;
        super::env::check(&raw.env)?;
        if let (Some(b), Device::Cpu) = (raw.cudnn_benchmark, device) {
            return Err(SpecError::new(
                "cudnn_benchmark",
                if b { "on" } else { "off" },
                "no value on the CPU (cuDNN runs on NVIDIA GPUs): leave it out, or train on cuda:N",
            ));
        }
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
            env: raw.env,
            cudnn_benchmark: raw.cudnn_benchmark,
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

    /// The model as a stored run's row names it: a training script with its
    /// arguments (`script:/w/train.py --lr 1e-3`), any other model as given.
    pub fn row_model(&self) -> String {
        match &self.model_config {
            ModelConfig::Script(c) => models::script::row_model(&self.model, &c.args),
            _ => self.model.clone(),
        }
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

/// `model_name`: 1–100 characters of letters, digits, spaces and `_ - . + /`
/// (no `:`, so it never reads as a reference), for a library or file model.
fn check_model_name(raw: &RawSpec, own: bool) -> Result<(), SpecError> {
    let Some(name) = &raw.model_name else {
        return Ok(());
    };
    if !own {
        return Err(SpecError::new(
            "model_name",
            name.chars().take(100).collect::<String>(),
            &format!(
                "no value for the catalogue model {} (its name is its own)",
                raw.model
            ),
        ));
    }
    let ok = |c: char| c.is_alphanumeric() || matches!(c, ' ' | '_' | '-' | '.' | '+' | '/');
    if name.trim().is_empty() || name.chars().count() > 100 || !name.chars().all(ok) {
        return Err(SpecError::new(
            "model_name",
            name.chars().take(100).collect::<String>(),
            "1 to 100 letters, digits, spaces, '_', '-', '.', '+' or '/' (not blank)",
        ));
    }
    Ok(())
}

impl CheckedSpec {
    pub fn new(raw: RawSpec) -> Result<CheckedSpec, SpecError> {
        let spec = RunSpec::from_raw(raw.clone())?;
        Ok(CheckedSpec { raw, spec })
    }
}

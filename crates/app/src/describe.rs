//! `describe` for a model the catalogue does not hold (a library name or a
//! model from a person's file): the run it would be is planned as a sweep of
//! one (the same checks, the file read and hashed), then its framework's
//! worker builds the model once and counts it; nothing trains.

use trainbench_core::spec::runnable::Machine;
use trainbench_runner::envs::library::{describe_model, Described};

use crate::sweep::{plan_sweep, SweepRequest};
use crate::{AppError, AppResult};

/// What `describe` says of a library or file model.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DescribedModel {
    pub model: String,
    pub framework: String,
    pub param_count: u64,
    pub flops_per_sample: Option<f64>,
    pub flops_method: Option<String>,
    /// How the harness trains it: `image`, `bert` (classified tokens) or
    /// `decoder` (next tokens).
    pub trained_as: String,
    pub input: Option<Vec<u64>>,
}

/// Plans `req`'s model in its framework (the first of each) on this
/// machine's CPU and asks the framework's worker to build and count it. Only
/// what shapes the model is taken from `req` (the model, the framework, the
/// data and the input, classes and vocabulary); the rest of a run's settings
/// (precision, batch, devices, host …) are the defaults, so a wizard's whole
/// request can be described as it stands.
pub fn describe_own_model(req: &SweepRequest) -> AppResult<DescribedModel> {
    let req = SweepRequest {
        model: req.model.clone(),
        framework: req.framework.clone(),
        data: req.data.clone(),
        num_classes: req.num_classes,
        seq_len: req.seq_len,
        image_size: req.image_size,
        input_shape: req.input_shape.clone(),
        vocab_size: req.vocab_size,
        device: Some("cpu".into()),
        batch_size: vec![1],
        steps: Some(1),
        epochs: None,
        ..SweepRequest::default()
    };
    let machine = Machine {
        gpus: 0,
        cpu_cores: crate::host::cpu_cores(),
    };
    let plan = plan_sweep(&req, machine, false);
    if let Some(r) = plan.rejected.first() {
        return Err(AppError::BadInput {
            field: r.field.clone(),
            message: r.message.clone(),
        });
    }
    let cfg = plan
        .configs
        .first()
        .ok_or_else(|| AppError::bad_input("model", req.model.join(","), "one model"))?;
    if cfg.framework == trainbench_core::Framework::Tch {
        // The libtorch worker trains a TorchScript capture of the module,
        // made when a run starts; the count is the PyTorch module's.
        return Err(AppError::bad_input(
            "framework",
            "tch",
            "pytorch, tensorflow or jax (describe builds the model in Python; framework tch trains a TorchScript capture of the PyTorch module, with its count)",
        ));
    }
    let framework = cfg.framework.to_string();
    let json = cfg.spec.spec.worker_plan_json(cfg.framework);
    let answer =
        describe_model(&cfg.worker, &framework, &json).map_err(|e| AppError::BadInput {
            field: "framework".into(),
            message: e.to_string(),
        })?;
    match answer {
        Described::Counted {
            param_count,
            flops_per_sample,
            flops_method,
            family,
            input,
        } => Ok(DescribedModel {
            model: cfg.spec.spec.model.clone(),
            framework,
            param_count,
            flops_per_sample,
            flops_method,
            trained_as: family,
            input,
        }),
        Described::Refused { field, message } => Err(AppError::BadInput { field, message }),
    }
}

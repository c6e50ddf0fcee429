//! The networks, built from `trainbench_core::models::ModelConfig` so that the
//! architecture is defined once. Their parameter count is read back from the
//! VarStore's trainable tensors and must equal the analytical count.

mod bert;
mod resnet;
mod vit;

use crate::error::WorkerError;
use tch::nn::{self, Init};
use trainbench_core::models::ModelConfig;

/// How weights are initialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitMode {
    /// The reference implementation's scheme (training).
    Reference,
    /// All zeros: fast, for `describe` of the largest models (shapes only matter).
    Zeros,
}

impl InitMode {
    /// Normal(0, std) under `Reference`.
    fn normal(self, std: f64) -> Init {
        match self {
            InitMode::Reference => Init::Randn {
                mean: 0.0,
                stdev: std,
            },
            InitMode::Zeros => Init::Const(0.0),
        }
    }

    fn kaiming(self) -> Init {
        match self {
            InitMode::Reference => Init::Kaiming {
                dist: nn::init::NormalOrUniform::Normal,
                fan: nn::init::FanInOut::FanOut,
                non_linearity: nn::init::NonLinearity::ReLU,
            },
            InitMode::Zeros => Init::Const(0.0),
        }
    }

    fn ones(self) -> Init {
        match self {
            InitMode::Reference => Init::Const(1.0),
            InitMode::Zeros => Init::Const(0.0),
        }
    }
}

fn linear(p: nn::Path, i: i64, o: i64, init: InitMode, std: f64) -> nn::Linear {
    nn::linear(
        p,
        i,
        o,
        nn::LinearConfig {
            ws_init: init.normal(std),
            bs_init: Some(Init::Const(0.0)),
            bias: true,
        },
    )
}

fn layer_norm(p: nn::Path, d: i64, eps: f64, init: InitMode) -> nn::LayerNorm {
    nn::layer_norm(
        p,
        vec![d],
        nn::LayerNormConfig {
            eps,
            ws_init: init.ones(),
            bs_init: Init::Const(0.0),
            ..Default::default()
        },
    )
}

/// Builds the network for `cfg` under `vs.root()`; decoders are not built by
/// this worker yet (`unsupported`, as `check_runnable` says before a run).
pub fn build(
    cfg: &ModelConfig,
    vs: &nn::VarStore,
    init: InitMode,
) -> Result<Box<dyn nn::ModuleT>, WorkerError> {
    let root = vs.root();
    Ok(match cfg {
        ModelConfig::Vit(c) => Box::new(vit::Vit::new(&root, c, init)),
        ModelConfig::Resnet(c) => Box::new(resnet::ResNet::new(&root, c, init)),
        ModelConfig::Bert(c) => Box::new(bert::BertClassifier::new(&root, c, init)),
        ModelConfig::Decoder(_) => return Err(decoder_unsupported()),
    })
}

/// The libtorch worker does not build decoder language models yet.
pub fn decoder_unsupported() -> WorkerError {
    WorkerError::unsupported(
        "model",
        trainbench_core::spec::DECODERS_NOT_IN.replace("{framework}", "tch"),
    )
}

/// Trainable parameters, counted from the VarStore's own tensors.
pub fn trainable_params(vs: &nn::VarStore) -> u64 {
    vs.trainable_variables()
        .iter()
        .map(|t| t.numel() as u64)
        .sum()
}

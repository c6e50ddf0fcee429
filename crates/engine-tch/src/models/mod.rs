//! The networks, built from `trainbench_core::models::ModelConfig` so that the
//! architecture is defined once. Their parameter count is read back from the
//! VarStore's trainable tensors and must equal the analytical count.

mod bert;
mod decoder;
mod encoder;
mod resnet;
mod scripted;
mod vit;

pub use scripted::Scripted;

use tch::nn::{self, Init};
use trainbench_core::models::ModelConfig;

use crate::error::WorkerError;

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

/// Why this worker refuses a model the Python PyTorch worker builds (a
/// library model, `timm:` / `hf:`, a training script, or a model from a
/// person's file that came without its TorchScript capture).
pub fn not_built_here(cfg: &ModelConfig) -> WorkerError {
    let what = match cfg {
        ModelConfig::Library(l) => format!("the library model {}", l.model),
        ModelConfig::File(f) => {
            return WorkerError::bad_config(
                "model",
                format!(
                    "model = {} is not allowed without its TorchScript capture: expected --capture FILE (the studio captures the model when its run starts)",
                    f.model
                ),
            )
        }
        ModelConfig::Script(c) => format!("the training script {}", c.script),
        _ => "this model".to_owned(),
    };
    WorkerError::unsupported(
        "framework",
        format!("framework = tch is not allowed: expected pytorch for {what}"),
    )
}

/// Builds the network for `cfg` under `vs.root()`; a library or file model
/// is the Python PyTorch worker's to build, and refused here.
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
        ModelConfig::Decoder(c) => Box::new(decoder::Decoder::new(&root, c, init)),
        ModelConfig::Encoder(c) => Box::new(encoder::FraudTransformer::new(&root, c, init)),
        ModelConfig::Library(_) | ModelConfig::File(_) | ModelConfig::Script(_) => {
            return Err(not_built_here(cfg))
        }
    })
}

/// Trainable parameters, counted from the VarStore's own tensors.
pub fn trainable_params(vs: &nn::VarStore) -> u64 {
    vs.trainable_variables()
        .iter()
        .map(|t| t.numel() as u64)
        .sum()
}

/// `(tokens, heads, kv_heads, head_dim)` of the model's self-attention, with
/// whether it drops attention probabilities while training and is causal;
/// `None` for a model without attention.
fn attention_shape(cfg: &ModelConfig) -> Option<([i64; 4], bool, bool)> {
    match cfg {
        ModelConfig::Vit(c) => {
            let t = (c.image_size / c.patch_size).pow(2) + 1;
            Some((
                [t, c.num_heads, c.num_heads, c.embed_dim / c.num_heads],
                false,
                false,
            ))
        }
        ModelConfig::Bert(c) => Some((
            [c.seq_len, c.heads, c.heads, c.hidden / c.heads],
            true,
            false,
        )),
        ModelConfig::Decoder(c) => Some((
            [c.seq_len, c.heads, c.kv_heads, c.head_dim()],
            c.dropout,
            true,
        )),
        ModelConfig::Encoder(c) => Some((
            [c.seq_len, c.heads, c.heads, c.hidden / c.heads],
            true,
            false,
        )),
        ModelConfig::Resnet(_)
        | ModelConfig::Library(_)
        | ModelConfig::File(_)
        | ModelConfig::Script(_) => None,
    }
}

/// Which kernel libtorch's scaled-dot-product attention picks for the
/// model's attention (shape, compute dtype, causal mask, grouped-query heads,
/// training dropout) on `device`, in words for the run's `execution`; `None`
/// for a model without attention.
pub fn sdpa_choice(cfg: &ModelConfig, device: tch::Device, kind: tch::Kind) -> Option<String> {
    let ([t, h, kv, hd], dropout, causal) = attention_shape(cfg)?;
    let q = tch::Tensor::zeros([1, h, t, hd], (kind, device));
    let k = tch::Tensor::zeros([1, kv, t, hd], (kind, device));
    let choice = tch::Tensor::f_internal_fused_sdp_choice(
        &q,
        &k,
        &k,
        None::<tch::Tensor>,
        if dropout { 0.1 } else { 0.0 },
        causal,
        None,
        kv != h,
    );
    // c10's SDPBackend values, as torch.nn.attention.SDPBackend lists them.
    let name = match choice {
        Ok(0) => "the unfused math kernel".to_owned(),
        Ok(1) => "flash attention".to_owned(),
        Ok(2) => "memory-efficient attention".to_owned(),
        Ok(3) => "cuDNN attention".to_owned(),
        Ok(4) => "a backend registered from outside PyTorch".to_owned(),
        Ok(other) => format!("backend {other} (none fits)"),
        Err(e) => {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or_default().to_owned();
            return Some(format!(
                "attention: scaled_dot_product_attention (its kernel choice could not be read: {first})"
            ));
        }
    };
    let why = if dropout {
        ", with attention dropout while training"
    } else {
        ""
    };
    Some(format!(
        "attention: scaled_dot_product_attention, {name} (SDPA's choice for the model's shape{why})"
    ))
}

//! The model catalogue: architectures by name, their options, and analytical
//! parameter counts and FLOPs.
//!
//! Reference implementations: timm for ViT (1000 classes, class token, pre-norm
//! blocks), torchvision for ResNet (v1.5: stride on the 3×3 convolution), Hugging
//! Face `BertModel` (pooler included) plus a linear sequence-classification head,
//! and Hugging Face `GPT2LMHeadModel` / `LlamaForCausalLM` for the decoders.
//!
//! FLOPs convention (stated in `docs/metrics.md`): only multiply-accumulates of
//! convolutions, linear layers and attention matmuls are counted; one MAC is two
//! FLOPs; a training step costs three forward passes (forward + backward of inputs
//! and weights). So `flops_per_sample = 6 × forward MACs`. For a decoder a
//! sample is one sequence of `seq_len` tokens, and per token this is
//! `6 N + 12 L T d` (N the parameters of the matmuls, the LM head included and
//! the embedding tables not; L layers, T tokens, d width): the attention
//! matmuls counted over the full T × T score matrix, as PaLM's MFU does,
//! although the causal mask makes half of it zeros.

use serde::{Deserialize, Serialize};

/// Options a run may override; `None` keeps the model's default.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ModelOptions {
    pub num_classes: Option<i64>,
    pub image_size: Option<i64>,
    pub in_channels: Option<i64>,
    pub seq_len: Option<i64>,
    pub vocab_size: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Vit,
    Resnet,
    Bert,
    /// Decoder-only language models (GPT-2, Llama), trained on next tokens.
    Decoder,
    /// A sequence classifier over PyTorch's `nn.TransformerEncoder` (the
    /// fraud-detection model of a published TensorFlow→PyTorch migration).
    Encoder,
    /// A model named from a library (`timm:`, `hf:`), built by the worker.
    Library,
    /// A model from a person's own Python file (`PATH.py:FUNCTION`).
    File,
    /// A person's own training loop (`script:PATH.py`), reporting its steps.
    Script,
}

impl Family {
    /// Whether the model takes images (and so image data sets).
    pub fn is_image(self) -> bool {
        matches!(self, Family::Vit | Family::Resnet)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VitConfig {
    pub patch_size: i64,
    pub embed_dim: i64,
    pub depth: i64,
    pub num_heads: i64,
    pub mlp_hidden: i64,
    pub image_size: i64,
    pub in_channels: i64,
    pub num_classes: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResBlock {
    /// Two 3×3 convolutions (ResNet-18/34).
    Basic,
    /// 1×1, 3×3, 1×1 with expansion 4 (ResNet-50 and up).
    Bottleneck,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResStem {
    /// 7×7 stride-2 convolution, batch norm, ReLU, 3×3 stride-2 max pool.
    Imagenet,
    /// 3×3 stride-1 convolution, batch norm, ReLU; no pooling (small images).
    Small,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResNetConfig {
    pub block: ResBlock,
    pub stem: ResStem,
    pub stem_width: i64,
    /// Blocks per stage.
    pub layers: Vec<i64>,
    /// Planes per stage (output width is `planes × expansion`).
    pub planes: Vec<i64>,
    pub image_size: i64,
    pub in_channels: i64,
    pub num_classes: i64,
}

impl ResNetConfig {
    pub fn expansion(&self) -> i64 {
        match self.block {
            ResBlock::Basic => 1,
            ResBlock::Bottleneck => 4,
        }
    }

    /// Stride of stage `i`: the first stage keeps the resolution.
    pub fn stage_stride(i: usize) -> i64 {
        if i == 0 {
            1
        } else {
            2
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BertConfig {
    pub vocab_size: i64,
    pub hidden: i64,
    pub layers: i64,
    pub heads: i64,
    pub intermediate: i64,
    pub max_position: i64,
    pub type_vocab: i64,
    pub seq_len: i64,
    pub num_classes: i64,
}

/// A decoder's normalisation layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecoderNorm {
    /// LayerNorm with weight and bias, eps 1e-5 (GPT-2).
    LayerNorm,
    /// RMSNorm with a weight, eps 1e-5 (Llama).
    RmsNorm,
}

/// A decoder's feed-forward block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecoderMlp {
    /// Linear, GELU (tanh approximation), linear (GPT-2).
    Gelu,
    /// `down(silu(gate(x)) × up(x))` (Llama).
    SwiGlu,
}

/// How a decoder knows a token's position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecoderPositions {
    /// A learned position table added to the token embeddings (GPT-2).
    Learned,
    /// Rotary embeddings on queries and keys, base `rope_theta` (Llama).
    Rotary,
}

/// A decoder-only transformer trained with the causal language-model loss
/// (each position predicts the next token). Pre-norm blocks; attention with
/// `kv_heads` key/value heads shared by `heads / kv_heads` query heads each
/// (grouped-query attention; equal counts are plain multi-head attention).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DecoderConfig {
    pub vocab_size: i64,
    pub hidden: i64,
    pub layers: i64,
    pub heads: i64,
    pub kv_heads: i64,
    pub intermediate: i64,
    /// The longest sequence the model is defined for (its position table or
    /// its context length).
    pub max_position: i64,
    /// Tokens per training sequence.
    pub seq_len: i64,
    pub norm: DecoderNorm,
    pub mlp: DecoderMlp,
    pub positions: DecoderPositions,
    /// Biases on every linear layer (GPT-2) or on none (Llama).
    pub bias: bool,
    /// The LM head shares the token embedding's weights.
    pub tie_embeddings: bool,
    /// Rotary base (Rotary positions only).
    pub rope_theta: i64,
    /// Dropout 0.1 on the embeddings, the attention probabilities and each
    /// residual branch, as Hugging Face trains GPT-2; none for Llama.
    pub dropout: bool,
}

impl DecoderConfig {
    pub fn head_dim(&self) -> i64 {
        self.hidden / self.heads
    }
}

/// The fraud-detection `FraudTransformer`: token embedding plus a learned position
/// table, `layers` × `nn.TransformerEncoderLayer(hidden, heads,
/// dim_feedforward=intermediate, dropout=0.1, batch_first=True)` (post-norm,
/// LayerNorm eps 1e-5, ReLU, attention and every linear layer with biases),
/// the mean over positions, and `Linear(hidden, num_classes)`. One class is
/// its binary head (a sigmoid on one logit, binary cross-entropy);
/// more are softmax classes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EncoderConfig {
    pub vocab_size: i64,
    pub hidden: i64,
    pub layers: i64,
    pub heads: i64,
    pub intermediate: i64,
    pub max_position: i64,
    pub seq_len: i64,
    pub num_classes: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum ModelConfig {
    Vit(VitConfig),
    Resnet(ResNetConfig),
    Bert(BertConfig),
    Decoder(DecoderConfig),
    Encoder(EncoderConfig),
    /// A library model (`timm:`, `hf:`): the worker builds it and counts its
    /// parameters and FLOPs; the analytical counts here are 0.
    Library(LibraryConfig),
    /// A model from a person's file (`PATH.py:FUNCTION`): the worker builds
    /// it and counts its parameters and FLOPs, as for a library model.
    File(FileConfig),
    /// A person's own training loop (`script:PATH.py`): it builds its model
    /// and reports its steps; parameters and FLOPs are what it reports.
    Script(ScriptConfig),
}

/// One entry of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct CatalogEntry {
    pub name: &'static str,
    pub family: Family,
    /// Small enough to train in seconds on a CPU.
    pub cpu_friendly: bool,
    pub summary: &'static str,
    /// Parameter count of the reference implementation at the defaults (backbone
    /// only for BERT: `BertModel` with pooler, without the classification head;
    /// the whole `…ForCausalLM` for decoders, a tied LM head counted once).
    pub reference_params: Option<u64>,
    /// Whether the reference count includes the classification head. timm's
    /// `vit_huge_patch14_224` defaults to its headless MIM-pretrained config
    /// (`num_classes=0`), and the BERT reference is `BertModel` without a head.
    pub reference_includes_head: bool,
    build: fn() -> ModelConfig,
}

mod builders;
mod catalog;
mod counts;
pub mod file;
pub mod library;
pub mod script;
mod traits;

pub use catalog::{lookup, model_names, CATALOG};
pub use counts::conv_out;
pub use file::{FileConfig, FileRef, InputShape, TorchScriptCapture};
pub use library::{Library, LibraryConfig, LibraryRef};
pub use script::{ScriptConfig, ScriptRef};
pub use traits::{Attention, Input, ModelTraits, Objective};

#[cfg(test)]
mod tests;

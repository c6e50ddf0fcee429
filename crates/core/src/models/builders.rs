//! Each family's configuration from its few numbers, as the catalogue's
//! entries build them.

use super::{
    BertConfig, DecoderConfig, DecoderMlp, DecoderNorm, DecoderPositions, EncoderConfig,
    ModelConfig, ResBlock, ResNetConfig, ResStem, VitConfig,
};

/// The fraud-detection `FraudTransformer` (vocabulary 50,000, 512 positions,
/// one output logit) at width `hidden`, feed-forward `ff`, `layers` layers.
pub(super) fn fraud(
    vocab: i64,
    hidden: i64,
    heads: i64,
    layers: i64,
    ff: i64,
    positions: i64,
) -> ModelConfig {
    ModelConfig::Encoder(EncoderConfig {
        vocab_size: vocab,
        hidden,
        layers,
        heads,
        intermediate: ff,
        max_position: positions,
        seq_len: positions,
        num_classes: 1,
    })
}

pub(super) fn vit(
    patch: i64,
    dim: i64,
    depth: i64,
    heads: i64,
    mlp: i64,
    img: i64,
    classes: i64,
) -> ModelConfig {
    ModelConfig::Vit(VitConfig {
        patch_size: patch,
        embed_dim: dim,
        depth,
        num_heads: heads,
        mlp_hidden: mlp,
        image_size: img,
        in_channels: 3,
        num_classes: classes,
    })
}

pub(super) fn resnet(
    block: ResBlock,
    stem: ResStem,
    layers: &[i64],
    planes: &[i64],
    img: i64,
    classes: i64,
) -> ModelConfig {
    ModelConfig::Resnet(ResNetConfig {
        block,
        stem,
        stem_width: planes.first().copied().unwrap_or(64),
        layers: layers.to_vec(),
        planes: planes.to_vec(),
        image_size: img,
        in_channels: 3,
        num_classes: classes,
    })
}

/// GPT-2 (Hugging Face `GPT2LMHeadModel`): learned positions, LayerNorm,
/// GELU MLP of 4 × width, biases everywhere, LM head tied to the embedding.
pub(super) fn gpt2(
    vocab: i64,
    hidden: i64,
    layers: i64,
    heads: i64,
    context: i64,
    seq: i64,
) -> ModelConfig {
    ModelConfig::Decoder(DecoderConfig {
        vocab_size: vocab,
        hidden,
        layers,
        heads,
        kv_heads: heads,
        intermediate: 4 * hidden,
        max_position: context,
        seq_len: seq,
        norm: DecoderNorm::LayerNorm,
        mlp: DecoderMlp::Gelu,
        positions: DecoderPositions::Learned,
        bias: true,
        tie_embeddings: true,
        rope_theta: 0,
        dropout: true,
    })
}

/// A Llama-style decoder (Hugging Face `LlamaForCausalLM`): rotary
/// positions, RMSNorm, SwiGLU, grouped-query attention, no biases.
pub(super) struct Llama {
    pub(super) vocab: i64,
    pub(super) hidden: i64,
    pub(super) layers: i64,
    pub(super) heads: i64,
    pub(super) kv_heads: i64,
    pub(super) intermediate: i64,
    pub(super) context: i64,
    pub(super) seq: i64,
    pub(super) tied: bool,
    pub(super) theta: i64,
}

pub(super) fn llama(l: Llama) -> ModelConfig {
    ModelConfig::Decoder(DecoderConfig {
        vocab_size: l.vocab,
        hidden: l.hidden,
        layers: l.layers,
        heads: l.heads,
        kv_heads: l.kv_heads,
        intermediate: l.intermediate,
        max_position: l.context,
        seq_len: l.seq,
        norm: DecoderNorm::RmsNorm,
        mlp: DecoderMlp::SwiGlu,
        positions: DecoderPositions::Rotary,
        bias: false,
        tie_embeddings: l.tied,
        rope_theta: l.theta,
        dropout: false,
    })
}

pub(super) fn bert(hidden: i64, layers: i64, heads: i64, classes: i64) -> ModelConfig {
    ModelConfig::Bert(BertConfig {
        vocab_size: 30522,
        hidden,
        layers,
        heads,
        intermediate: 4 * hidden,
        max_position: 512,
        type_vocab: 2,
        seq_len: 128,
        num_classes: classes,
    })
}

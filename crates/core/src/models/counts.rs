//! Analytical parameter counts and FLOPs per training sample.

use super::{
    BertConfig, DecoderConfig, DecoderMlp, DecoderNorm, DecoderPositions, EncoderConfig, Family,
    ModelConfig, ResBlock, ResNetConfig, ResStem, VitConfig,
};

/// Output size of a convolution or pooling along one axis.
pub fn conv_out(size: i64, kernel: i64, stride: i64, pad: i64) -> i64 {
    (size + 2 * pad - kernel) / stride + 1
}

impl ModelConfig {
    pub fn family(&self) -> Family {
        match self {
            ModelConfig::Vit(_) => Family::Vit,
            ModelConfig::Resnet(_) => Family::Resnet,
            ModelConfig::Bert(_) => Family::Bert,
            ModelConfig::Decoder(_) => Family::Decoder,
            ModelConfig::Encoder(_) => Family::Encoder,
            ModelConfig::Library(_) => Family::Library,
            ModelConfig::File(_) => Family::File,
            ModelConfig::Script(_) => Family::Script,
        }
    }

    pub fn num_classes(&self) -> i64 {
        match self {
            ModelConfig::Vit(v) => v.num_classes,
            ModelConfig::Resnet(r) => r.num_classes,
            ModelConfig::Bert(b) => b.num_classes,
            // The softmax runs over the vocabulary.
            ModelConfig::Decoder(d) => d.vocab_size,
            ModelConfig::Encoder(e) => e.num_classes,
            ModelConfig::Library(l) => l.num_classes.unwrap_or(0),
            ModelConfig::File(f) => f.num_classes.or(f.vocab_size).unwrap_or(0),
            ModelConfig::Script(_) => 0,
        }
    }

    /// Trainable parameters, counted analytically (the whole model, head included).
    pub fn param_count(&self) -> u64 {
        let n = match self {
            ModelConfig::Vit(v) => vit_params(v),
            ModelConfig::Resnet(r) => resnet_params(r),
            ModelConfig::Bert(b) => bert_backbone_params(b) + bert_head_params(b),
            ModelConfig::Decoder(d) => decoder_params(d),
            ModelConfig::Encoder(e) => encoder_params(e),
            ModelConfig::Library(_) | ModelConfig::File(_) | ModelConfig::Script(_) => 0,
        };
        u64::try_from(n).unwrap_or(0)
    }

    /// Parameters of the classification head (the last linear layer; a
    /// decoder's LM head, none of its own when tied to the embedding).
    pub fn head_param_count(&self) -> u64 {
        if let ModelConfig::Decoder(d) = self {
            let own = if d.tie_embeddings {
                0
            } else {
                d.hidden * d.vocab_size
            };
            return u64::try_from(own).unwrap_or(0);
        }
        let (features, classes) = match self {
            ModelConfig::Vit(v) => (v.embed_dim, v.num_classes),
            ModelConfig::Resnet(r) => (
                r.planes.last().copied().unwrap_or(0) * r.expansion(),
                r.num_classes,
            ),
            ModelConfig::Bert(b) => (b.hidden, b.num_classes),
            ModelConfig::Encoder(e) => (e.hidden, e.num_classes),
            ModelConfig::Decoder(_)
            | ModelConfig::Library(_)
            | ModelConfig::File(_)
            | ModelConfig::Script(_) => (0, 0),
        };
        u64::try_from(features * classes + classes).unwrap_or(0)
    }

    /// Parameters without the classification head.
    pub fn backbone_param_count(&self) -> u64 {
        self.param_count() - self.head_param_count()
    }

    /// Multiply-accumulates of one forward pass of one sample.
    pub fn forward_macs(&self) -> u64 {
        let n = match self {
            ModelConfig::Vit(v) => vit_macs(v),
            ModelConfig::Resnet(r) => resnet_macs(r),
            ModelConfig::Bert(b) => bert_macs(b),
            ModelConfig::Decoder(d) => decoder_macs(d),
            ModelConfig::Encoder(e) => encoder_macs(e),
            ModelConfig::Library(_) | ModelConfig::File(_) | ModelConfig::Script(_) => 0,
        };
        u64::try_from(n).unwrap_or(0)
    }

    /// Analytical training FLOPs per sample: 6 × forward MACs (see module docs).
    ///
    /// A library model has none here: the worker counts them
    /// ([`ModelConfig::counted_by_worker`]).
    pub fn flops_per_sample(&self) -> f64 {
        6.0 * self.forward_macs() as f64
    }

    /// Whether the worker counts the parameters and FLOPs on the model it
    /// builds (a library or file model) instead of matching the analytical counts.
    pub fn counted_by_worker(&self) -> bool {
        matches!(
            self,
            ModelConfig::Library(_) | ModelConfig::File(_) | ModelConfig::Script(_)
        )
    }

    /// Tokens one sample trains on: a decoder's `seq_len` positions, each
    /// predicting the next token. `None` for models whose samples are not
    /// token sequences (tokens/s is then not a figure of the run).
    pub fn tokens_per_sample(&self) -> Option<u64> {
        match self {
            ModelConfig::Decoder(d) => u64::try_from(d.seq_len).ok(),
            ModelConfig::File(f) if f.num_classes.is_none() => {
                f.seq_len.and_then(|t| u64::try_from(t).ok())
            }
            _ => None,
        }
    }
}

fn vit_params(v: &VitConfig) -> i64 {
    let d = v.embed_dim;
    let m = v.mlp_hidden;
    let tokens = (v.image_size / v.patch_size).pow(2) + 1;
    let patch = v.in_channels * v.patch_size * v.patch_size * d + d;
    let block = 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + 2 * d + (d * m + m) + (m * d + d);
    patch + d + tokens * d + v.depth * block + 2 * d + (d * v.num_classes + v.num_classes)
}

fn vit_macs(v: &VitConfig) -> i64 {
    let d = v.embed_dim;
    let n = (v.image_size / v.patch_size).pow(2);
    let t = n + 1;
    let patch = n * d * v.in_channels * v.patch_size * v.patch_size;
    let block = t * d * 3 * d + 2 * t * t * d + t * d * d + 2 * t * d * v.mlp_hidden;
    patch + v.depth * block + d * v.num_classes
}

/// Walks the ResNet stage by stage, calling `conv(c_in, c_out, kernel, out_h, out_w)`
/// for every convolution, and returns the final channel count.
fn walk_resnet(r: &ResNetConfig, mut conv: impl FnMut(i64, i64, i64, i64)) -> i64 {
    let mut size = r.image_size;
    match r.stem {
        ResStem::Imagenet => {
            size = conv_out(size, 7, 2, 3);
            conv(r.in_channels * r.stem_width * 49, r.stem_width, size, 1);
            size = conv_out(size, 3, 2, 1);
        }
        ResStem::Small => {
            conv(r.in_channels * r.stem_width * 9, r.stem_width, size, 1);
        }
    }
    let exp = r.expansion();
    let mut inp = r.stem_width;
    for (stage, (&blocks, &planes)) in r.layers.iter().zip(&r.planes).enumerate() {
        for b in 0..blocks {
            let stride = if b == 0 {
                ResNetConfig::stage_stride(stage)
            } else {
                1
            };
            let out_size = conv_out(size, 3, stride, 1);
            match r.block {
                ResBlock::Basic => {
                    conv(inp * planes * 9, planes, out_size, 1);
                    conv(planes * planes * 9, planes, out_size, 1);
                }
                ResBlock::Bottleneck => {
                    conv(inp * planes, planes, size, 1);
                    conv(planes * planes * 9, planes, out_size, 1);
                    conv(planes * planes * exp, planes * exp, out_size, 1);
                }
            }
            if stride != 1 || inp != planes * exp {
                conv(inp * planes * exp, planes * exp, out_size, 1);
            }
            inp = planes * exp;
            size = out_size;
        }
    }
    inp
}

fn resnet_params(r: &ResNetConfig) -> i64 {
    // Every convolution is bias-free and followed by a batch norm (weight + bias).
    let mut total = 0;
    let last = walk_resnet(r, |weights, c_out, _size, _| total += weights + 2 * c_out);
    total + last * r.num_classes + r.num_classes
}

fn resnet_macs(r: &ResNetConfig) -> i64 {
    let mut total = 0;
    let last = walk_resnet(r, |weights, _c_out, size, _| total += weights * size * size);
    total + last * r.num_classes
}

fn bert_backbone_params(b: &BertConfig) -> i64 {
    let d = b.hidden;
    let i = b.intermediate;
    let embeddings = (b.vocab_size + b.max_position + b.type_vocab) * d + 2 * d;
    let layer = 4 * (d * d + d) + 2 * d + (d * i + i) + (i * d + d) + 2 * d;
    let pooler = d * d + d;
    embeddings + b.layers * layer + pooler
}

fn bert_head_params(b: &BertConfig) -> i64 {
    b.hidden * b.num_classes + b.num_classes
}

fn bert_macs(b: &BertConfig) -> i64 {
    let d = b.hidden;
    let t = b.seq_len;
    let layer = 4 * t * d * d + 2 * t * t * d + 2 * t * d * b.intermediate;
    b.layers * layer + d * d + d * b.num_classes
}

/// Parameters of one decoder layer's attention and feed-forward block, and
/// its two norms.
fn decoder_layer_params(c: &DecoderConfig) -> i64 {
    let d = c.hidden;
    let kv = c.kv_heads * c.head_dim();
    let b = i64::from(c.bias);
    let attention = (d * d + b * d) + 2 * (d * kv + b * kv) + (d * d + b * d);
    let i = c.intermediate;
    let mlp = match c.mlp {
        DecoderMlp::Gelu => (d * i + b * i) + (i * d + b * d),
        DecoderMlp::SwiGlu => 2 * (d * i + b * i) + (i * d + b * d),
    };
    attention + mlp + 2 * norm_params(c)
}

fn norm_params(c: &DecoderConfig) -> i64 {
    match c.norm {
        DecoderNorm::LayerNorm => 2 * c.hidden,
        DecoderNorm::RmsNorm => c.hidden,
    }
}

fn decoder_params(c: &DecoderConfig) -> i64 {
    let d = c.hidden;
    let positions = match c.positions {
        DecoderPositions::Learned => c.max_position * d,
        DecoderPositions::Rotary => 0,
    };
    let head = if c.tie_embeddings {
        0
    } else {
        d * c.vocab_size
    };
    c.vocab_size * d + positions + c.layers * decoder_layer_params(c) + norm_params(c) + head
}

/// Forward MACs of one sequence: every token through the projections and the
/// feed-forward block, the attention matmuls over the full T × T scores
/// (`QKᵀ` and the weighted sum of V, T·T·d each), and the LM head.
fn decoder_macs(c: &DecoderConfig) -> i64 {
    let (d, t) = (c.hidden, c.seq_len);
    let kv = c.kv_heads * c.head_dim();
    let projections = d * d + 2 * d * kv + d * d;
    let mlp = match c.mlp {
        DecoderMlp::Gelu => 2 * d * c.intermediate,
        DecoderMlp::SwiGlu => 3 * d * c.intermediate,
    };
    let layer = t * (projections + mlp) + 2 * t * t * d;
    c.layers * layer + t * d * c.vocab_size
}

/// One `nn.TransformerEncoderLayer`: the attention's packed in-projection
/// (3d² + 3d) and out-projection (d² + d), the feed-forward block (d·f + f,
/// f·d + d) and two LayerNorms (2 × 2d).
fn encoder_layer_params(e: &EncoderConfig) -> i64 {
    let (d, f) = (e.hidden, e.intermediate);
    (3 * d * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d) + 4 * d
}

fn encoder_params(e: &EncoderConfig) -> i64 {
    let d = e.hidden;
    e.vocab_size * d
        + e.max_position * d
        + e.layers * encoder_layer_params(e)
        + (d * e.num_classes + e.num_classes)
}

/// Per sample: per token and layer 4d² (projections) + 2df (feed-forward) +
/// 2Td (QKᵀ and the weighted sum of V), and the head on the pooled vector.
fn encoder_macs(e: &EncoderConfig) -> i64 {
    let (d, f, t) = (e.hidden, e.intermediate, e.seq_len);
    t * e.layers * (4 * d * d + 2 * d * f + 2 * t * d) + d * e.num_classes
}

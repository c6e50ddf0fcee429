//! The fraud-detection `FraudTransformer` of a published TensorFlow→PyTorch migration: token
//! embedding plus a learned position table, layers of PyTorch's
//! `nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.1,
//! batch_first=True)` — post-norm, ReLU, LayerNorm eps 1e-5, a packed
//! in-projection and an out-projection with biases, dropout on the attention
//! probabilities, after the attention and in and after the feed-forward
//! block — the mean over positions and a linear head (one logit: binary
//! cross-entropy in the loss). Names follow PyTorch's module.

use tch::nn::{self, ModuleT};
use tch::{Kind, Tensor};
use trainbench_core::models::EncoderConfig;

use super::{layer_norm, linear, InitMode};

const DROPOUT: f64 = 0.1;
const EPS: f64 = 1e-5;

#[derive(Debug)]
struct Layer {
    in_proj: nn::Linear,
    out_proj: nn::Linear,
    linear1: nn::Linear,
    linear2: nn::Linear,
    norm1: nn::LayerNorm,
    norm2: nn::LayerNorm,
    heads: i64,
}

impl Layer {
    fn new(p: &nn::Path, c: &EncoderConfig, init: InitMode) -> Self {
        let d = c.hidden;
        let a = p / "self_attn";
        Layer {
            in_proj: linear(&a / "in_proj", d, 3 * d, init, 0.02),
            out_proj: linear(&a / "out_proj", d, d, init, 0.02),
            linear1: linear(p / "linear1", d, c.intermediate, init, 0.02),
            linear2: linear(p / "linear2", c.intermediate, d, init, 0.02),
            norm1: layer_norm(p / "norm1", d, EPS, init),
            norm2: layer_norm(p / "norm2", d, EPS, init),
            heads: c.heads,
        }
    }

    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        let size = x.size();
        let (b, t, d) = (size[0], size[1], size[2]);
        let qkv = x
            .apply(&self.in_proj)
            .reshape([b, t, 3, self.heads, d / self.heads])
            .permute([2, 0, 3, 1, 4]);
        let a = Tensor::scaled_dot_product_attention(
            &qkv.get(0),
            &qkv.get(1),
            &qkv.get(2),
            None::<Tensor>,
            if train { DROPOUT } else { 0.0 },
            false,
            None,
            false,
        );
        let sa = a
            .transpose(1, 2)
            .reshape([b, t, d])
            .apply(&self.out_proj)
            .dropout(DROPOUT, train);
        let x = (x + sa).apply(&self.norm1);
        let ff = x
            .apply(&self.linear1)
            .relu()
            .dropout(DROPOUT, train)
            .apply(&self.linear2)
            .dropout(DROPOUT, train);
        (x + ff).apply(&self.norm2)
    }
}

#[derive(Debug)]
pub struct FraudTransformer {
    embedding: nn::Embedding,
    pos_encoder: nn::Embedding,
    layers: Vec<Layer>,
    fc: nn::Linear,
}

impl FraudTransformer {
    pub fn new(p: &nn::Path, c: &EncoderConfig, init: InitMode) -> Self {
        let d = c.hidden;
        let embedding = |name: &str, n: i64| {
            nn::embedding(
                p / name,
                n,
                d,
                nn::EmbeddingConfig {
                    ws_init: init.normal(1.0),
                    ..Default::default()
                },
            )
        };
        FraudTransformer {
            embedding: embedding("embedding", c.vocab_size),
            pos_encoder: embedding("pos_encoder", c.max_position),
            layers: (0..c.layers)
                .map(|i| Layer::new(&(p / "transformer" / "layers" / i), c, init))
                .collect(),
            fc: linear(p / "fc", d, c.num_classes, init, 0.02),
        }
    }
}

impl ModuleT for FraudTransformer {
    fn forward_t(&self, ids: &Tensor, train: bool) -> Tensor {
        let t = ids.size()[1];
        let positions = Tensor::arange(t, (Kind::Int64, ids.device())).unsqueeze(0);
        let mut x = ids.apply(&self.embedding) + positions.apply(&self.pos_encoder);
        for layer in &self.layers {
            x = layer.forward_t(&x, train);
        }
        x.mean_dim(Some([1i64].as_slice()), false, None::<Kind>)
            .apply(&self.fc)
    }
}

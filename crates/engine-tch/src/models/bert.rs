//! BERT as Hugging Face's `BertModel` (post-norm layers, LayerNorm eps 1e-12,
//! exact GELU, dropout 0.1 on embeddings, attention probabilities and residual
//! branches, tanh pooler on the first token) plus `BertForSequenceClassification`'s
//! head (dropout 0.1, linear). Inputs are token ids; every sequence is full
//! length, token type 0.

use tch::nn::{self, ModuleT};
use tch::{Kind, Tensor};
use trainbench_core::models::BertConfig;

use super::{layer_norm, linear, InitMode};

const DROPOUT: f64 = 0.1;
const EPS: f64 = 1e-12;

fn embedding(p: nn::Path, n: i64, d: i64, init: InitMode) -> nn::Embedding {
    nn::embedding(
        p,
        n,
        d,
        nn::EmbeddingConfig {
            ws_init: init.normal(0.02),
            ..Default::default()
        },
    )
}

#[derive(Debug)]
struct Layer {
    query: nn::Linear,
    key: nn::Linear,
    value: nn::Linear,
    attn_out: nn::Linear,
    attn_norm: nn::LayerNorm,
    intermediate: nn::Linear,
    output: nn::Linear,
    out_norm: nn::LayerNorm,
    heads: i64,
}

impl Layer {
    fn new(p: &nn::Path, c: &BertConfig, init: InitMode) -> Self {
        let d = c.hidden;
        let a = p / "attention";
        Layer {
            query: linear(&a / "self" / "query", d, d, init, 0.02),
            key: linear(&a / "self" / "key", d, d, init, 0.02),
            value: linear(&a / "self" / "value", d, d, init, 0.02),
            attn_out: linear(&a / "output" / "dense", d, d, init, 0.02),
            attn_norm: layer_norm(&a / "output" / "LayerNorm", d, EPS, init),
            intermediate: linear(p / "intermediate" / "dense", d, c.intermediate, init, 0.02),
            output: linear(p / "output" / "dense", c.intermediate, d, init, 0.02),
            out_norm: layer_norm(p / "output" / "LayerNorm", d, EPS, init),
            heads: c.heads,
        }
    }

    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        let size = x.size();
        let (b, t, d) = (size[0], size[1], size[2]);
        let split = |l: &nn::Linear| {
            x.apply(l)
                .reshape([b, t, self.heads, d / self.heads])
                .transpose(1, 2)
        };
        let dropout = if train { DROPOUT } else { 0.0 };
        let ctx = Tensor::scaled_dot_product_attention(
            &split(&self.query),
            &split(&self.key),
            &split(&self.value),
            None::<Tensor>,
            dropout,
            false,
            None,
            false,
        );
        let attn = ctx
            .transpose(1, 2)
            .reshape([b, t, d])
            .apply(&self.attn_out)
            .dropout(DROPOUT, train);
        let x = (attn + x).apply(&self.attn_norm);
        let ff = x
            .apply(&self.intermediate)
            .gelu("none")
            .apply(&self.output)
            .dropout(DROPOUT, train);
        (ff + x).apply(&self.out_norm)
    }
}

#[derive(Debug)]
pub struct BertClassifier {
    word: nn::Embedding,
    position: nn::Embedding,
    token_type: nn::Embedding,
    emb_norm: nn::LayerNorm,
    layers: Vec<Layer>,
    pooler: nn::Linear,
    classifier: nn::Linear,
}

impl BertClassifier {
    pub fn new(p: &nn::Path, c: &BertConfig, init: InitMode) -> Self {
        let bert = p / "bert";
        let e = &bert / "embeddings";
        let d = c.hidden;
        BertClassifier {
            word: embedding(&e / "word_embeddings", c.vocab_size, d, init),
            position: embedding(&e / "position_embeddings", c.max_position, d, init),
            token_type: embedding(&e / "token_type_embeddings", c.type_vocab, d, init),
            emb_norm: layer_norm(&e / "LayerNorm", d, EPS, init),
            layers: (0..c.layers)
                .map(|i| Layer::new(&(&bert / "encoder" / "layer" / i), c, init))
                .collect(),
            pooler: linear(&bert / "pooler" / "dense", d, d, init, 0.02),
            classifier: linear(p / "classifier", d, c.num_classes, init, 0.02),
        }
    }
}

impl ModuleT for BertClassifier {
    fn forward_t(&self, ids: &Tensor, train: bool) -> Tensor {
        let t = ids.size()[1];
        let positions = Tensor::arange(t, (Kind::Int64, ids.device())).unsqueeze(0);
        let types = ids.zeros_like();
        let mut x = (ids.apply(&self.word)
            + positions.apply(&self.position)
            + types.apply(&self.token_type))
        .apply(&self.emb_norm)
        .dropout(DROPOUT, train);
        for layer in &self.layers {
            x = layer.forward_t(&x, train);
        }
        let pooled = x.select(1, 0).apply(&self.pooler).tanh();
        pooled.dropout(DROPOUT, train).apply(&self.classifier)
    }
}

//! A decoder-only language model, the Python workers' `Decoder`: Hugging
//! Face's `GPT2LMHeadModel` (learned positions, LayerNorm, tanh GELU, biases,
//! tied head, dropout 0.1) or `LlamaForCausalLM` (rotary positions, RMSNorm,
//! SwiGLU, grouped-query attention, no biases) as the config says. Pre-norm
//! blocks; queries, keys and values from one fused projection, gate and up
//! fused; attention through libtorch's SDPA (`is_causal`, `enable_gqa`).
//! Returns logits over the vocabulary for every position.

use tch::nn::{self, Init, ModuleT};
use tch::{Kind, Tensor};
use trainbench_core::models::{DecoderConfig, DecoderMlp, DecoderNorm, DecoderPositions};

use super::InitMode;

const DROPOUT: f64 = 0.1;
const EPS: f64 = 1e-5;

fn dense(p: nn::Path, i: i64, o: i64, bias: bool, init: InitMode, std: f64) -> nn::Linear {
    nn::linear(
        p,
        i,
        o,
        nn::LinearConfig {
            ws_init: init.normal(std),
            bs_init: Some(Init::Const(0.0)),
            bias,
        },
    )
}

/// LayerNorm (weight and bias) or RMSNorm (weight), eps 1e-5.
#[derive(Debug)]
struct Norm {
    weight: Tensor,
    bias: Option<Tensor>,
    d: i64,
}

impl Norm {
    fn new(p: nn::Path, kind: DecoderNorm, d: i64, init: InitMode) -> Self {
        let weight = p.var("weight", &[d], init.ones());
        let bias = match kind {
            DecoderNorm::LayerNorm => Some(p.var("bias", &[d], Init::Const(0.0))),
            DecoderNorm::RmsNorm => None,
        };
        Norm { weight, bias, d }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        match &self.bias {
            Some(b) => x.layer_norm([self.d], Some(&self.weight), Some(b), EPS, true),
            None => x.rms_norm([self.d], Some(&self.weight), EPS),
        }
    }
}

/// `(cos, sin)` of rotary embeddings for positions `0..t`, `(t, head_dim)`,
/// in Hugging Face Llama's layout (the two halves of each head rotate together).
fn rotary_tables(t: i64, head_dim: i64, theta: f64, device: tch::Device) -> (Tensor, Tensor) {
    let opts = (Kind::Float, device);
    let inv = (Tensor::arange_start_step(0, head_dim, 2, opts) / head_dim as f64 * theta.ln())
        .exp()
        .reciprocal();
    let freqs = Tensor::arange(t, opts).outer(&inv);
    let emb = Tensor::cat(&[&freqs, &freqs], -1);
    (emb.cos(), emb.sin())
}

fn rotate_half(x: &Tensor) -> Tensor {
    let halves = x.chunk(2, -1);
    Tensor::cat(&[halves[1].neg(), halves[0].shallow_clone()], -1)
}

#[derive(Debug)]
struct Block {
    norm1: Norm,
    qkv: nn::Linear,
    o: nn::Linear,
    norm2: Norm,
    up: nn::Linear,
    down: nn::Linear,
    heads: i64,
    kv_heads: i64,
    swiglu: bool,
    dropout: f64,
}

impl Block {
    fn new(p: &nn::Path, c: &DecoderConfig, init: InitMode) -> Self {
        let d = c.hidden;
        let hd = c.head_dim();
        // GPT-2 scales the init of the projections into the residual stream.
        let out_std = match c.norm {
            DecoderNorm::LayerNorm => 0.02 / ((2 * c.layers) as f64).sqrt(),
            DecoderNorm::RmsNorm => 0.02,
        };
        let swiglu = c.mlp == DecoderMlp::SwiGlu;
        let i = c.intermediate;
        Block {
            norm1: Norm::new(p / "norm1", c.norm, d, init),
            qkv: dense(p / "qkv", d, d + 2 * c.kv_heads * hd, c.bias, init, 0.02),
            o: dense(p / "o", d, d, c.bias, init, out_std),
            norm2: Norm::new(p / "norm2", c.norm, d, init),
            up: dense(
                p / "up",
                d,
                if swiglu { 2 * i } else { i },
                c.bias,
                init,
                0.02,
            ),
            down: dense(p / "down", i, d, c.bias, init, out_std),
            heads: c.heads,
            kv_heads: c.kv_heads,
            swiglu,
            dropout: if c.dropout { DROPOUT } else { 0.0 },
        }
    }

    fn forward_t(&self, x: &Tensor, rope: Option<&(Tensor, Tensor)>, train: bool) -> Tensor {
        let size = x.size();
        let (b, t, d) = (size[0], size[1], size[2]);
        let hd = d / self.heads;
        let kv = self.kv_heads * hd;
        let qkv = self.norm1.forward(x).apply(&self.qkv);
        let parts = qkv.split_with_sizes([d, kv, kv], -1);
        let heads = |y: &Tensor, n: i64| y.reshape([b, t, n, hd]).transpose(1, 2);
        let mut q = heads(&parts[0], self.heads);
        let mut k = heads(&parts[1], self.kv_heads);
        let v = heads(&parts[2], self.kv_heads);
        if let Some((cos, sin)) = rope {
            let (cos, sin) = (cos.to_kind(q.kind()), sin.to_kind(q.kind()));
            q = &q * &cos + rotate_half(&q) * &sin;
            k = &k * &cos + rotate_half(&k) * &sin;
        }
        let a = Tensor::scaled_dot_product_attention(
            &q,
            &k,
            &v,
            None::<Tensor>,
            if train { self.dropout } else { 0.0 },
            true,
            None,
            self.kv_heads != self.heads,
        );
        let x = x + a
            .transpose(1, 2)
            .reshape([b, t, d])
            .apply(&self.o)
            .dropout(self.dropout, train);
        let mut y = self.norm2.forward(&x).apply(&self.up);
        y = if self.swiglu {
            let gu = y.chunk(2, -1);
            gu[0].silu() * &gu[1]
        } else {
            y.gelu("tanh")
        };
        x + y.apply(&self.down).dropout(self.dropout, train)
    }
}

#[derive(Debug)]
pub struct Decoder {
    embed: Tensor,
    pos: Option<Tensor>,
    blocks: Vec<Block>,
    norm: Norm,
    head: Option<Tensor>,
    rotary: Option<(i64, f64)>,
    dropout: f64,
}

impl Decoder {
    pub fn new(p: &nn::Path, c: &DecoderConfig, init: InitMode) -> Self {
        let d = c.hidden;
        Decoder {
            // The PyTorch worker's names (`embed.weight`, `blocks.0.qkv.bias`, …),
            // so that its weights load by name (`parity`).
            embed: (p / "embed").var("weight", &[c.vocab_size, d], init.normal(0.02)),
            pos: (c.positions == DecoderPositions::Learned)
                .then(|| (p / "pos").var("weight", &[c.max_position, d], init.normal(0.02))),
            blocks: (0..c.layers)
                .map(|i| Block::new(&(p / "blocks" / i), c, init))
                .collect(),
            norm: Norm::new(p / "norm", c.norm, d, init),
            head: (!c.tie_embeddings)
                .then(|| (p / "head").var("weight", &[c.vocab_size, d], init.normal(0.02))),
            rotary: (c.positions == DecoderPositions::Rotary)
                .then_some((c.head_dim(), c.rope_theta as f64)),
            dropout: if c.dropout { DROPOUT } else { 0.0 },
        }
    }
}

impl ModuleT for Decoder {
    fn forward_t(&self, ids: &Tensor, train: bool) -> Tensor {
        let t = ids.size()[1];
        let mut x = Tensor::embedding(&self.embed, ids, -1, false, false);
        if let Some(pos) = &self.pos {
            let positions = Tensor::arange(t, (Kind::Int64, ids.device()));
            x += Tensor::embedding(pos, &positions, -1, false, false);
        }
        x = x.dropout(self.dropout, train);
        let rope = self
            .rotary
            .map(|(hd, theta)| rotary_tables(t, hd, theta, ids.device()));
        for block in &self.blocks {
            x = block.forward_t(&x, rope.as_ref(), train);
        }
        let x = self.norm.forward(&x);
        x.linear(self.head.as_ref().unwrap_or(&self.embed), None::<Tensor>)
    }
}

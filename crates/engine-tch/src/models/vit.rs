//! Vision Transformer as timm's `VisionTransformer` at its defaults: conv patch
//! embedding, class token, learned position embedding, pre-norm blocks
//! (LayerNorm eps 1e-6, fused qkv with bias, exact GELU), final norm, linear head
//! on the class token.

use tch::nn::{self, ModuleT};
use tch::Tensor;
use trainbench_core::models::VitConfig;

use super::{layer_norm, linear, InitMode};

#[derive(Debug)]
struct Block {
    norm1: nn::LayerNorm,
    qkv: nn::Linear,
    proj: nn::Linear,
    norm2: nn::LayerNorm,
    fc1: nn::Linear,
    fc2: nn::Linear,
    heads: i64,
}

impl Block {
    fn new(p: &nn::Path, c: &VitConfig, init: InitMode) -> Self {
        let d = c.embed_dim;
        Block {
            norm1: layer_norm(p / "norm1", d, 1e-6, init),
            qkv: linear(p / "attn" / "qkv", d, 3 * d, init, 0.02),
            proj: linear(p / "attn" / "proj", d, d, init, 0.02),
            norm2: layer_norm(p / "norm2", d, 1e-6, init),
            fc1: linear(p / "mlp" / "fc1", d, c.mlp_hidden, init, 0.02),
            fc2: linear(p / "mlp" / "fc2", c.mlp_hidden, d, init, 0.02),
            heads: c.num_heads,
        }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        let size = x.size();
        let (b, t, d) = (size[0], size[1], size[2]);
        let qkv = x
            .apply(&self.norm1)
            .apply(&self.qkv)
            .reshape([b, t, 3, self.heads, d / self.heads])
            .permute([2, 0, 3, 1, 4]);
        // unbind, as timm and the PyTorch worker: its backward is one stack,
        // where indexing's is a zero-filled copy of the projection per part.
        let qkv = qkv.unbind(0);
        let attn = Tensor::scaled_dot_product_attention(
            &qkv[0],
            &qkv[1],
            &qkv[2],
            None::<Tensor>,
            0.0,
            false,
            None,
            false,
        );
        let x = x + attn.transpose(1, 2).reshape([b, t, d]).apply(&self.proj);
        let mlp = x
            .apply(&self.norm2)
            .apply(&self.fc1)
            .gelu("none")
            .apply(&self.fc2);
        x + mlp
    }
}

#[derive(Debug)]
pub struct Vit {
    patch: nn::Conv2D,
    cls_token: Tensor,
    pos_embed: Tensor,
    blocks: Vec<Block>,
    norm: nn::LayerNorm,
    head: nn::Linear,
}

impl Vit {
    pub fn new(p: &nn::Path, c: &VitConfig, init: InitMode) -> Self {
        let d = c.embed_dim;
        let tokens = (c.image_size / c.patch_size).pow(2) + 1;
        let patch = nn::conv2d(
            p / "patch_embed" / "proj",
            c.in_channels,
            d,
            c.patch_size,
            nn::ConvConfig {
                stride: c.patch_size,
                ws_init: init.normal(0.02),
                bs_init: tch::nn::Init::Const(0.0),
                ..Default::default()
            },
        );
        let cls_token = p.var("cls_token", &[1, 1, d], init.normal(1e-6));
        let pos_embed = p.var("pos_embed", &[1, tokens, d], init.normal(0.02));
        let blocks = (0..c.depth)
            .map(|i| Block::new(&(p / "blocks" / i), c, init))
            .collect();
        Vit {
            patch,
            cls_token,
            pos_embed,
            blocks,
            norm: layer_norm(p / "norm", d, 1e-6, init),
            head: linear(p / "head", d, c.num_classes, init, 0.02),
        }
    }
}

impl ModuleT for Vit {
    fn forward_t(&self, xs: &Tensor, _train: bool) -> Tensor {
        let x = xs.apply(&self.patch).flatten(2, -1).transpose(1, 2);
        let b = x.size()[0];
        let cls = self.cls_token.expand([b, -1, -1], false);
        let mut x = Tensor::cat(&[cls, x], 1) + &self.pos_embed;
        for block in &self.blocks {
            x = block.forward(&x);
        }
        x.apply(&self.norm).select(1, 0).apply(&self.head)
    }
}

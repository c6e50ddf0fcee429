//! ResNet as torchvision's (v1.5: the stride sits on the 3×3 convolution of a
//! bottleneck; bias-free convolutions, batch norm eps 1e-5 momentum 0.1,
//! Kaiming-normal fan-out init), plus a small-image stem for CPU variants.

use tch::nn::{self, ModuleT};
use tch::Tensor;
use trainbench_core::models::{ResBlock, ResNetConfig, ResStem};

use super::InitMode;

fn conv(p: nn::Path, i: i64, o: i64, k: i64, stride: i64, init: InitMode) -> nn::Conv2D {
    nn::conv2d(
        p,
        i,
        o,
        k,
        nn::ConvConfig {
            stride,
            padding: k / 2,
            bias: false,
            ws_init: init.kaiming(),
            ..Default::default()
        },
    )
}

fn bn(p: nn::Path, c: i64, init: InitMode) -> nn::BatchNorm {
    nn::batch_norm2d(
        p,
        c,
        nn::BatchNormConfig {
            ws_init: init.ones(),
            ..Default::default()
        },
    )
}

#[derive(Debug)]
struct ConvBn {
    conv: nn::Conv2D,
    bn: nn::BatchNorm,
}

impl ConvBn {
    fn new(p: &nn::Path, name: &str, i: i64, o: i64, k: i64, stride: i64, init: InitMode) -> Self {
        // torchvision's names: conv1/bn1 …, and downsample.0 / downsample.1.
        let (cp, bp) = match name {
            "downsample" => (p / "downsample" / 0, p / "downsample" / 1),
            n => (p / format!("conv{n}"), p / format!("bn{n}")),
        };
        ConvBn {
            conv: conv(cp, i, o, k, stride, init),
            bn: bn(bp, o, init),
        }
    }

    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        x.apply(&self.conv).apply_t(&self.bn, train)
    }
}

#[derive(Debug)]
struct Block {
    convs: Vec<ConvBn>,
    downsample: Option<ConvBn>,
}

impl Block {
    fn new(
        p: &nn::Path,
        kind: ResBlock,
        inp: i64,
        planes: i64,
        stride: i64,
        init: InitMode,
    ) -> Self {
        let convs = match kind {
            ResBlock::Basic => vec![
                ConvBn::new(p, "1", inp, planes, 3, stride, init),
                ConvBn::new(p, "2", planes, planes, 3, 1, init),
            ],
            ResBlock::Bottleneck => vec![
                ConvBn::new(p, "1", inp, planes, 1, 1, init),
                ConvBn::new(p, "2", planes, planes, 3, stride, init),
                ConvBn::new(p, "3", planes, planes * 4, 1, 1, init),
            ],
        };
        let out = match kind {
            ResBlock::Basic => planes,
            ResBlock::Bottleneck => planes * 4,
        };
        let downsample = (stride != 1 || inp != out)
            .then(|| ConvBn::new(p, "downsample", inp, out, 1, stride, init));
        Block { convs, downsample }
    }

    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        let last = self.convs.len() - 1;
        let mut y = x.shallow_clone();
        for (i, c) in self.convs.iter().enumerate() {
            y = c.forward_t(&y, train);
            if i != last {
                y = y.relu();
            }
        }
        let identity = match &self.downsample {
            Some(d) => d.forward_t(x, train),
            None => x.shallow_clone(),
        };
        (y + identity).relu()
    }
}

#[derive(Debug)]
pub struct ResNet {
    stem: ConvBn,
    stem_pool: bool,
    blocks: Vec<Block>,
    fc: nn::Linear,
}

impl ResNet {
    pub fn new(p: &nn::Path, c: &ResNetConfig, init: InitMode) -> Self {
        let (k, stride, stem_pool) = match c.stem {
            ResStem::Imagenet => (7, 2, true),
            ResStem::Small => (3, 1, false),
        };
        let stem = ConvBn::new(p, "1", c.in_channels, c.stem_width, k, stride, init);
        let mut inp = c.stem_width;
        let mut blocks = Vec::new();
        for (stage, (&n, &planes)) in c.layers.iter().zip(&c.planes).enumerate() {
            let lp = p / format!("layer{}", stage + 1).as_str();
            for b in 0..n {
                let stride = if b == 0 {
                    ResNetConfig::stage_stride(stage)
                } else {
                    1
                };
                blocks.push(Block::new(&(&lp / b), c.block, inp, planes, stride, init));
                inp = planes * c.expansion();
            }
        }
        // torchvision's fc keeps nn.Linear's default init (uniform ±1/√fan_in).
        let bound = 1.0 / (inp as f64).sqrt();
        let fc_init = match init {
            InitMode::Reference => nn::Init::Uniform {
                lo: -bound,
                up: bound,
            },
            InitMode::Zeros => nn::Init::Const(0.0),
        };
        let fc = nn::linear(
            p / "fc",
            inp,
            c.num_classes,
            nn::LinearConfig {
                ws_init: fc_init,
                bs_init: Some(fc_init),
                bias: true,
            },
        );
        ResNet {
            stem,
            stem_pool,
            blocks,
            fc,
        }
    }
}

impl ModuleT for ResNet {
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        let mut x = self.stem.forward_t(xs, train).relu();
        if self.stem_pool {
            x = x.max_pool2d([3, 3], [2, 2], [1, 1], [1, 1], false);
        }
        for b in &self.blocks {
            x = b.forward_t(&x, train);
        }
        x.adaptive_avg_pool2d([1, 1]).flatten(1, -1).apply(&self.fc)
    }
}

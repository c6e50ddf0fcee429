//! The model catalogue: architectures by name, their options, and analytical
//! parameter counts and FLOPs.
//!
//! Reference implementations: timm for ViT (1000 classes, class token, pre-norm
//! blocks), torchvision for ResNet (v1.5: stride on the 3×3 convolution), Hugging
//! Face `BertModel` (pooler included) plus a linear sequence-classification head.
//!
//! FLOPs convention (stated in `docs/metrics.md`): only multiply-accumulates of
//! convolutions, linear layers and attention matmuls are counted; one MAC is two
//! FLOPs; a training step costs three forward passes (forward + backward of inputs
//! and weights). So `flops_per_sample = 6 × forward MACs`.

use serde::{Deserialize, Serialize};

use crate::spec::SpecError;

/// Options a run may override; `None` keeps the model's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelOptions {
    pub num_classes: Option<i64>,
    pub image_size: Option<i64>,
    pub in_channels: Option<i64>,
    pub seq_len: Option<i64>,
    pub vocab_size: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Vit,
    Resnet,
    Bert,
}

impl Family {
    /// Whether the model takes images (and so image data sets).
    pub fn is_image(self) -> bool {
        matches!(self, Family::Vit | Family::Resnet)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResBlock {
    /// Two 3×3 convolutions (ResNet-18/34).
    Basic,
    /// 1×1, 3×3, 1×1 with expansion 4 (ResNet-50 and up).
    Bottleneck,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResStem {
    /// 7×7 stride-2 convolution, batch norm, ReLU, 3×3 stride-2 max pool.
    Imagenet,
    /// 3×3 stride-1 convolution, batch norm, ReLU; no pooling (small images).
    Small,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum ModelConfig {
    Vit(VitConfig),
    Resnet(ResNetConfig),
    Bert(BertConfig),
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
    /// only for BERT: `BertModel` with pooler, without the classification head).
    pub reference_params: Option<u64>,
    /// Whether the reference count includes the classification head. timm's
    /// `vit_huge_patch14_224` defaults to its headless MIM-pretrained config
    /// (`num_classes=0`), and the BERT reference is `BertModel` without a head.
    pub reference_includes_head: bool,
    build: fn() -> ModelConfig,
}

fn vit(
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

fn resnet(
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

fn bert(hidden: i64, layers: i64, heads: i64, classes: i64) -> ModelConfig {
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

/// Every model the studio knows, in the order the wizard lists them.
pub const CATALOG: &[CatalogEntry] = &[
    CatalogEntry {
        name: "vit_tiny_patch16_224",
        family: Family::Vit,
        cpu_friendly: false,
        summary: "ViT-Ti/16, 224 px (timm)",
        reference_params: Some(5_717_416),
        reference_includes_head: true,
        build: || vit(16, 192, 12, 3, 768, 224, 1000),
    },
    CatalogEntry {
        name: "vit_small_patch16_224",
        family: Family::Vit,
        cpu_friendly: false,
        summary: "ViT-S/16, 224 px (timm)",
        reference_params: Some(22_050_664),
        reference_includes_head: true,
        build: || vit(16, 384, 12, 6, 1536, 224, 1000),
    },
    CatalogEntry {
        name: "vit_base_patch16_224",
        family: Family::Vit,
        cpu_friendly: false,
        summary: "ViT-B/16, 224 px (timm)",
        reference_params: Some(86_567_656),
        reference_includes_head: true,
        build: || vit(16, 768, 12, 12, 3072, 224, 1000),
    },
    CatalogEntry {
        name: "vit_large_patch16_224",
        family: Family::Vit,
        cpu_friendly: false,
        summary: "ViT-L/16, 224 px (timm)",
        reference_params: Some(304_326_632),
        reference_includes_head: true,
        build: || vit(16, 1024, 24, 16, 4096, 224, 1000),
    },
    CatalogEntry {
        name: "vit_huge_patch14_224",
        family: Family::Vit,
        cpu_friendly: false,
        summary: "ViT-H/14, 224 px (timm)",
        reference_params: Some(630_764_800),
        reference_includes_head: false,
        build: || vit(14, 1280, 32, 16, 5120, 224, 1000),
    },
    CatalogEntry {
        name: "vit_giant_patch14_224",
        family: Family::Vit,
        cpu_friendly: false,
        summary: "ViT-g/14, 224 px (timm; MLP ratio 48/11)",
        reference_params: Some(1_012_611_432),
        reference_includes_head: true,
        build: || vit(14, 1408, 40, 16, 6144, 224, 1000),
    },
    CatalogEntry {
        name: "vit_gigantic_patch14_224",
        family: Family::Vit,
        cpu_friendly: false,
        summary: "ViT-G/14, 224 px (timm; MLP ratio 64/13)",
        reference_params: Some(1_844_440_680),
        reference_includes_head: true,
        build: || vit(14, 1664, 48, 16, 8192, 224, 1000),
    },
    CatalogEntry {
        name: "vit_mini_patch4_32",
        family: Family::Vit,
        cpu_friendly: true,
        summary: "small ViT for 28–32 px images (patch 4, width 96, depth 4, 3 heads)",
        reference_params: None,
        reference_includes_head: true,
        build: || vit(4, 96, 4, 3, 384, 32, 10),
    },
    CatalogEntry {
        name: "resnet18",
        family: Family::Resnet,
        cpu_friendly: false,
        summary: "ResNet-18 (torchvision)",
        reference_params: Some(11_689_512),
        reference_includes_head: true,
        build: || {
            resnet(
                ResBlock::Basic,
                ResStem::Imagenet,
                &[2, 2, 2, 2],
                &[64, 128, 256, 512],
                224,
                1000,
            )
        },
    },
    CatalogEntry {
        name: "resnet50",
        family: Family::Resnet,
        cpu_friendly: false,
        summary: "ResNet-50 v1.5 (torchvision)",
        reference_params: Some(25_557_032),
        reference_includes_head: true,
        build: || {
            resnet(
                ResBlock::Bottleneck,
                ResStem::Imagenet,
                &[3, 4, 6, 3],
                &[64, 128, 256, 512],
                224,
                1000,
            )
        },
    },
    CatalogEntry {
        name: "resnet_mini",
        family: Family::Resnet,
        cpu_friendly: true,
        summary: "small ResNet for 28–32 px images (basic blocks, widths 16/32/64)",
        reference_params: None,
        reference_includes_head: true,
        build: || {
            resnet(
                ResBlock::Basic,
                ResStem::Small,
                &[1, 1, 1],
                &[16, 32, 64],
                32,
                10,
            )
        },
    },
    CatalogEntry {
        name: "bert_base_uncased",
        family: Family::Bert,
        cpu_friendly: false,
        summary: "BERT-base uncased encoder (Hugging Face BertModel) + classification head",
        reference_params: Some(109_482_240),
        reference_includes_head: false,
        build: || bert(768, 12, 12, 2),
    },
    CatalogEntry {
        name: "bert_large_uncased",
        family: Family::Bert,
        cpu_friendly: false,
        summary: "BERT-large uncased encoder (Hugging Face BertModel) + classification head",
        reference_params: Some(335_141_888),
        reference_includes_head: false,
        build: || bert(1024, 24, 16, 2),
    },
    CatalogEntry {
        name: "bert_tiny",
        family: Family::Bert,
        cpu_friendly: true,
        summary: "2-layer BERT (hidden 128, 2 heads) + classification head",
        reference_params: None,
        reference_includes_head: false,
        build: || bert(128, 2, 2, 2),
    },
];

/// Names of every catalogued model, for error messages and listings.
pub fn model_names() -> Vec<&'static str> {
    CATALOG.iter().map(|e| e.name).collect()
}

pub fn lookup(name: &str) -> Option<&'static CatalogEntry> {
    CATALOG.iter().find(|e| e.name == name)
}

fn positive(field: &str, value: i64, what: &str) -> Result<i64, SpecError> {
    if value >= 1 {
        Ok(value)
    } else {
        Err(SpecError::new(field, value, what))
    }
}

fn not_for(field: &str, value: i64, model: &str) -> SpecError {
    SpecError::new(field, value, &format!("not an option of model {model}"))
}

impl CatalogEntry {
    /// The architecture at its defaults.
    pub fn default_config(&self) -> ModelConfig {
        (self.build)()
    }

    /// The architecture with `opts` applied, or an error naming the option.
    pub fn config(&self, opts: &ModelOptions) -> Result<ModelConfig, SpecError> {
        let mut cfg = self.default_config();
        match &mut cfg {
            ModelConfig::Vit(v) => {
                if let Some(n) = opts.num_classes {
                    v.num_classes = positive("num_classes", n, "a whole number ≥ 1")?;
                }
                if let Some(c) = opts.in_channels {
                    v.in_channels = positive("in_channels", c, "a whole number ≥ 1")?;
                }
                if let Some(s) = opts.image_size {
                    v.image_size = positive("image_size", s, "a whole number ≥ 1")?;
                }
                if v.image_size % v.patch_size != 0 {
                    return Err(SpecError::new(
                        "image_size",
                        v.image_size,
                        &format!(
                            "a multiple of the patch size {} of {}",
                            v.patch_size, self.name
                        ),
                    ));
                }
                if let Some(x) = opts.seq_len {
                    return Err(not_for("seq_len", x, self.name));
                }
                if let Some(x) = opts.vocab_size {
                    return Err(not_for("vocab_size", x, self.name));
                }
            }
            ModelConfig::Resnet(r) => {
                if let Some(n) = opts.num_classes {
                    r.num_classes = positive("num_classes", n, "a whole number ≥ 1")?;
                }
                if let Some(c) = opts.in_channels {
                    r.in_channels = positive("in_channels", c, "a whole number ≥ 1")?;
                }
                if let Some(s) = opts.image_size {
                    let min = match r.stem {
                        ResStem::Imagenet => 32,
                        ResStem::Small => 8,
                    };
                    if s < min {
                        return Err(SpecError::new(
                            "image_size",
                            s,
                            &format!("at least {min} px for {}", self.name),
                        ));
                    }
                    r.image_size = s;
                }
                if let Some(x) = opts.seq_len {
                    return Err(not_for("seq_len", x, self.name));
                }
                if let Some(x) = opts.vocab_size {
                    return Err(not_for("vocab_size", x, self.name));
                }
            }
            ModelConfig::Bert(b) => {
                if let Some(n) = opts.num_classes {
                    b.num_classes = positive("num_classes", n, "a whole number ≥ 1")?;
                }
                if let Some(v) = opts.vocab_size {
                    b.vocab_size = positive("vocab_size", v, "a whole number ≥ 1")?;
                }
                if let Some(t) = opts.seq_len {
                    if !(1..=b.max_position).contains(&t) {
                        return Err(SpecError::new(
                            "seq_len",
                            t,
                            &format!("1 to {} (the model's position table)", b.max_position),
                        ));
                    }
                    b.seq_len = t;
                }
                if let Some(x) = opts.image_size {
                    return Err(not_for("image_size", x, self.name));
                }
                if let Some(x) = opts.in_channels {
                    return Err(not_for("in_channels", x, self.name));
                }
            }
        }
        Ok(cfg)
    }
}

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
        }
    }

    pub fn num_classes(&self) -> i64 {
        match self {
            ModelConfig::Vit(v) => v.num_classes,
            ModelConfig::Resnet(r) => r.num_classes,
            ModelConfig::Bert(b) => b.num_classes,
        }
    }

    /// Trainable parameters, counted analytically (the whole model, head included).
    pub fn param_count(&self) -> u64 {
        let n = match self {
            ModelConfig::Vit(v) => vit_params(v),
            ModelConfig::Resnet(r) => resnet_params(r),
            ModelConfig::Bert(b) => bert_backbone_params(b) + bert_head_params(b),
        };
        u64::try_from(n).unwrap_or(0)
    }

    /// Parameters of the classification head (the last linear layer).
    pub fn head_param_count(&self) -> u64 {
        let (features, classes) = match self {
            ModelConfig::Vit(v) => (v.embed_dim, v.num_classes),
            ModelConfig::Resnet(r) => (
                r.planes.last().copied().unwrap_or(0) * r.expansion(),
                r.num_classes,
            ),
            ModelConfig::Bert(b) => (b.hidden, b.num_classes),
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
        };
        u64::try_from(n).unwrap_or(0)
    }

    /// Analytical training FLOPs per sample: 6 × forward MACs (see module docs).
    pub fn flops_per_sample(&self) -> f64 {
        6.0 * self.forward_macs() as f64
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analytical_counts_match_the_reference_implementations() {
        for entry in CATALOG {
            if let Some(reference) = entry.reference_params {
                let cfg = entry.default_config();
                let counted = if entry.reference_includes_head {
                    cfg.param_count()
                } else {
                    cfg.backbone_param_count()
                };
                assert_eq!(counted, reference, "{}", entry.name);
            }
        }
    }

    #[test]
    fn counts_follow_the_class_count() {
        let e = lookup("resnet50").unwrap();
        let opts = ModelOptions {
            num_classes: Some(10),
            ..Default::default()
        };
        let cfg = e.config(&opts).unwrap();
        assert_eq!(cfg.param_count(), 25_557_032 - 2048 * 990 - 990);
        let b = lookup("bert_base_uncased").unwrap().default_config();
        assert_eq!(b.param_count(), 109_482_240 + 768 * 2 + 2);
    }

    #[test]
    fn flops_match_published_gmacs() {
        // ViT-B/16 17.58 GMACs, ResNet-50 4.11 GMACs (published; they also count a
        // few small non-matmul ops, hence the 1 % tolerance).
        let vit = lookup("vit_base_patch16_224").unwrap().default_config();
        let rel = (vit.forward_macs() as f64 / 17.58e9 - 1.0).abs();
        assert!(rel < 0.01, "vit macs {}", vit.forward_macs());
        let rn = lookup("resnet50").unwrap().default_config();
        let rel = (rn.forward_macs() as f64 / 4.11e9 - 1.0).abs();
        assert!(rel < 0.01, "resnet macs {}", rn.forward_macs());
    }

    #[test]
    fn bad_options_name_the_field() {
        let e = lookup("vit_base_patch16_224").unwrap();
        let err = e
            .config(&ModelOptions {
                image_size: Some(28),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(err.field, "image_size");
        let err = e
            .config(&ModelOptions {
                seq_len: Some(28),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(err.field, "seq_len");
        let b = lookup("bert_tiny").unwrap();
        let err = b
            .config(&ModelOptions {
                seq_len: Some(513),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(err.field, "seq_len");
        let err = b
            .config(&ModelOptions {
                num_classes: Some(0),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(err.field, "num_classes");
    }
}

//! The catalogue: every model by name, with its defaults and the options a
//! run may change.

use super::builders::{bert, fraud, gpt2, llama, resnet, vit, Llama};
use super::{
    BertConfig, CatalogEntry, DecoderConfig, EncoderConfig, Family, ModelConfig, ModelOptions,
    ResBlock, ResNetConfig, ResStem, VitConfig,
};
use crate::error::SpecError;

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
        name: "gpt2_small",
        family: Family::Decoder,
        cpu_friendly: false,
        summary: "GPT-2 small (124M; Hugging Face GPT2LMHeadModel, tied LM head), seq 1024",
        reference_params: Some(124_439_808),
        reference_includes_head: true,
        build: || gpt2(50257, 768, 12, 12, 1024, 1024),
    },
    CatalogEntry {
        name: "gpt2_medium",
        family: Family::Decoder,
        cpu_friendly: false,
        summary: "GPT-2 medium (355M; Hugging Face GPT2LMHeadModel, tied LM head), seq 1024",
        reference_params: Some(354_823_168),
        reference_includes_head: true,
        build: || gpt2(50257, 1024, 24, 16, 1024, 1024),
    },
    CatalogEntry {
        name: "llama_135m",
        family: Family::Decoder,
        cpu_friendly: false,
        summary: "Llama-style 135M (SmolLM-135M's shape: 30 layers, width 576, 9 heads / 3 KV heads, tied), seq 2048",
        reference_params: Some(134_515_008),
        reference_includes_head: true,
        build: || {
            llama(Llama {
                vocab: 49152,
                hidden: 576,
                layers: 30,
                heads: 9,
                kv_heads: 3,
                intermediate: 1536,
                context: 2048,
                seq: 2048,
                tied: true,
                theta: 10_000,
            })
        },
    },
    CatalogEntry {
        name: "tinyllama_1_1b",
        family: Family::Decoder,
        cpu_friendly: false,
        summary: "TinyLlama 1.1B (22 layers, width 2048, 32 heads / 4 KV heads), seq 2048",
        reference_params: Some(1_100_048_384),
        reference_includes_head: true,
        build: || {
            llama(Llama {
                vocab: 32000,
                hidden: 2048,
                layers: 22,
                heads: 32,
                kv_heads: 4,
                intermediate: 5632,
                context: 2048,
                seq: 2048,
                tied: false,
                theta: 10_000,
            })
        },
    },
    CatalogEntry {
        name: "llama3_2_1b",
        family: Family::Decoder,
        cpu_friendly: false,
        summary: "Llama 3.2 1B (16 layers, width 2048, 32 heads / 8 KV heads, tied), seq 2048",
        reference_params: Some(1_235_814_400),
        reference_includes_head: true,
        build: || {
            llama(Llama {
                vocab: 128_256,
                hidden: 2048,
                layers: 16,
                heads: 32,
                kv_heads: 8,
                intermediate: 8192,
                context: 131_072,
                seq: 2048,
                tied: true,
                theta: 500_000,
            })
        },
    },
    CatalogEntry {
        name: "llama3_8b",
        family: Family::Decoder,
        cpu_friendly: false,
        summary: "Llama 3 8B (32 layers, width 4096, 32 heads / 8 KV heads), seq 2048",
        reference_params: Some(8_030_261_248),
        reference_includes_head: true,
        build: || {
            llama(Llama {
                vocab: 128_256,
                hidden: 4096,
                layers: 32,
                heads: 32,
                kv_heads: 8,
                intermediate: 14336,
                context: 8192,
                seq: 2048,
                tied: false,
                theta: 500_000,
            })
        },
    },
    CatalogEntry {
        name: "gpt2_tiny",
        family: Family::Decoder,
        cpu_friendly: true,
        summary: "2-layer GPT-2 (width 128, 2 heads) over bytes (vocabulary 256), seq 128",
        reference_params: None,
        reference_includes_head: true,
        build: || gpt2(256, 128, 2, 2, 128, 128),
    },
    CatalogEntry {
        name: "llama_tiny",
        family: Family::Decoder,
        cpu_friendly: true,
        summary: "2-layer Llama-style decoder (width 128, 4 heads / 2 KV heads, SwiGLU 352) over bytes, seq 128",
        reference_params: None,
        reference_includes_head: true,
        build: || {
            llama(Llama {
                vocab: 256,
                hidden: 128,
                layers: 2,
                heads: 4,
                kv_heads: 2,
                intermediate: 352,
                context: 2048,
                seq: 128,
                tied: false,
                theta: 10_000,
            })
        },
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
    CatalogEntry {
        name: "fraud_transformer_354m",
        family: Family::Encoder,
        cpu_friendly: false,
        summary: "a published fraud-detection encoder (FraudTransformer) as its code defines it: 24 × nn.TransformerEncoderLayer(1024, 16 heads, ff 4096), vocabulary 50,000, 512 positions, mean pool, one logit — 354,034,689 parameters, not the 1.2 B its write-up states",
        reference_params: Some(354_034_689),
        reference_includes_head: true,
        build: || fraud(50_000, 1024, 16, 24, 4096, 512),
    },
    CatalogEntry {
        name: "fraud_transformer_1b",
        family: Family::Encoder,
        cpu_friendly: false,
        summary: "that FraudTransformer at the size its write-up states: width 2048, 16 heads, ff 8192, 24 layers (1.21 B in the encoder layers, 1.31 B with the 50,000-token embedding)",
        reference_params: Some(1_312_049_153),
        reference_includes_head: true,
        build: || fraud(50_000, 2048, 16, 24, 8192, 512),
    },
    CatalogEntry {
        name: "fraud_transformer_tiny",
        family: Family::Encoder,
        cpu_friendly: true,
        summary: "2-layer FraudTransformer (width 64, 4 heads, ff 256, vocabulary 1,000, 64 positions, one logit)",
        reference_params: None,
        reference_includes_head: true,
        build: || fraud(1000, 64, 4, 2, 256, 64),
    },
];

/// Names of every catalogued model, for error messages and listings.
pub fn model_names() -> Vec<&'static str> {
    CATALOG.iter().map(|e| e.name).collect()
}

pub fn lookup(name: &str) -> Option<&'static CatalogEntry> {
    let name = FORMER_NAMES
        .iter()
        .find(|(old, _)| *old == name)
        .map_or(name, |(_, new)| new);
    CATALOG.iter().find(|e| e.name == name)
}

/// Names models had before, still understood (stored runs and config files
/// keep them): old → current.
const FORMER_NAMES: [(&str, &str); 1] = [("fraud_transformer_seed", "fraud_transformer_354m")];

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
            ModelConfig::Vit(v) => vit_options(v, opts, self.name)?,
            ModelConfig::Resnet(r) => resnet_options(r, opts, self.name)?,
            ModelConfig::Bert(b) => bert_options(b, opts, self.name)?,
            ModelConfig::Encoder(e) => encoder_options(e, opts, self.name)?,
            ModelConfig::Decoder(d) => decoder_options(d, opts, self.name)?,
            // Not in the catalogue: built by the worker from its library.
            ModelConfig::Library(_) | ModelConfig::File(_) | ModelConfig::Script(_) => {}
        }
        Ok(cfg)
    }
}

/// The vit options a spec may set on model `name`.
fn vit_options(v: &mut VitConfig, opts: &ModelOptions, name: &str) -> Result<(), SpecError> {
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
            &format!("a multiple of the patch size {} of {}", v.patch_size, name),
        ));
    }
    if let Some(x) = opts.seq_len {
        return Err(not_for("seq_len", x, name));
    }
    if let Some(x) = opts.vocab_size {
        return Err(not_for("vocab_size", x, name));
    }
    Ok(())
}

/// The resnet options a spec may set on model `name`.
fn resnet_options(r: &mut ResNetConfig, opts: &ModelOptions, name: &str) -> Result<(), SpecError> {
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
                &format!("at least {min} px for {}", name),
            ));
        }
        r.image_size = s;
    }
    if let Some(x) = opts.seq_len {
        return Err(not_for("seq_len", x, name));
    }
    if let Some(x) = opts.vocab_size {
        return Err(not_for("vocab_size", x, name));
    }
    Ok(())
}

/// The bert options a spec may set on model `name`.
fn bert_options(b: &mut BertConfig, opts: &ModelOptions, name: &str) -> Result<(), SpecError> {
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
        return Err(not_for("image_size", x, name));
    }
    if let Some(x) = opts.in_channels {
        return Err(not_for("in_channels", x, name));
    }
    Ok(())
}

/// The encoder options a spec may set on model `name`.
fn encoder_options(
    e: &mut EncoderConfig,
    opts: &ModelOptions,
    name: &str,
) -> Result<(), SpecError> {
    if let Some(n) = opts.num_classes {
        e.num_classes = positive(
            "num_classes",
            n,
            "a whole number ≥ 1 (1: one logit, binary cross-entropy)",
        )?;
    }
    if let Some(v) = opts.vocab_size {
        e.vocab_size = positive("vocab_size", v, "a whole number ≥ 1")?;
    }
    if let Some(t) = opts.seq_len {
        if !(1..=e.max_position).contains(&t) {
            return Err(SpecError::new(
                "seq_len",
                t,
                &format!("1 to {} (the model's position table)", e.max_position),
            ));
        }
        e.seq_len = t;
    }
    if let Some(x) = opts.image_size {
        return Err(not_for("image_size", x, name));
    }
    if let Some(x) = opts.in_channels {
        return Err(not_for("in_channels", x, name));
    }
    Ok(())
}

/// The decoder options a spec may set on model `name`.
fn decoder_options(
    d: &mut DecoderConfig,
    opts: &ModelOptions,
    name: &str,
) -> Result<(), SpecError> {
    if let Some(v) = opts.vocab_size {
        d.vocab_size = positive("vocab_size", v, "a whole number ≥ 1")?;
    }
    if let Some(t) = opts.seq_len {
        if !(1..=d.max_position).contains(&t) {
            return Err(SpecError::new(
                "seq_len",
                t,
                &format!("1 to {} (the context of {})", d.max_position, name),
            ));
        }
        d.seq_len = t;
    }
    if let Some(x) = opts.num_classes {
        return Err(SpecError::new(
            "num_classes",
            x,
            &format!(
                "not an option of model {}: a language model predicts its vocabulary (vocab_size)",
                name
            ),
        ));
    }
    if let Some(x) = opts.image_size {
        return Err(not_for("image_size", x, name));
    }
    if let Some(x) = opts.in_channels {
        return Err(not_for("in_channels", x, name));
    }
    Ok(())
}

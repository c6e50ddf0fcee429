//! How big and how long a GPU session's items are: the models, batches and
//! allowance scale of a session on a GPU ([`GPU`]) and of its CPU rehearsal
//! ([`CPU`]), and which items, their steps taking tens of milliseconds, get
//! more steps in longer windows ([`fast_steps`], [`super::Item::steps_x`]).
//! A leaf: `items` builds the plan from it.

/// Whether an item's steps take tens of milliseconds on an H100: mixed
/// precision at the plan's fixed batches of ViT-B/16, ResNet-50 and
/// BERT-base (31–35 ms measured for the first two). Their 80 steps in
/// windows of 5 timed only 2.4 s, in windows of 0.15 s whose rates spread
/// by 5–12 % (coefficient of variation), where fp32 (140–170 ms steps) and
/// the largest batch (400 ms) spread by under 0.5 %. GPT-2 (83 ms), tf32
/// (53–62 ms), the largest batch and the image-folder loader keep the
/// session's lengths.
pub fn fast_steps(model: &str, precision: &str, fixed_batch: bool, folder: bool) -> bool {
    precision.starts_with("amp-") && fixed_batch && !folder && !model.starts_with("gpt2")
}

/// The models and sizes of one kind of session.
pub struct Sizes {
    pub precision: &'static str,
    pub vit: &'static str,
    pub vit_batch: i64,
    pub vit_max: (u32, u32),
    /// timm's own ViT, trained in the studio's PyTorch harness beside the
    /// studio's ViT and timm's plain loop (whether a gap is the harness or
    /// the model), and the side it is trained at (`None`: timm's default).
    pub timm_vit: &'static str,
    pub timm_vit_px: Option<i64>,
    pub resnet: &'static str,
    pub resnet_px: Option<i64>,
    pub resnet_batch: i64,
    pub gpt2: &'static str,
    pub gpt2_seq: i64,
    pub gpt2_batch: i64,
    pub bert: &'static str,
    pub bert_batch: i64,
    /// The libtorch worker's other precisions, each beside PyTorch eager:
    /// the first on ViT early in the plan (on a GPU amp-fp16, the loss
    /// scaler's path), the rest on ViT and all on ResNet later.
    pub tch_precisions: &'static [&'static str],
    /// The searches' batches ([`super::tune_items`]): ViT's and GPT-2's,
    /// and a probe's steps and steps per timing window.
    pub tune_vit_batches: &'static [i64],
    pub tune_gpt2_batches: &'static [i64],
    pub tune_probe: (i64, i64),
    /// The searches' allowances in seconds, ViT's and GPT-2's (before
    /// [`Sizes::scale`]). On an H200 ViT-B/16's six probes took 170 s (JAX's
    /// compilations and PyTorch's start-ups about 60 s of it) and a
    /// confirmation run at batch 1024 about 30 s: 360 s lets all four
    /// confirmation runs start within the share the search may start runs in.
    pub tune_allowance: (f64, f64),
    /// Allowances are multiplied by this (the rehearsal's models are small).
    pub scale: f64,
    /// [`super::Item::steps_x`] of the fast-step items, and the seconds their
    /// allowance grows by (the extra steps at ~35 ms each, rounded up).
    pub fast_x: (i64, f64),
}

pub const GPU: Sizes = Sizes {
    precision: "amp-bf16",
    vit: "vit_base_patch16_224",
    vit_batch: 64,
    vit_max: (128, 2048),
    timm_vit: "timm:vit_base_patch16_224",
    timm_vit_px: None,
    resnet: "resnet50",
    resnet_px: None,
    resnet_batch: 128,
    gpt2: "gpt2_small",
    gpt2_seq: 1024,
    gpt2_batch: 16,
    bert: "bert_base_uncased",
    bert_batch: 64,
    tch_precisions: &["amp-fp16", "fp32", "tf32"],
    tune_vit_batches: &[256, 1024],
    tune_gpt2_batches: &[16, 32],
    tune_probe: (30, 3),
    tune_allowance: (360.0, 300.0),
    scale: 1.0,
    fast_x: (3, 6.0),
};

/// The rehearsal: the same plan on the CPU with models that train in seconds.
pub const CPU: Sizes = Sizes {
    precision: "fp32",
    vit: "vit_mini_patch4_32",
    vit_batch: 8,
    vit_max: (16, 32),
    timm_vit: "timm:vit_tiny_patch16_224",
    timm_vit_px: Some(32),
    resnet: "resnet18",
    resnet_px: Some(32),
    resnet_batch: 2,
    gpt2: "gpt2_tiny",
    gpt2_seq: 128,
    gpt2_batch: 4,
    bert: "bert_tiny",
    bert_batch: 4,
    tch_precisions: &["amp-bf16"],
    tune_vit_batches: &[4, 8],
    tune_gpt2_batches: &[4],
    tune_probe: (12, 2),
    tune_allowance: (240.0, 200.0),
    scale: 0.5,
    fast_x: (1, 0.0),
};

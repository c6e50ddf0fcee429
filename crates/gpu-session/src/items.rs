//! What a GPU session measures, in the order it measures it, each item with
//! the seconds it is allowed (from the H100 session's timings: start-up,
//! compilation and 80 steps, rounded up). The same list, with small models
//! on the CPU, is the rehearsal CI runs.
//!
//! Why this order: the first item repeats the H100 session's ViT-B/16
//! amp-bf16 batch 64 run, the one row every GPU so far has, so a session cut
//! short after one item still compares two GPUs. Each studio row is followed
//! at once by its peer (timm, Hugging Face) at the same batch and precision,
//! so a session cut anywhere leaves only complete studio ÷ peer ratios. The
//! largest batch comes next because it has never run on a GPU and shows what
//! batch 64 costs in MFU; then ResNet-50 and GPT-2, each with its peer (and
//! GPT-2's Hugging Face peer again with `F.gelu`'s tanh form instead of its
//! default written-out activation, to say how much of that ratio is the
//! activation); then
//! torch.compile and JAX at the largest batch (their compilation is the
//! slowest start), JAX beside a plain Flax loop; then BERT-base, the
//! image-folder loader and the JAX rows of the other families; last the
//! two searches for the fastest setup ([`super::tune_items`]), which need
//! the most time and are held against the single configurations before
//! them. Given the
//! record of earlier sessions, a session runs first what that record shows
//! never measured on its GPU model ([`super::order`]).

use serde::Serialize;

pub use super::kind::Kind;
use super::pace::{self, Sizes, CPU, GPU};

/// How an item's batch is chosen.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Batch {
    Fixed(i64),
    /// The largest that fits, searched from `from` up to `cap`.
    Max {
        from: u32,
        cap: u32,
    },
    /// The batch the item with this id ran at (its search's result).
    FoundBy(String),
}

/// What an item runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum What {
    /// A studio run (`trainbench run`), stored with everything it measured.
    Studio {
        framework: Kind,
        model: String,
        precision: String,
        compile: String,
        batch: Batch,
        image_size: Option<i64>,
        seq_len: Option<i64>,
        /// Train from generated JPEGs through the framework's loader.
        folder: bool,
        /// cuDNN's benchmark mode when set (GPU only); `None`: the worker's
        /// own choice (on for a convolutional network).
        #[serde(skip_serializing_if = "Option::is_none")]
        cudnn_benchmark: Option<bool>,
        /// The earlier studio item this one is held against (the libtorch
        /// worker beside PyTorch eager at the same model, batch and
        /// precision): the ratio is this item's throughput ÷ that one's.
        against: Option<String>,
    },
    /// A plain loop of another library (`python -m trainbench_peers`).
    Peer {
        library: String,
        model: String,
        precision: String,
        batch: Batch,
        image_size: Option<i64>,
        seq_len: Option<i64>,
        /// Hugging Face's GPT-2 with another activation than its default
        /// `gelu_new` (`gelu_pytorch_tanh`): how much of the studio ÷ peer
        /// gap the activation's seven written-out operations are.
        #[serde(skip_serializing_if = "Option::is_none")]
        activation: Option<String>,
        /// The studio item it is held against.
        of: String,
    },
    /// A search for the fastest setup of one model ([`super::tune_items`]),
    /// held against the best single configuration measured before.
    Tune(super::tune_items::Space),
}

/// One step of the plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub id: String,
    pub title: String,
    /// Seconds the item is allowed: it starts only when that much is left.
    pub allowance_s: f64,
    /// The session's steps, windows (and a peer's warm-up) times this: 3 on
    /// a GPU for the items whose steps take tens of milliseconds
    /// ([`fast_steps`]), so a timing window lasts about half a second and a
    /// host hiccup of a few milliseconds cannot move it; else 1.
    pub steps_x: i64,
    pub what: What,
}

/// The plan: on a GPU, or the rehearsal's small models on the CPU.
pub fn plan(rehearse: bool) -> Vec<Item> {
    let s = if rehearse { &CPU } else { &GPU };
    // ViT (batch 64, its peer, the libtorch worker in two precisions),
    // ResNet-50 (the same), the largest ViT batch, GPT-2, the libtorch
    // worker's other precisions, then torch.compile, JAX and the rest.
    let mut items = vit_items(s);
    let mut others = other_items(s);
    let rest = others.split_off(5);
    let largest = items.split_off(3);
    items.extend(tch_pair(
        s,
        "vit",
        s.vit,
        None,
        s.precision,
        Batch::Fixed(s.vit_batch),
    ));
    items.extend(precision_pairs(s, "vit", &s.tch_precisions[..1]));
    let (resnet, gpt2) = (others[..2].to_vec(), others[2..].to_vec());
    items.extend(resnet);
    items.extend(tch_pair(
        s,
        "resnet",
        s.resnet,
        s.resnet_px,
        s.precision,
        Batch::Fixed(s.resnet_batch),
    ));
    items.extend(largest);
    items.extend(gpt2);
    items.extend(precision_pairs(s, "vit", &s.tch_precisions[1..]));
    if !rehearse {
        // The rehearsal's ViT pair already takes every path a precision
        // pair takes; ResNet-18 in bf16, emulated on this CPU at about 2
        // samples/s, would add a minute of CI for no new path. cuDNN runs
        // on a GPU only: the rehearsal has no such pair either.
        items.extend(precision_pairs(s, "resnet", s.tch_precisions));
        items.extend(without_cudnn_benchmark(s));
    }
    items.extend(rest);
    items.extend(
        super::tune_items::searches(s)
            .into_iter()
            .map(|(id, title, allowance, space)| (id, title, allowance, What::Tune(space))),
    );
    items
        .into_iter()
        .map(|(id, title, allowance, what)| {
            let (x, more) = if fast(&what) { s.fast_x } else { (1, 0.0) };
            Item {
                id,
                title,
                allowance_s: (allowance + more) * s.scale,
                steps_x: x,
                what,
            }
        })
        .collect()
}

/// [`pace::fast_steps`] of an item.
fn fast(w: &What) -> bool {
    match w {
        What::Studio {
            model,
            precision,
            batch,
            folder,
            ..
        } => pace::fast_steps(model, precision, matches!(batch, Batch::Fixed(_)), *folder),
        What::Peer {
            model,
            precision,
            batch,
            ..
        } => pace::fast_steps(model, precision, matches!(batch, Batch::Fixed(_)), false),
        What::Tune(_) => false,
    }
}

/// An item before its steps: id, title, allowance (unscaled), what it runs.
type Row = (String, String, f64, What);

/// A precision as an item id's suffix (`amp-fp16` → `fp16`).
fn short(precision: &str) -> &str {
    precision.strip_prefix("amp-").unwrap_or(precision)
}

/// The libtorch worker's item held against the PyTorch eager item `of`
/// (`vit-tch` against `vit-eager`), at its model, size, precision and batch.
fn tch_against(
    s: &Sizes,
    model: &str,
    px: Option<i64>,
    precision: &str,
    batch: Batch,
    of: &str,
) -> What {
    let mut w = sized(studio(s, Kind::Tch, model, "off", batch), px, None);
    if let What::Studio {
        precision: p,
        against,
        ..
    } = &mut w
    {
        (*p, *against) = (precision.into(), Some(of.into()));
    }
    w
}

/// The libtorch worker at the plan's own precision, beside the family's
/// PyTorch eager item (`vit-eager`, `resnet-eager`) already in the plan.
fn tch_pair(
    s: &Sizes,
    family: &'static str,
    model: &str,
    px: Option<i64>,
    precision: &str,
    batch: Batch,
) -> Vec<Row> {
    let title = format!(
        "{model} {precision} {}, libtorch worker (Rust, tch)",
        batch_words(&batch)
    );
    let of = format!("{family}-eager");
    vec![(
        format!("{family}-tch"),
        title,
        30.0,
        tch_against(s, model, px, precision, batch, &of),
    )]
}

/// For each precision: PyTorch eager, then the libtorch worker beside it
/// (`vit-eager-fp16`, `vit-tch-fp16`), at the family's batch.
fn precision_pairs(s: &Sizes, family: &'static str, precisions: &[&str]) -> Vec<Row> {
    let (model, px, b) = if family == "vit" {
        (s.vit, None, s.vit_batch)
    } else {
        (s.resnet, s.resnet_px, s.resnet_batch)
    };
    let mut rows = Vec::new();
    for p in precisions {
        let eager_id = format!("{family}-eager-{}", short(p));
        let mut eager = sized(
            studio(s, Kind::Pytorch, model, "off", Batch::Fixed(b)),
            px,
            None,
        );
        if let What::Studio { precision, .. } = &mut eager {
            *precision = (*p).into();
        }
        // fp32 without tensor cores is the slowest: ViT-B/16 at 366 samples/s on an H100.
        let allowance = if *p == "fp32" { 40.0 } else { 30.0 };
        rows.push((
            eager_id.clone(),
            format!("{model} {p} b{b}, PyTorch eager"),
            allowance,
            eager,
        ));
        rows.push((
            format!("{family}-tch-{}", short(p)),
            format!("{model} {p} b{b}, libtorch worker (Rust, tch)"),
            allowance,
            tch_against(s, model, px, p, Batch::Fixed(b), &eager_id),
        ));
    }
    rows
}

/// ResNet-50 amp-fp16 on PyTorch eager and the libtorch worker again with
/// cuDNN's benchmark mode off (`…-nobench`): with it on (both workers'
/// default for a CNN), cuDNN times candidate algorithms in the first steps
/// and keeps the fastest, a choice a busy host can sway; off, both take
/// cuDNN's heuristics' choice. Whether the two then agree says whether the
/// 1.1–1.23 tch ÷ eager of that pair on the H100 is the algorithms'. The
/// eager item is held against `resnet-eager-fp16` (off ÷ on), so that one
/// runs in the same session.
fn without_cudnn_benchmark(s: &Sizes) -> Vec<Row> {
    let mut rows = precision_pairs(s, "resnet", &["amp-fp16"]);
    let on_id = rows[0].0.clone();
    let eager_id = format!("{on_id}-nobench");
    for (id, title, _, what) in &mut rows {
        *id = format!("{id}-nobench");
        *title = format!("{title}, cuDNN benchmark off");
        if let What::Studio {
            cudnn_benchmark,
            against,
            ..
        } = what
        {
            *cudnn_benchmark = Some(false);
            *against = Some(if against.is_some() {
                eager_id.clone()
            } else {
                on_id.clone()
            });
        }
    }
    rows
}

/// A batch in an item's title.
fn batch_words(b: &Batch) -> String {
    match b {
        Batch::Fixed(n) => format!("b{n}"),
        Batch::Max { .. } => "largest batch".into(),
        Batch::FoundBy(id) => format!("the batch {id} found"),
    }
}

fn studio(s: &Sizes, framework: Kind, model: &str, compile: &str, batch: Batch) -> What {
    What::Studio {
        framework,
        model: model.into(),
        precision: s.precision.into(),
        compile: compile.into(),
        batch,
        image_size: None,
        seq_len: None,
        folder: false,
        cudnn_benchmark: None,
        against: None,
    }
}

/// timm's ViT in the studio's harness, at the ViT items' batch.
fn timm_in_harness(s: &Sizes) -> What {
    let mut w = studio(
        s,
        Kind::Pytorch,
        s.timm_vit,
        "off",
        Batch::Fixed(s.vit_batch),
    );
    if let What::Studio { image_size, .. } = &mut w {
        *image_size = s.timm_vit_px;
    }
    w
}

fn peer(s: &Sizes, library: &str, model: &str, batch: Batch, of: &str) -> What {
    What::Peer {
        library: library.into(),
        model: model.into(),
        precision: s.precision.into(),
        batch,
        image_size: None,
        seq_len: None,
        activation: None,
        of: of.into(),
    }
}

/// A Hugging Face peer with another activation function.
fn with_activation(mut w: What, name: &str) -> What {
    if let What::Peer { activation, .. } = &mut w {
        *activation = Some(name.into());
    }
    w
}

/// The same item at another input size (image pixels or tokens).
fn sized(mut w: What, px: Option<i64>, seq: Option<i64>) -> What {
    match &mut w {
        What::Studio {
            image_size,
            seq_len,
            ..
        }
        | What::Peer {
            image_size,
            seq_len,
            ..
        } => {
            (*image_size, *seq_len) = (px, seq);
        }
        What::Tune(space) => (space.image_size, space.seq_len) = (px, seq),
    }
    w
}

/// ViT-B/16 at batch 64 with its peer and timm's model in the studio's
/// harness, then at the largest batch with its peer.
fn vit_items(s: &Sizes) -> Vec<Row> {
    let (p, vb, vit) = (s.precision, s.vit_batch, s.vit);
    let max = Batch::Max {
        from: s.vit_max.0,
        cap: s.vit_max.1,
    };
    let found = || Batch::FoundBy("vit-eager-max".into());
    vec![
        (
            "vit-eager".into(),
            format!("{vit} {p} b{vb}, PyTorch eager"),
            30.0,
            studio(s, Kind::Pytorch, vit, "off", Batch::Fixed(vb)),
        ),
        (
            "vit-timm".into(),
            format!("{vit} {p} b{vb}, timm peer"),
            30.0,
            peer(s, "timm", vit, Batch::Fixed(vb), "vit-eager"),
        ),
        (
            "vit-timm-harness".into(),
            format!(
                "{} {p} b{vb}, timm's model in the studio's PyTorch harness",
                s.timm_vit
            ),
            30.0,
            timm_in_harness(s),
        ),
        (
            "vit-eager-max".into(),
            format!("{vit} {p} largest batch, PyTorch eager"),
            150.0,
            studio(s, Kind::Pytorch, vit, "off", max),
        ),
        (
            "vit-timm-max".into(),
            format!("{vit} {p} largest batch, timm peer"),
            40.0,
            peer(s, "timm", vit, found(), "vit-eager-max"),
        ),
    ]
}

/// ResNet-50 and GPT-2 with their peers, torch.compile and JAX at the
/// largest ViT batch, BERT-base, the image-folder loader, the JAX rows.
fn other_items(s: &Sizes) -> Vec<Row> {
    let (p, rb, gb, vit) = (s.precision, s.resnet_batch, s.gpt2_batch, s.vit);
    let (px, seq) = (s.resnet_px, Some(s.gpt2_seq));
    let found = || Batch::FoundBy("vit-eager-max".into());
    let resnet = |kind| sized(studio(s, kind, s.resnet, "off", Batch::Fixed(rb)), px, None);
    let gpt2 = |kind| sized(studio(s, kind, s.gpt2, "off", Batch::Fixed(gb)), None, seq);
    let mut folder = resnet(Kind::Pytorch);
    if let What::Studio { folder: f, .. } = &mut folder {
        *f = true;
    }
    let g = format!("{} seq {} {p} b{gb}", s.gpt2, s.gpt2_seq);
    vec![
        (
            "resnet-eager".into(),
            format!("{} {p} b{rb}, PyTorch eager", s.resnet),
            35.0,
            resnet(Kind::Pytorch),
        ),
        (
            "resnet-timm".into(),
            format!("{} {p} b{rb}, timm peer", s.resnet),
            30.0,
            sized(
                peer(s, "timm", s.resnet, Batch::Fixed(rb), "resnet-eager"),
                px,
                None,
            ),
        ),
        (
            "gpt2-eager".into(),
            format!("{g}, PyTorch eager"),
            40.0,
            gpt2(Kind::Pytorch),
        ),
        (
            "gpt2-hf".into(),
            format!("{g}, Hugging Face peer"),
            40.0,
            sized(
                peer(s, "transformers", s.gpt2, Batch::Fixed(gb), "gpt2-eager"),
                None,
                seq,
            ),
        ),
        (
            "gpt2-hf-tanh".into(),
            format!("{g}, Hugging Face peer with F.gelu's tanh form"),
            40.0,
            with_activation(
                sized(
                    peer(s, "transformers", s.gpt2, Batch::Fixed(gb), "gpt2-eager"),
                    None,
                    seq,
                ),
                "gelu_pytorch_tanh",
            ),
        ),
        (
            "vit-compile-max".into(),
            format!("{vit} {p} largest batch, torch.compile"),
            90.0,
            studio(s, Kind::Pytorch, vit, "on", found()),
        ),
        (
            "vit-jax-max".into(),
            format!("{vit} {p} largest batch, JAX"),
            90.0,
            studio(s, Kind::Jax, vit, "off", found()),
        ),
        (
            "vit-flax-max".into(),
            format!("{vit} {p} largest batch, Flax peer"),
            60.0,
            peer(s, "flax", vit, found(), "vit-jax-max"),
        ),
        (
            "bert-eager".into(),
            format!("{} {p} b{}, PyTorch eager", s.bert, s.bert_batch),
            30.0,
            studio(s, Kind::Pytorch, s.bert, "off", Batch::Fixed(s.bert_batch)),
        ),
        (
            "resnet-folder".into(),
            format!("{} {p} b{rb} from JPEG files, PyTorch DataLoader", s.resnet),
            60.0,
            folder,
        ),
        (
            "vit-jax".into(),
            format!("{vit} {p} b{}, JAX", s.vit_batch),
            70.0,
            studio(s, Kind::Jax, vit, "off", Batch::Fixed(s.vit_batch)),
        ),
        (
            "vit-flax".into(),
            format!("{vit} {p} b{}, Flax peer", s.vit_batch),
            60.0,
            peer(s, "flax", vit, Batch::Fixed(s.vit_batch), "vit-jax"),
        ),
        (
            "resnet-jax".into(),
            format!("{} {p} b{rb}, JAX", s.resnet),
            70.0,
            resnet(Kind::Jax),
        ),
        (
            "gpt2-jax".into(),
            format!("{g}, JAX"),
            70.0,
            gpt2(Kind::Jax),
        ),
    ]
}

#[cfg(test)]
#[path = "items_tests.rs"]
mod tests;

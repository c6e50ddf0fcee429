//! How long a GPU session times an item: the items whose steps take tens
//! of milliseconds get more steps in longer windows ([`fast_steps`],
//! [`super::Item::steps_x`]).

use super::items::{Batch, What};

/// Whether an item's steps take tens of milliseconds on an H100: mixed
/// precision at the plan's fixed batches of ViT-B/16, ResNet-50 and
/// BERT-base (31–35 ms measured for the first two). Their 80 steps in
/// windows of 5 timed only 2.4 s, in windows of 0.15 s whose rates spread
/// by 5–12 % (coefficient of variation), where fp32 (140–170 ms steps) and
/// the largest batch (400 ms) spread by under 0.5 %. GPT-2 (83 ms), tf32
/// (53–62 ms), the largest batch and the image-folder loader keep the
/// session's lengths.
pub fn fast_steps(w: &What) -> bool {
    let (model, precision, batch, folder) = match w {
        What::Studio {
            model,
            precision,
            batch,
            folder,
            ..
        } => (model, precision, batch, *folder),
        What::Peer {
            model,
            precision,
            batch,
            ..
        } => (model, precision, batch, false),
    };
    precision.starts_with("amp-")
        && matches!(batch, Batch::Fixed(_))
        && !folder
        && !model.starts_with("gpt2")
}

#[cfg(test)]
mod tests {
    use super::super::items::plan;

    #[test]
    fn fast_steps_are_timed_three_times_longer_on_a_gpu_only() {
        let x = |rehearse: bool, id: &str| {
            let items = plan(rehearse);
            let i = items.iter().find(|i| i.id == id).unwrap();
            (i.steps_x, i.allowance_s)
        };
        for id in [
            "vit-eager",
            "vit-timm",
            "vit-tch-fp16",
            "resnet-tch",
            "bert-eager",
            "vit-flax",
        ] {
            assert_eq!(x(false, id).0, 3, "{id}");
        }
        assert_eq!(x(false, "vit-eager"), (3, 36.0));
        for id in [
            "vit-eager-fp32",
            "vit-tch-tf32",
            "gpt2-eager",
            "gpt2-hf",
            "vit-eager-max",
            "vit-timm-max",
            "resnet-folder",
        ] {
            assert_eq!(x(false, id).0, 1, "{id}");
        }
        // The rehearsal keeps its lengths: CI's time.
        assert!(plan(true).iter().all(|i| i.steps_x == 1));
    }
}

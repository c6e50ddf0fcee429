//! Whether a run belongs beside the published record. Every published result
//! is a GPU training of a full-size model; a share of one says something
//! about a GPU run of a model of that size, and nothing about a CPU run or a
//! model a thousand times smaller (which would read "0.031 % of MXNet
//! ResNet-50 on 8x H100"). Such a run is placed only when a person asks.

use super::published;
use crate::models::lookup;

/// A model counts as comparable down to this share of the smallest published
/// model of its family (the projection's caution uses the same bound,
/// through [`far_smaller`]).
pub const SMALLEST_SHARE: f64 = 0.1;

/// Why a run of `model` (`params` trainable parameters, trained on `gpu`,
/// or the CPU when `None`) is not placed beside the published record of its
/// model family; `None` where it is, or where its family has no published
/// result (there is nothing to place it beside).
pub fn why_not_placed(model: &str, params: Option<u64>, gpu: Option<&str>) -> Option<String> {
    let smallest = smallest_published_params(model)?;
    if gpu.is_none() {
        return Some(
            "it trained on the CPU, and every published result of its model family is a GPU training: a share of one says nothing about this run"
                .to_owned(),
        );
    }
    match params {
        Some(p) if far_smaller(p, smallest) => Some(format!(
            "its model has {} parameters, {:.0}× fewer than the smallest published model of its family ({}): a share of that result says nothing about this run",
            count(p),
            smallest as f64 / p as f64,
            count(smallest)
        )),
        _ => None,
    }
}

/// The parameters of the smallest published model of `model`'s family (as
/// the catalogue counts them); `None` for a model the catalogue does not
/// know or a family without published results.
pub fn smallest_published_params(model: &str) -> Option<u64> {
    let family = lookup(model)?.default_config().family();
    published()
        .iter()
        .filter_map(|r| lookup(&r.studio_model))
        .map(|e| e.default_config())
        .filter(|c| c.family() == family)
        .map(|c| c.param_count())
        .min()
}

/// Whether `params` is below [`SMALLEST_SHARE`] of `smallest`.
pub fn far_smaller(params: u64, smallest: u64) -> bool {
    params > 0 && (params as f64) < SMALLEST_SHARE * smallest as f64
}

/// A parameter count as people write it: 78.0 k, 11.7 M, 1.3 B.
fn count(n: u64) -> String {
    let x = n as f64;
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1} k", x / 1e3),
        1_000_000..=999_999_999 => format!("{:.1} M", x / 1e6),
        _ => format!("{:.1} B", x / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(model: &str) -> Option<u64> {
        lookup(model).map(|e| e.default_config().param_count())
    }

    #[test]
    fn a_gpu_run_of_a_published_size_is_placed() {
        assert_eq!(
            why_not_placed("resnet50", params("resnet50"), Some("H100 SXM")),
            None
        );
        assert_eq!(
            why_not_placed(
                "vit_base_patch16_224",
                params("vit_base_patch16_224"),
                Some("NVIDIA A100-SXM4-80GB")
            ),
            None
        );
    }

    #[test]
    fn a_cpu_run_is_not_placed_and_says_why() {
        let why = why_not_placed("resnet50", params("resnet50"), None).unwrap();
        assert!(why.starts_with("it trained on the CPU"), "{why}");
    }

    #[test]
    fn a_tiny_model_on_a_gpu_is_not_placed_and_says_how_much_smaller() {
        let why = why_not_placed("resnet_mini", params("resnet_mini"), Some("H100 SXM")).unwrap();
        assert!(why.starts_with("its model has 78.0 k parameters"), "{why}");
        assert!(
            why.contains("fewer than the smallest published model of its family (25.6 M)"),
            "{why}"
        );
    }

    #[test]
    fn a_family_without_published_results_has_nothing_to_say() {
        assert_eq!(
            why_not_placed(
                "fraud_transformer_tiny",
                params("fraud_transformer_tiny"),
                None
            ),
            None
        );
        assert_eq!(why_not_placed("not_a_model", Some(5), None), None);
    }
}

//! Entries labelled by what sets them apart: the configuration parts every
//! entry shares are said once (`Comparison::shared_label`), and each entry's
//! label holds only the parts that differ — the way experiment trackers show
//! only the parameters that vary. "pytorch@kit-pytorch vit_base_patch16_224
//! amp-bf16 ×1 b64 synthetic" nine times over becomes "pytorch@kit-pytorch
//! compile=on", "jax", … under "vit_base_patch16_224 amp-bf16 ×1 b64
//! synthetic".

use super::values::config_parts;
use super::{CompareEntry, Grouping};
use crate::record::RunRow;

/// Sets each entry's `label` to what sets it apart (its run id first when
/// entries are runs; the repeat count last when they are configurations) and
/// returns what all share. `groups` holds each entry's runs, in order.
pub(super) fn label_by_difference(
    entries: &mut [CompareEntry],
    groups: &[(String, Vec<&RunRow>)],
    grouping: Grouping,
) -> String {
    let parts: Vec<Vec<(String, bool)>> = groups.iter().map(|g| config_parts(g.1[0])).collect();
    let Some(first) = parts.first() else {
        return String::new();
    };
    let same: Vec<bool> = (0..first.len())
        .map(|i| parts.iter().all(|p| p[i].0 == first[i].0))
        .collect();
    let shared = first
        .iter()
        .zip(&same)
        .filter(|((_, default), same)| **same && !default)
        .map(|((p, _), _)| p.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    for ((e, p), (_, runs)) in entries.iter_mut().zip(&parts).zip(groups) {
        let own = p
            .iter()
            .zip(&same)
            .filter(|(_, same)| !**same)
            .map(|((part, _), _)| part.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        e.label = match grouping {
            Grouping::Runs if own.is_empty() => format!("#{}", runs[0].id),
            Grouping::Runs => format!("#{} {own}", runs[0].id),
            Grouping::Configurations => {
                let own = if own.is_empty() {
                    e.full_label.clone()
                } else {
                    own
                };
                if runs.len() > 1 {
                    format!("{own} ({} runs)", runs.len())
                } else {
                    own
                }
            }
        };
    }
    shared
}

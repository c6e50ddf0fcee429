//! The plan reordered by what earlier sessions already measured on the same
//! GPU model: GPU time is lent for minutes, so a session should spend them
//! on figures nobody has yet, not repeat the first items every time.
//!
//! The record is the folder of the sessions' results (docs/gpu-results/,
//! [`super::record`]). [`measured`] counts, per item id, the sessions that
//! *ran* it on a GPU of this name. [`least_measured_first`] then orders the plan: items
//! measured fewer times come first. Among the items never measured, the one
//! that costs least (its own allowance plus those of the items it needs that
//! are not yet placed) comes first, so the most new figures fit in the
//! budget; otherwise the plan's own order of value stands. An item needs the studio item
//! its peer or ratio is held against and the batch search whose batch it
//! takes: those come right before it, measured or not, because a ratio is
//! only fair between runs of one session on one machine.
//!
//! On a GPU model with no rows the plan's own order is kept unchanged.

use std::collections::HashMap;

use serde_json::Value;

use super::items::{Batch, Item, What};

/// The ids of the items an item needs earlier in the same session.
fn needs(item: &Item) -> Vec<&str> {
    let mut out = Vec::new();
    let (batch, other) = match &item.what {
        What::Studio { batch, against, .. } => (batch, against.as_deref()),
        What::Peer { batch, of, .. } => (batch, Some(of.as_str())),
        // A search is held against what ran before it, if anything did.
        What::Tune(_) => return out,
    };
    if let Batch::FoundBy(id) = batch {
        out.push(id.as_str());
    }
    out.extend(other);
    out
}

/// Per item id, how many sessions of the record (their results) ran it on
/// a GPU named `gpu`.
pub fn measured(record: &[Value], gpu: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for results in record.iter().filter(|r| super::record::gpu_name(r) == gpu) {
        for r in results["results"].as_array().into_iter().flatten() {
            if let (Some("ran"), Some(id)) = (r["status"].as_str(), r["id"].as_str()) {
                *counts.entry(id.to_owned()).or_insert(0) += 1;
            }
        }
    }
    counts
}

/// `items` reordered: least measured first (see the module's note), each
/// item right after the items it needs.
pub fn least_measured_first(items: Vec<Item>, counts: &HashMap<String, usize>) -> Vec<Item> {
    let n = items.len();
    let index: HashMap<&str, usize> = items
        .iter()
        .enumerate()
        .map(|(i, it)| (it.id.as_str(), i))
        .collect();
    let count = |i: usize| counts.get(&items[i].id).copied().unwrap_or(0);
    // Cost only ranks the never-measured items of a GPU with a record; with
    // no record at all the plan's written order of value stands.
    let any_record = (0..n).any(|i| count(i) > 0);
    let mut placed = vec![false; n];
    let mut order: Vec<usize> = Vec::with_capacity(n);
    while order.len() < n {
        // The unplaced items' group: the item after what it needs, unplaced.
        let mut best: Option<(usize, f64, Vec<usize>)> = None;
        for i in (0..n).filter(|&i| !placed[i]) {
            let group = group_of(i, &items, &index, &placed);
            let cost: f64 = if any_record && count(i) == 0 {
                group.iter().map(|&g| items[g].allowance_s).sum()
            } else {
                0.0
            };
            let better = match &best {
                None => true,
                Some((c, bc, _)) => (count(i), cost) < (*c, *bc),
            };
            if better {
                best = Some((count(i), cost, group));
            }
        }
        let Some((_, _, group)) = best else { break };
        for g in group {
            placed[g] = true;
            order.push(g);
        }
    }
    let mut slots: Vec<Option<Item>> = items.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// Item `i` preceded by the unplaced items it needs (and what they need),
/// in the plan's order.
fn group_of(i: usize, items: &[Item], index: &HashMap<&str, usize>, placed: &[bool]) -> Vec<usize> {
    let mut group = vec![i];
    let mut k = 0;
    while k < group.len() {
        for id in needs(&items[group[k]]) {
            if let Some(&j) = index.get(id) {
                if !placed[j] && !group.contains(&j) {
                    group.push(j);
                }
            }
        }
        k += 1;
    }
    group.sort_unstable();
    group
}

#[cfg(test)]
mod tests {
    use super::super::items::plan;
    use super::*;

    const GPU: &str = "NVIDIA H100 80GB HBM3";

    fn session(gpu: &str, items: &[(&str, &str)]) -> Value {
        let results: Vec<Value> = items
            .iter()
            .map(|(id, status)| serde_json::json!({"id": id, "status": status}))
            .collect();
        serde_json::json!({"session": {"gpus": [{"name": gpu}], "device": "cuda:0"}, "results": results})
    }

    #[test]
    fn sessions_that_ran_an_item_on_this_gpu_are_counted_per_item() {
        let record = [
            session(
                GPU,
                &[
                    ("vit-eager", "ran"),
                    ("vit-tch", "failed"),
                    ("vit-jax", "skipped"),
                ],
            ),
            session(GPU, &[("vit-eager", "ran"), ("gpt2-hf", "ran")]),
            session("NVIDIA H200", &[("resnet-eager", "ran")]),
            session("NVIDIA H100 80GB HBM3 PCIe", &[("gpt2-eager", "ran")]),
        ];
        let c = measured(&record, GPU);
        assert_eq!(c.get("vit-eager"), Some(&2));
        assert_eq!(c.get("gpt2-hf"), Some(&1));
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!(
            measured(&record, "NVIDIA H200").get("resnet-eager"),
            Some(&1)
        );
    }

    #[test]
    fn with_no_record_the_plan_keeps_its_order() {
        let ids = |items: &[Item]| items.iter().map(|i| i.id.clone()).collect::<Vec<_>>();
        let items = plan(false);
        let same = least_measured_first(items.clone(), &HashMap::new());
        // No record: the cheapest-first rule must not reorder the plan.
        assert_eq!(ids(&same), ids(&items));
    }

    #[test]
    fn unmeasured_items_come_first_each_after_what_it_needs() {
        let items = plan(false);
        let mut counts: HashMap<String, usize> = items.iter().map(|i| (i.id.clone(), 2)).collect();
        for id in ["vit-jax", "vit-flax", "vit-flax-max", "resnet-tch-tf32"] {
            counts.insert(id.into(), 0);
        }
        let order = least_measured_first(items.clone(), &counts);
        let ids: Vec<&str> = order.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids.len(), items.len());
        let at = |id: &str| ids.iter().position(|x| *x == id).unwrap();
        // Cheapest new figure first: the tf32 pair (30 + 30 s) before the
        // JAX item (70 s), its Flax peer right after it, and the largest-batch
        // Flax peer last of the new ones: it needs the 150-s batch search and
        // the JAX run at that batch before it.
        assert_eq!(&ids[..2], &["resnet-eager-tf32", "resnet-tch-tf32"]);
        assert_eq!(&ids[2..4], &["vit-jax", "vit-flax"]);
        assert_eq!(
            &ids[4..7],
            &["vit-eager-max", "vit-jax-max", "vit-flax-max"]
        );
        for item in &order {
            for need in needs(item) {
                assert!(at(need) < at(&item.id), "{} needs {need}", item.id);
            }
        }
        // What was measured as often as the rest keeps the plan's order.
        assert_eq!(ids[7], "vit-eager");
    }
}

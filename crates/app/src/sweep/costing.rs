//! What a sweep's cost per epoch will mean, said before it runs: a GPU
//! offering's price on a run that trains on the CPU, and text models on
//! synthetic data, which have no epoch unless a size is asked for.

use trainbench_core::models::lookup;
use trainbench_core::reference::PriceRow;
use trainbench_core::spec::{DataSource, Device};

use super::SweepPlan;

/// The notes about cost per epoch for `plan` priced at `price`.
pub(super) fn cost_notes(plan: &SweepPlan, price: Option<&PriceRow>) -> Vec<String> {
    let Some(price) = price else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    let on_cpu = plan
        .configs
        .iter()
        .any(|c| c.spec.spec.device == Device::Cpu);
    if on_cpu && !price.is_for_cpu() {
        notes.push(format!(
            "{} prices {} × {}, but these runs train on the CPU: their cost per epoch will be the CPU's time at that GPU offering's price (each run says so)",
            price.offering, price.devices, price.device
        ));
    }
    let text_without_epoch: Vec<&str> = plan
        .configs
        .iter()
        .filter(|c| c.spec.spec.data == DataSource::Synthetic && plan.epoch_samples.is_none())
        .filter(|c| lookup(&c.spec.spec.model).is_some_and(|e| !e.family.is_image()))
        .map(|c| c.spec.spec.model.as_str())
        .collect();
    if let Some(first) = text_without_epoch.first() {
        notes.push(format!(
            "{first} trains on synthetic data, which has no size: give an epoch size (--epoch-size) for a cost per epoch (image models default to ImageNet-1k's 1,281,167 images)"
        ));
    }
    notes
}

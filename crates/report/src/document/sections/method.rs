//! "Method": how the figures were measured and computed, with the price rows
//! the costs used.

use trainbench_core::reference::PriceRow;
use trainbench_core::stats::WARMUP_RULE;
use trainbench_core::summary::IMAGENET_1K_TRAIN;

use crate::document::Page;

/// "Method", ending with the price rows used and what "not measured" means.
pub(crate) fn method(l: &mut impl Page, prices: &[PriceRow]) {
    l.heading("Method", 12.0);
    for p in [
        "Every configuration ran in a fresh worker process; the worker reports timing windows of several optimizer steps each, timed after a device synchronisation, so per-step synchronisation does not perturb the pipeline.".to_string(),
        format!("Warm-up: {WARMUP_RULE}."),
        "Throughput of a run is the median of its steady windows' samples per second, with a distribution-free 95 % confidence interval from order statistics (needs at least 6 steady windows; otherwise none is shown). Across repeats of one configuration the figure is the mean of the repeats' medians with a Student-t 95 % interval. A winner is called clear only when its interval does not overlap the runner-up's.".to_string(),
        "Time to first step runs from the worker process's start to the end of the first optimizer step (imports, set-up, graph capture and compilation included); it is never part of throughput.".to_string(),
        "Peak memory is the framework allocator's peak on an accelerator, else NVML's per-process view, else the worker's peak resident set (VmHWM), else the runner's 10 Hz RSS samples; the source is named in each run's summary.".to_string(),
        "Time to accuracy is wall time from the start of training (after model and data set-up; compilation and evaluations included) to the first evaluation at or above the target. \"Not reached\" is a result, not a zero.".to_string(),
        format!("Cost per epoch = epoch time × price per device-hour × devices. An epoch is one pass over the training split of the run's data set. The epoch time is measured when a full epoch of a real data set ran; otherwise it is projected from the steady throughput and marked \"projected\" (its interval is the throughput's, inverted), for the data set's own size, else the epoch size asked for, else — an image model on synthetic data — {}; a text model on synthetic data has no epoch unless a size was asked. Each run's basis is in its details. A GPU offering's price applied to a CPU run is flagged in that run's warnings. Price rows used:", IMAGENET_1K_TRAIN.0),
    ] {
        l.paragraph(&p, 8.5, false);
    }
    if prices.is_empty() {
        l.paragraph(
            "No price row was chosen for these runs: cost is not measured.",
            8.5,
            false,
        );
    } else {
        let rows: Vec<Vec<String>> = prices
            .iter()
            .map(|p| {
                vec![
                    p.offering.clone(),
                    p.devices.to_string(),
                    p.device.clone(),
                    format!("{:.2}", p.usd_per_hour),
                    format!("{:.2}", p.usd_per_device_hour),
                    p.as_of.clone(),
                    p.source.clone(),
                ]
            })
            .collect();
        l.table(
            &[
                "Offering",
                "Devices",
                "Device",
                "USD/hour",
                "USD/device-hour",
                "As of",
                "Source",
            ],
            &[100.0, 40.0, 70.0, 45.0, 55.0, 55.0, 130.0],
            &rows,
            7.0,
        );
    }
    l.paragraph(
        "A number the studio could not measure is shown as \"not measured\", never estimated. Full definitions: docs/metrics.md in the TrainBench repository.",
        8.5,
        true,
    );
}

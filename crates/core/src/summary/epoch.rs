//! Epoch time and cost per epoch (docs/metrics.md, "Epoch time and cost per
//! epoch"). An epoch is one pass over the training split of the run's data
//! set. Its size is, first match wins: the data set's real size (MNIST,
//! CIFAR-10, an image folder, a text file); the epoch size the person asked
//! for (`--epoch-size`); for an image model on synthetic data, ImageNet-1k's
//! training split (1,281,167 images), said so with the figure. A text model
//! on synthetic data has no epoch unless one is asked for: an ImageNet epoch
//! means nothing for GPT-2.
//!
//! The epoch time is *measured* when the run trained at least one whole
//! epoch of a real data set (timed windows only), else *projected* from the
//! steady throughput; cost per epoch is the epoch time at the price per
//! device-hour times the run's devices, projected when the epoch time is.

use super::RunMeasurements;
use crate::stats::WindowTiming;

/// ImageNet-1k's training split: the epoch an image model on synthetic data
/// is priced for unless another size is asked.
pub const IMAGENET_1K_TRAIN: (&str, u64) = ("ImageNet-1k train (1,281,167 images)", 1_281_167);

/// The epoch a run is measured or priced for.
struct EpochSize {
    samples: u64,
    /// What the samples are, for the basis sentence.
    what: String,
    /// The data set the run trained on (so the epoch can be measured).
    real: bool,
}

/// The run's epoch, or why it has none.
fn epoch_size(m: &RunMeasurements) -> Result<EpochSize, String> {
    // 0: a training script's own data, whose size the studio is not told.
    if let Some(n) = m.real_epoch_samples.filter(|&n| n > 0) {
        return Ok(EpochSize {
            samples: n,
            what: format!("the data set's {n} training samples"),
            real: true,
        });
    }
    if let Some(n) = m.asked_epoch_samples {
        return Ok(EpochSize {
            samples: n,
            what: format!("an epoch of {n} samples (as asked)"),
            real: false,
        });
    }
    if m.image_model {
        return Ok(EpochSize {
            samples: IMAGENET_1K_TRAIN.1,
            what: format!(
                "{}, the default for an image model on synthetic data",
                IMAGENET_1K_TRAIN.0
            ),
            real: false,
        });
    }
    Err("no epoch: synthetic data has no size of its own; give an epoch size (--epoch-size) to price one".into())
}

/// What [`epoch_and_cost`] found.
pub(super) struct EpochCost {
    pub epoch_time_s: Option<f64>,
    /// The epoch's samples, where it has a time.
    pub samples: Option<u64>,
    /// How the epoch time was found (or why there is none), in words.
    pub basis: Option<String>,
    pub projected: Option<bool>,
    pub cost_per_epoch_usd: Option<f64>,
}

/// Epoch time (measured, or projected and said so), how it was found, and
/// the cost of an epoch at the run's price.
pub(super) fn epoch_and_cost(
    m: &RunMeasurements,
    throughput: Option<f64>,
    devices: u32,
) -> EpochCost {
    let timed_samples: u64 = m.windows.iter().map(|w| w.samples).sum();
    let timed_seconds: f64 = m.windows.iter().map(WindowTiming::seconds).sum();
    let size = epoch_size(m);
    let (epoch_time_s, basis, projected) = match (&size, throughput) {
        (Ok(e), _) if e.real && timed_samples >= e.samples && timed_seconds > 0.0 => (
            Some(timed_seconds / timed_samples as f64 * e.samples as f64),
            Some(format!(
                "measured: {} at the run's timed rate over {timed_samples} trained samples",
                e.what
            )),
            Some(false),
        ),
        (Ok(e), Some(tp)) if tp > 0.0 => (
            Some(e.samples as f64 / tp),
            Some(format!("projected: {} at the steady throughput", e.what)),
            Some(true),
        ),
        (Err(why), Some(tp)) if tp > 0.0 => (None, Some(why.clone()), None),
        _ => (None, None, None),
    };
    let samples = size
        .ok()
        .filter(|_| epoch_time_s.is_some())
        .map(|e| e.samples);
    let cost_per_epoch_usd = match (&m.price, epoch_time_s) {
        (Some(p), Some(t)) => Some(t / 3600.0 * p.usd_per_device_hour * f64::from(devices)),
        _ => None,
    };
    EpochCost {
        epoch_time_s,
        samples,
        basis,
        projected,
        cost_per_epoch_usd,
    }
}

/// Why a cost is not what it seems: a GPU offering's price applied to a run
/// that trained on the CPU.
pub(super) fn price_warning(m: &RunMeasurements) -> Option<String> {
    let p = m.price.as_ref()?;
    (m.on_cpu && !p.is_for_cpu()).then(|| {
        format!(
            "the price is for {} × {} ({}), but this run trained on the CPU: its cost per epoch is the CPU's time at that offering's price, not what the run would cost there",
            p.devices, p.device, p.offering
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::{summarize, RunMeasurements, PRICE_FOR_ANOTHER_DEVICE};
    use crate::reference::{default_prices, PriceRow};
    use crate::stats::WindowTiming;

    /// Eight windows of 100 samples a second each: 100 samples/s steady.
    fn steady() -> Vec<WindowTiming> {
        (0..8)
            .map(|_| WindowTiming {
                samples: 100,
                start_ns: 0,
                end_ns: 1_000_000_000,
            })
            .collect()
    }

    fn gpu_price() -> PriceRow {
        default_prices()
            .into_iter()
            .find(|p| !p.is_for_cpu())
            .expect("a GPU offering")
    }

    fn run(edit: impl FnOnce(&mut RunMeasurements)) -> RunMeasurements {
        let mut m = RunMeasurements {
            batch_size: 100,
            devices: 1,
            windows: steady(),
            price: Some(gpu_price()),
            ..Default::default()
        };
        edit(&mut m);
        m
    }

    #[test]
    fn a_real_data_set_shorter_than_the_run_is_projected_for_its_own_size() {
        // The MNIST sample: 60,000 training images, 800 trained.
        let s = summarize(&run(|m| m.real_epoch_samples = Some(60_000)));
        assert_eq!(s.epoch_time_s, Some(600.0));
        assert_eq!(s.cost_is_projected, Some(true));
        let basis = s.epoch_basis.unwrap();
        assert!(
            basis.starts_with("projected: the data set's 60000 training samples"),
            "{basis}"
        );
    }

    #[test]
    fn synthetic_data_uses_the_asked_size_else_imagenet_for_images_else_none() {
        let asked = summarize(&run(|m| m.asked_epoch_samples = Some(50_000)));
        assert_eq!(asked.epoch_time_s, Some(500.0));
        assert!(asked
            .epoch_basis
            .unwrap()
            .contains("50000 samples (as asked)"));
        let image = summarize(&run(|m| m.image_model = true));
        assert_eq!(image.epoch_time_s, Some(12_811.67));
        assert!(image.epoch_basis.unwrap().contains("ImageNet-1k"));
        assert_eq!(image.cost_is_projected, Some(true));
        // A text model on synthetic data: no ImageNet epoch for GPT-2.
        let text = summarize(&run(|_| {}));
        assert_eq!((text.epoch_time_s, text.cost_per_epoch_usd), (None, None));
        assert!(text.epoch_basis.unwrap().contains("--epoch-size"));
    }

    #[test]
    fn a_gpu_price_on_a_cpu_run_is_flagged() {
        let s = summarize(&run(|m| {
            m.image_model = true;
            m.on_cpu = true;
        }));
        let w = s
            .warnings
            .iter()
            .find(|w| w.code == PRICE_FOR_ANOTHER_DEVICE)
            .expect("the warning");
        assert!(w.message.contains("trained on the CPU"), "{}", w.message);
        let on_gpu = summarize(&run(|m| m.image_model = true));
        assert!(on_gpu
            .warnings
            .iter()
            .all(|w| w.code != PRICE_FOR_ANOTHER_DEVICE));
    }
}

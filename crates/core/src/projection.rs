//! What a measured run would do on hardware it did not run on — always a
//! band, always labelled projected, never mixed with measurements.
//!
//! **By the step's parts** (a run measured on a GPU of the peak table, or on
//! the CPU with another thread count as the target): the measured step is
//! split into compute-bound time (matrix products, convolutions, attention;
//! or forward + backward where no operator profile was taken), memory-bound
//! time (normalisation, elementwise, the optimizer, copies; or the
//! optimizer's part) and time that does not follow the device (data
//! loading, framework code between operators, communication). Compute-bound
//! time scales with the ratio of dense peaks if it is compute-bound as
//! labelled and with the ratio of memory bandwidths if its kernels are in
//! truth bandwidth-bound — the band takes the better and the worse of the
//! two; memory-bound time scales with the bandwidth ratio; the rest stays.
//! The band's middle is the geometric mean of its ends.
//!
//! **By MFU** (a run measured on a CPU projected to a GPU, whose peaks are
//! not comparable): the target's dense peak × the MFU range that published
//! results of the run's model family reach (`core::published`, the plausible
//! rows), ÷ the run's FLOPs per sample. A model outside the catalogue (a
//! library name, a file, a script) has no family, so the generic range; one
//! published result alone is a point, not a range, so it is widened to the
//! generic range too.

use serde::Serialize;

use crate::breakdown::{Part, StepBreakdown};
use crate::protocol::{OpCategory, OperatorProfile};
use crate::published::{implied, judge, published, Verdict};
use crate::reference::GpuPeak;
use crate::spec::Precision;

/// The MFU range used when no published result of the family is plausible.
pub const FALLBACK_MFU: (f64, f64) = (0.10, 0.45);

/// A measured step split by how its time would scale.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepSplit {
    /// Seconds per step bound by compute (peak FLOP/s).
    pub compute_s: f64,
    /// Seconds per step bound by memory bandwidth.
    pub memory_s: f64,
    /// Seconds per step that do not follow the device.
    pub fixed_s: f64,
    /// Where the split came from, in words.
    pub basis: String,
}

/// Splits a measured step (`step_s` seconds) by the operator profile when
/// there is one, else by the step breakdown's parts.
pub fn split(
    step_s: f64,
    breakdown: Option<&StepBreakdown>,
    profile: Option<&OperatorProfile>,
) -> Option<StepSplit> {
    if let Some(p) = profile.filter(|p| p.not_measured.is_none()) {
        let at = |c: OpCategory| p.per_step(c).unwrap_or(0.0);
        let compute = at(OpCategory::MatmulConv) + at(OpCategory::Attention);
        let memory =
            at(OpCategory::NormElementwise) + at(OpCategory::Optimizer) + at(OpCategory::Memory);
        let fixed = at(OpCategory::Other) + at(OpCategory::Communication);
        let total = compute + memory + fixed;
        if total > 0.0 {
            // The categories' shares applied to the measured step.
            return Some(StepSplit {
                compute_s: step_s * compute / total,
                memory_s: step_s * memory / total,
                fixed_s: step_s * fixed / total,
                basis: "the operator profile's categories (matrix products and attention; normalisation, elementwise, optimizer and copies; the rest)".into(),
            });
        }
    }
    let b = breakdown?;
    let at = |part: Part| {
        b.parts
            .iter()
            .filter(|p| p.part == part)
            .map(|p| p.mean_s)
            .sum::<f64>()
    };
    let compute = at(Part::Forward) + at(Part::Backward) + at(Part::Step);
    let memory = at(Part::Optimizer);
    let fixed = at(Part::Data) + at(Part::Communication);
    let total = compute + memory + fixed;
    (total > 0.0).then(|| StepSplit {
        compute_s: step_s * compute / total,
        memory_s: step_s * memory / total,
        fixed_s: step_s * fixed / total,
        basis: "the step breakdown (forward and backward as compute-bound, the optimizer as memory-bound, data loading and communication as fixed)".into(),
    })
}

/// The target against the source: how much more peak and bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratios {
    pub peak: f64,
    pub bandwidth: f64,
}

impl Ratios {
    /// One GPU against another at a precision.
    pub fn gpus(from: &GpuPeak, to: &GpuPeak, p: Precision) -> Ratios {
        Ratios {
            peak: to.tflops(p) / from.tflops(p),
            bandwidth: to.memory_bandwidth_tb_s / from.memory_bandwidth_tb_s,
        }
    }

    /// The same CPU with another number of compute threads: peak in
    /// proportion; bandwidth held (one socket's memory does not grow with
    /// threads), which is the band's cautious end.
    pub fn threads(from: u32, to: u32) -> Ratios {
        Ratios {
            peak: f64::from(to.max(1)) / f64::from(from.max(1)),
            bandwidth: 1.0,
        }
    }
}

/// A projected throughput band, samples/s.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Band {
    pub low: f64,
    pub mid: f64,
    pub high: f64,
}

impl Band {
    fn of(low: f64, high: f64) -> Band {
        Band {
            low,
            mid: (low * high).sqrt(),
            high,
        }
    }

    /// The same band for another quantity that is inversely proportional
    /// (seconds per epoch from samples/s: `k / x`).
    pub fn inverse(&self, k: f64) -> Band {
        Band {
            low: k / self.high,
            mid: k / self.mid,
            high: k / self.low,
        }
    }
}

/// Throughput by the step's parts: `batch` samples per step of `split`.
pub fn by_parts(batch: f64, s: &StepSplit, r: Ratios) -> Band {
    let best = s.compute_s / r.peak.max(r.bandwidth) + s.memory_s / r.bandwidth + s.fixed_s;
    let worst = s.compute_s / r.peak.min(r.bandwidth) + s.memory_s / r.bandwidth + s.fixed_s;
    Band::of(batch / worst, batch / best)
}

/// The MFU range published results of `family` reach (plausible rows only),
/// with how many rows it rests on; the fallback range when none.
pub fn published_mfu(family_of: impl Fn(&str) -> bool) -> ((f64, f64), usize) {
    let mfus: Vec<f64> = published()
        .iter()
        .filter(|r| family_of(&r.studio_model))
        .filter_map(|r| {
            let i = implied(r);
            (judge(r, &i).verdict == Verdict::Plausible)
                .then(|| i.iter().filter_map(|x| x.mfu).reduce(f64::max))
                .flatten()
        })
        .collect();
    match (
        mfus.iter().copied().reduce(f64::min),
        mfus.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) => ((lo, hi), mfus.len()),
        _ => (FALLBACK_MFU, 0),
    }
}

/// How an MFU range was found: from how many plausible published results of
/// the model's family, and whether the generic range widened it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MfuRange {
    pub low: f64,
    pub high: f64,
    pub rows: usize,
    pub widened: bool,
}

impl MfuRange {
    /// Where the range comes from, in words.
    pub fn basis(&self) -> String {
        let generic = format!(
            "{:.0}–{:.0} %",
            100.0 * FALLBACK_MFU.0,
            100.0 * FALLBACK_MFU.1
        );
        match (self.rows, self.widened) {
            (0, _) => format!("no published result of this family: the generic {generic}"),
            (1, true) => format!(
                "the one published result of this model family, widened to the generic {generic}: one result is no range"
            ),
            (n, _) => format!("what {n} published results of this model family reach"),
        }
    }
}

/// The MFU range a run of `model` is projected with: what the plausible
/// published results of its catalogue family reach. A model outside the
/// catalogue has no family (a library name, a file, a script: none of the
/// published results is of it), so the generic range; a family with one
/// result takes the generic range around it.
pub fn family_mfu(model: &str) -> MfuRange {
    let family_of = |m: &str| crate::models::lookup(m).map(|e| e.default_config().family());
    let Some(family) = family_of(model) else {
        return MfuRange {
            low: FALLBACK_MFU.0,
            high: FALLBACK_MFU.1,
            rows: 0,
            widened: false,
        };
    };
    MfuRange::of(published_mfu(|m| family_of(m) == Some(family)))
}

impl MfuRange {
    /// The range of [`published_mfu`]'s answer, the generic one around a
    /// single result.
    pub fn of(((low, high), rows): ((f64, f64), usize)) -> MfuRange {
        let widened = rows == 1;
        MfuRange {
            low: if widened {
                low.min(FALLBACK_MFU.0)
            } else {
                low
            },
            high: if widened {
                high.max(FALLBACK_MFU.1)
            } else {
                high
            },
            rows,
            widened,
        }
    }
}

/// Throughput by MFU: the target's peak × the MFU range ÷ FLOPs per sample.
pub fn by_mfu(flops_per_sample: f64, target: &GpuPeak, p: Precision, mfu: (f64, f64)) -> Band {
    let peak = target.tflops(p) * 1e12;
    Band::of(
        mfu.0 * peak / flops_per_sample,
        mfu.1 * peak / flops_per_sample,
    )
}

#[cfg(test)]
mod tests;

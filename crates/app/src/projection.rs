//! A stored run projected to hardware it did not run on, once for both
//! shells (`core::projection` holds the method): throughput, epoch time and
//! cost per epoch as bands, memory fit where the run measured device
//! memory — every figure labelled projected.

use serde::Serialize;
use trainbench_core::projection::{by_mfu, by_parts, family_mfu, split, Band, Ratios};
use trainbench_core::record::RunDetail;
use trainbench_core::reference::{gpu_peak_for, gpu_peaks, GpuPeak};

use crate::error::{AppError, AppResult};
use crate::workspace::Workspace;

/// Where to project to.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A GPU of the peak table, by any name it matches ("H200", "A100 80GB").
    Gpu(String),
    /// The run's own CPU with this many compute threads.
    Threads(u32),
}

/// A run projected: every figure is projected, never measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Projected {
    pub run_id: i64,
    /// "projected" — on every projection, so no reader takes it for a measurement.
    pub label: &'static str,
    pub from: String,
    pub to: String,
    pub measured_samples_per_s: f64,
    /// Samples/s per run (all its devices), low, middle, high.
    pub samples_per_s: Band,
    pub epoch_s: Option<Band>,
    pub cost_per_epoch_usd: Option<Band>,
    /// The price it used (offering, $/device-hour, as of), or why none.
    pub price: String,
    pub memory: String,
    /// Joules per sample (all devices), or `None` with why in `energy`.
    pub energy_j_per_sample: Option<Band>,
    pub energy: String,
    /// The method and what it rested on, in words.
    pub method: String,
}

fn target_peak(name: &str) -> AppResult<GpuPeak> {
    // A name is matched loosely (`H100` finds `H100 SXM`): a line break or a
    // hidden character must not ride along into the label.
    let unseen = |c: char| c.is_control() || trainbench_core::spec::env_safety::is_spoofing(c);
    if name.trim().is_empty() || name.chars().count() > 100 || name.chars().any(unseen) {
        return Err(AppError::bad(
            "gpu",
            format!(
                "gpu = {} is not allowed: expected a GPU name of the peak table on one line (at most 100 characters, no control or invisible characters)",
                name.escape_debug()
            ),
        ));
    }
    gpu_peaks()
        .into_iter()
        .find(|p| p.device.eq_ignore_ascii_case(name))
        .or_else(|| gpu_peak_for(name))
        .ok_or_else(|| {
            let known: Vec<String> = gpu_peaks().into_iter().map(|p| p.device).collect();
            AppError::bad(
                "gpu",
                format!(
                    "gpu = {name} is not allowed: expected one of {}",
                    known.join(", ")
                ),
            )
        })
}

impl Target {
    /// The target a person chose: a GPU or a thread count, exactly one.
    pub fn choose(gpu: Option<String>, threads: Option<u32>) -> AppResult<Target> {
        match (gpu, threads) {
            (Some(g), None) => Ok(Target::Gpu(g)),
            (None, Some(n)) if n >= 1 => Ok(Target::Threads(n)),
            (None, Some(n)) => Err(AppError::bad(
                "threads",
                format!("threads = {n} is not allowed: expected a whole number ≥ 1"),
            )),
            (Some(g), Some(n)) => Err(AppError::bad(
                "gpu",
                format!("gpu = {g} with threads = {n} is not allowed: expected a GPU of the peak table or a thread count of this CPU, one of them, not both"),
            )),
            (None, None) => Err(AppError::bad(
                "gpu",
                "gpu = (missing) is not allowed: expected a GPU of the peak table or a thread count of this CPU, one of them",
            )),
        }
    }
}

/// Projects run `id` to `target`.
pub fn project(ws: &Workspace, id: i64, target: &Target) -> AppResult<Projected> {
    project_detail(ws, &ws.run_detail(id)?, target)
}

/// Projects a run already read to `target`.
pub fn project_detail(ws: &Workspace, d: &RunDetail, target: &Target) -> AppResult<Projected> {
    let id = d.row.id;
    let s = d.row.summary.as_ref();
    let Some(rate) = s.and_then(|s| s.throughput_samples_per_s) else {
        return Err(AppError::bad(
            "run",
            format!("run = {id} is not allowed: it has no steady throughput to project from (it did not complete its timed windows)"),
        ));
    };
    let batch = s.map_or(1, |s| s.global_batch) as f64;
    stored_figure(id, "throughput_samples_per_s", rate)?;
    stored_figure(id, "global_batch", batch)?;
    if let Some(t) = s.and_then(|s| s.epoch_time_s) {
        stored_figure(id, "epoch_time_s", t)?;
    }
    let step_s = batch / rate;
    let flops = d
        .hello
        .as_ref()
        .and_then(|h| h["flops_per_sample"].as_f64())
        .unwrap_or(0.0);
    let source_gpu = d.row.measured_on.gpu.as_deref().and_then(gpu_peak_for);
    let threads = d
        .hello
        .as_ref()
        .and_then(|h| h["threads"].as_u64())
        .unwrap_or(1) as u32;
    let from = match (&d.row.measured_on.gpu, &source_gpu) {
        (Some(g), Some(p)) => format!("{g} ({})", p.device),
        (Some(g), None) => format!("{g} (not in the peak table)"),
        (None, _) => format!(
            "this run's CPU, {threads} thread{}",
            if threads == 1 { "" } else { "s" }
        ),
    };
    let parts = split(
        step_s,
        s.and_then(|s| s.breakdown.as_ref()),
        d.profile.as_ref(),
    );
    let (to, band, method, peak) = match target {
        Target::Threads(n) => {
            if d.row.measured_on.gpu.is_some() {
                return Err(AppError::bad("threads", format!("threads = {n} is not allowed: run {id} trained on a GPU; project it with --gpu")));
            }
            let caution = within_the_machine(d, *n)?;
            let p = parts.ok_or_else(|| no_split(id))?;
            let band = by_parts(batch, &p, Ratios::threads(threads, *n));
            let method = format!("by the step's parts from {}; compute-bound time at {n}/{threads} the speed at best and unchanged at worst (memory bandwidth held){caution}", p.basis);
            (
                format!("the same CPU, {n} thread{}", if *n == 1 { "" } else { "s" }),
                band,
                method,
                None,
            )
        }
        Target::Gpu(name) => {
            let to = target_peak(name)?;
            let (band, method) = match (&source_gpu, parts) {
                (Some(from), Some(p)) => (
                    by_parts(batch, &p, Ratios::gpus(from, &to, d.row.precision)),
                    format!("by the step's parts from {}, scaled by the dense peaks ({} → {} TFLOP/s) and memory bandwidths ({} → {} TB/s)", p.basis, from.tflops(d.row.precision), to.tflops(d.row.precision), from.memory_bandwidth_tb_s, to.memory_bandwidth_tb_s),
                ),
                _ => {
                    let mfu = family_mfu(&d.row.model);
                    let range = (mfu.low, mfu.high);
                    let caution = small_model_caution(d.row.param_count, &d.row.model);
                    let per_device = by_mfu(flops.max(1.0), &to, d.row.precision, range);
                    let n = f64::from(d.row.devices.max(1));
                    (
                        Band { low: per_device.low * n, mid: per_device.mid * n, high: per_device.high * n },
                        format!(
                            "by MFU: the {} dense peak ({} TFLOP/s) × {:.0}–{:.0} % MFU ({}) ÷ {:.3} GFLOP per sample; a CPU's step says little about a GPU's{caution}",
                            to.device, to.tflops(d.row.precision), 100.0 * range.0, 100.0 * range.1,
                            mfu.basis(),
                            flops / 1e9
                        ),
                    )
                }
            };
            (to.device.clone(), band, method, Some(to))
        }
    };
    // The epoch's own samples (a measured epoch's time includes its warm-up,
    // so its time × the steady rate is more than the epoch); a run stored
    // before they were kept: its epoch time at the steady rate.
    let epoch_samples = s.and_then(|s| {
        s.epoch_samples
            .map(|n| n as f64)
            .or_else(|| s.epoch_time_s.map(|t| t * rate))
    });
    let epoch_s = epoch_samples.map(|n| band.inverse(n));
    let (cost, price) = cost(ws, peak.as_ref(), epoch_s.as_ref(), d.row.devices)?;
    let energy = energy(peak.as_ref(), &band, d.row.devices);
    Ok(Projected {
        run_id: id,
        label: "projected",
        from,
        to,
        measured_samples_per_s: rate,
        samples_per_s: band,
        epoch_s,
        cost_per_epoch_usd: cost,
        price,
        memory: memory_fit(d, peak.as_ref()),
        energy_j_per_sample: energy.0,
        energy: energy.1,
        method,
    })
}

/// Share of the board's power limit a training run draws, low and high end:
/// the H100 runs measured here drew 84–89 % of their 700 W limit.
pub const POWER_SHARE: (f64, f64) = (0.5, 1.0);

/// Energy per sample from the board's power limit × a share of it over the
/// projected throughput.
fn energy(peak: Option<&GpuPeak>, band: &Band, devices: u32) -> (Option<Band>, String) {
    let Some(p) = peak else {
        return (
            None,
            "not projected: a CPU's power is not in the peak table".into(),
        );
    };
    let watts = p.board_power_w * f64::from(devices.max(1));
    let e = Band {
        low: POWER_SHARE.0 * watts / band.high,
        mid: (POWER_SHARE.0 * POWER_SHARE.1).sqrt() * watts / band.mid,
        high: POWER_SHARE.1 * watts / band.low,
    };
    (
        Some(e),
        format!(
            "the board's {:.0} W limit at {:.0}–{:.0} % (training on an H100 measured here drew 84–89 %) over the projected throughput",
            p.board_power_w,
            100.0 * POWER_SHARE.0,
            100.0 * POWER_SHARE.1
        ),
    )
}

/// A warning when the run's model is far smaller than every published model
/// of its family: their MFU range overstates what a small model reaches.
fn small_model_caution(params: Option<u64>, model: &str) -> String {
    use trainbench_core::published::{far_smaller, smallest_published_params};
    match (params, smallest_published_params(model)) {
        (Some(p), Some(m)) if far_smaller(p, m) => format!(
            "; caution: this model has {p} parameters, {:.0}× fewer than the smallest published model of its family ({m}): small models keep a GPU far less busy, so expect the band's low end or below",
            m as f64 / p as f64
        ),
        _ => String::new(),
    }
}

/// The largest figure a stored summary may hold and still be projected
/// from: the session import's bound on every number.
const MAX_FIGURE: f64 = 1e15;

/// Refuses (naming the run and the figure) a stored figure a projection
/// cannot start from: not finite, not above zero, or past the bound.
fn stored_figure(id: i64, name: &str, x: f64) -> AppResult<()> {
    if x.is_finite() && x > 0.0 && x <= MAX_FIGURE {
        return Ok(());
    }
    Err(AppError::bad(
        "run",
        format!("run = {id} is not allowed: its stored {name} = {x} cannot be projected from: expected a finite number > 0 and ≤ 1e15 (the stored summary was edited by hand or is damaged)"),
    ))
}

/// Refuses `threads` past the cores of the machine the run trained on (its
/// provenance's `cpu_cores`): beyond them nothing was measured. Where the
/// cores were not stored, a caution for the method's text (else empty).
fn within_the_machine(d: &RunDetail, threads: u32) -> AppResult<String> {
    let cores = d.provenance.as_ref().and_then(|p| p["cpu_cores"].as_u64());
    match cores {
        Some(c) if u64::from(threads) > c => Err(AppError::bad(
            "threads",
            format!(
                "threads = {threads} is not allowed: expected 1 to {c}, the {c} cores of the machine run {} trained on (beyond them the projection would leave measured ground)",
                d.row.id
            ),
        )),
        Some(_) => Ok(String::new()),
        None if threads > 1 => Ok(format!("; caution: the run's machine's cores were not stored, so {threads} threads may be more than it has: the projection may leave measured ground")),
        None => Ok(String::new()),
    }
}

fn no_split(id: i64) -> AppError {
    AppError::bad("run", format!("run = {id} is not allowed: it has no step breakdown or operator profile to split its step by"))
}

type Cost = (Option<Band>, String);

fn cost(
    ws: &Workspace,
    peak: Option<&GpuPeak>,
    epoch: Option<&Band>,
    devices: u32,
) -> AppResult<Cost> {
    let Some(peak) = peak else {
        return Ok((None, "no price: the target is a CPU".into()));
    };
    let Some(epoch) = epoch else {
        return Ok((
            None,
            "no epoch: the run trained on data without an epoch size".into(),
        ));
    };
    let row = ws
        .prices()?
        .into_iter()
        .map(|e| e.row)
        .find(|r| r.device.eq_ignore_ascii_case(&peak.device));
    Ok(match row {
        Some(r) => {
            let per_s = r.usd_per_device_hour * f64::from(devices.max(1)) / 3600.0;
            (
                Some(Band {
                    low: epoch.low * per_s,
                    mid: epoch.mid * per_s,
                    high: epoch.high * per_s,
                }),
                format!(
                    "{} at ${:.2} per device-hour (as of {})",
                    r.offering, r.usd_per_device_hour, r.as_of
                ),
            )
        }
        None => (
            None,
            format!(
                "no price for {} in the price table (`trainbench prices add`)",
                peak.device
            ),
        ),
    })
}

/// Whether the run's measured device memory fits the target's.
fn memory_fit(d: &RunDetail, to: Option<&GpuPeak>) -> String {
    let Some(to) = to else {
        return "the same machine: unchanged".into();
    };
    let s = d.row.summary.as_ref();
    let on_device = s.is_some_and(|s| {
        s.peak_memory_device
            .as_deref()
            .is_some_and(|dev| dev.starts_with("cuda"))
    });
    match s.and_then(|s| s.peak_memory_bytes).filter(|_| on_device) {
        Some(b) => {
            // The peak table's sizes are the boards' binary gigabytes (an
            // H100's "80 GB" is 81,559 MiB), so the peak is read in GiB too.
            let gib = b as f64 / f64::from(1u32 << 30);
            if gib <= to.memory_gb * 0.9 {
                format!(
                    "fits: the framework's peak of {gib:.1} GiB on the device against {} GiB",
                    to.memory_gb
                )
            } else {
                format!(
                    "does not fit: the framework's peak of {gib:.1} GiB against {} GiB (90 % usable)",
                    to.memory_gb
                )
            }
        }
        None => format!(
            "not projected: the run measured host memory, not a GPU's ({} has {} GiB)",
            to.device, to.memory_gb
        ),
    }
}

/// The PDF's section projecting each compared run to an H100 SXM (the GPU
/// most published results use), labelled projected; `None` when none projects.
pub fn projection_section(
    ws: &Workspace,
    runs: &[RunDetail],
) -> Option<trainbench_report::document::Section> {
    let target = Target::Gpu("H100 SXM".into());
    let rows: Vec<Vec<String>> = runs
        .iter()
        .filter_map(|d| {
            if d.row
                .measured_on
                .gpu
                .as_deref()
                .and_then(gpu_peak_for)
                .is_some_and(|p| p.device == "H100 SXM")
            {
                return None;
            }
            let p = project_detail(ws, d, &target).ok()?;
            let b = &p.samples_per_s;
            Some(vec![
                format!("#{}", d.row.id),
                p.from.clone(),
                format!("{:.1}", p.measured_samples_per_s),
                format!("{:.0} – {:.0} (middle {:.0})", b.low, b.high, b.mid),
                match p.method.split_once("; caution: ") {
                    Some((m, c)) => format!("{}; caution: {c}", m.split(';').next().unwrap_or(m)),
                    None => p.method.split(';').next().unwrap_or_default().to_owned(),
                },
            ])
        })
        .collect();
    (!rows.is_empty()).then(|| trainbench_report::document::Section {
        heading: "What if: projected to an H100 SXM".into(),
        text: "PROJECTED, not measured: each run's throughput on an H100 SXM as a band, by its step's parts (a run measured on a GPU of the peak table) or by the MFU published results of its model family reach (a run measured on a CPU). `trainbench project RUN --gpu NAME` projects to any GPU of the peak table; docs/metrics.md gives the method and its measured error.".into(),
        headers: ["Run", "Measured on", "Measured samples/s", "Projected samples/s", "Method"].map(String::from).to_vec(),
        widths: vec![30.0, 110.0, 70.0, 120.0, 170.0],
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_name_with_a_line_break_or_hidden_character_is_refused_and_both_targets_are_named() {
        assert!(target_peak("H100").is_ok());
        for name in [
            "H100\nH200",
            "H100\u{202e}",
            "H\u{200b}100",
            " ",
            &"H".repeat(101),
        ] {
            let e = target_peak(name).unwrap_err().to_string();
            assert!(e.contains("on one line"), "{name:?}: {e}");
        }
        let both = Target::choose(Some("H200".into()), Some(2))
            .unwrap_err()
            .to_string();
        assert!(both.contains("gpu = H200 with threads = 2"), "{both}");
        assert!(both.contains("not both"), "{both}");
    }
}

//! The GPU acceptance checks (`trainbench gpu-check`): what every run of the
//! suite must show before its GPU numbers can be trusted — it completed, the
//! allocator peak and NVML's memory, utilisation, power and energy were
//! stored, energy per sample and MFU are present and physically plausible,
//! the GPU was recognised by its exact SKU (or said to be unknown), and
//! amp-fp16 ran with dynamic loss scaling. Pure: the CLI feeds stored runs in.

use serde::{Deserialize, Serialize};

use crate::record::RunDetail;
use crate::reference::gpu_peak_for;
use crate::spec::Precision;
use crate::summary::RunStatus;

/// Energy from the counter and mean power × time may differ by this much.
pub const ENERGY_POWER_TOLERANCE: f64 = 0.10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    /// Reported as it is, not a failure: an unknown GPU, a run warning.
    Note,
    /// The check does not apply to this run.
    NotApplicable,
}

impl Verdict {
    pub fn symbol(self) -> &'static str {
        match self {
            Verdict::Pass => "ok",
            Verdict::Fail => "FAIL",
            Verdict::Note => "note",
            Verdict::NotApplicable => "-",
        }
    }
}

/// One check of one run, with the evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Stable key: `completed`, `allocator_peak`, `nvml_samples`, `energy`,
    /// `mfu`, `gpu_sku`, `loss_scaling`, `run_warnings`.
    pub key: String,
    pub verdict: Verdict,
    pub evidence: String,
}

/// The checks' keys with a short column title, in table order.
pub const CHECKS: [(&str, &str); 8] = [
    ("completed", "done"),
    ("allocator_peak", "alloc"),
    ("nvml_samples", "nvml"),
    ("energy", "energy"),
    ("mfu", "mfu"),
    ("gpu_sku", "sku"),
    ("loss_scaling", "scale"),
    ("run_warnings", "warn"),
];

fn check(key: &str, verdict: Verdict, evidence: impl Into<String>) -> Check {
    Check {
        key: key.into(),
        verdict,
        evidence: evidence.into(),
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// Every check of one run of the suite.
pub fn check_run(d: &RunDetail) -> Vec<Check> {
    vec![
        completed(d),
        allocator_peak(d),
        nvml_samples(d),
        energy(d),
        mfu(d),
        gpu_sku(d),
        loss_scaling(d),
        run_warnings(d),
    ]
}

/// The run completed.
fn completed(d: &RunDetail) -> Check {
    use Verdict::{Fail, Pass};
    if d.row.status == RunStatus::Completed {
        check("completed", Pass, "completed")
    } else {
        check(
            "completed",
            Fail,
            format!(
                "{}: {}",
                d.row.status.as_str(),
                d.row
                    .status_reason
                    .as_deref()
                    .unwrap_or("no reason recorded")
            ),
        )
    }
}

/// The framework allocator's peak on a GPU was reported.
fn allocator_peak(d: &RunDetail) -> Check {
    use Verdict::{Fail, Pass};
    match d
        .memory
        .iter()
        .filter(|m| m.source == "allocator" && m.device.starts_with("cuda"))
        .max_by_key(|m| m.peak_bytes)
    {
        Some(m) => check(
            "allocator_peak",
            Pass,
            format!(
                "{} on {} (framework allocator)",
                gib(m.peak_bytes),
                m.device
            ),
        ),
        None => check(
            "allocator_peak",
            Fail,
            "no framework allocator peak on a GPU was reported",
        ),
    }
}

/// NVML sampled the GPU with every reading during the steady windows.
fn nvml_samples(d: &RunDetail) -> Check {
    use Verdict::{Fail, Pass};
    let s = d.row.summary.as_ref();
    let g = s.and_then(|s| s.gpu.as_ref());
    match g {
        Some(g) => {
            // Readings in the span's first second still average warm-up
            // (`NVML_AVERAGING_NS`): a shorter span has none to average.
            let short = g.steady_s * 1e9 <= crate::telemetry::NVML_AVERAGING_NS as f64;
            let short_note = format!(
                "power and utilisation (the steady span, {:.2} s, is not longer than NVML's 1 s averaging; run more steps)",
                g.steady_s
            );
            let missing: Vec<&str> = [
                ("memory", g.peak_mem_used_bytes.is_none()),
                (
                    short_note.as_str(),
                    short && (g.mean_util_percent.is_none() || g.mean_power_w.is_none()),
                ),
                ("utilisation", !short && g.mean_util_percent.is_none()),
                ("power", !short && g.mean_power_w.is_none()),
                ("energy", g.energy_j.is_none()),
            ]
            .iter()
            .filter(|(_, m)| *m)
            .map(|(n, _)| *n)
            .collect();
            if g.samples >= 2 && missing.is_empty() {
                check(
                    "nvml_samples",
                    Pass,
                    format!(
                        "{} samples of {} with memory, utilisation, power and energy",
                        g.samples,
                        g.sources.join(", ")
                    ),
                )
            } else {
                check(
                    "nvml_samples",
                    Fail,
                    format!(
                        "{} samples of {}; missing: {}",
                        g.samples,
                        g.sources.join(", "),
                        if missing.is_empty() {
                            "a second sample".to_string()
                        } else {
                            missing.join(", ")
                        }
                    ),
                )
            }
        }
        None => check(
            "nvml_samples",
            Fail,
            "no NVML sample of the run's GPU during its steady windows",
        ),
    }
}

/// Energy per sample agrees with mean power × time.
fn energy(d: &RunDetail) -> Check {
    use Verdict::{Fail, Pass};
    let s = d.row.summary.as_ref();
    let g = s.and_then(|s| s.gpu.as_ref());
    match (s.and_then(|s| s.energy_j_per_sample), g) {
            (Some(j), Some(g)) if j > 0.0 => match (g.energy_j, g.mean_power_w) {
                (Some(e), Some(p)) if p > 0.0 && g.steady_s > 0.0 => {
                    let from_power = p * g.steady_s;
                    let gap = (e - from_power).abs() / from_power;
                    check(
                        "energy",
                        if gap <= ENERGY_POWER_TOLERANCE { Pass } else { Fail },
                        format!(
                            "{j:.4} J/sample; counter {e:.1} J vs mean power {p:.0} W ({} readings from 1 s into the span) × {:.2} s = {from_power:.1} J ({:.1} % apart, ≤ {:.0} % allowed)",
                            g.power_readings,
                            g.steady_s,
                            gap * 100.0,
                            ENERGY_POWER_TOLERANCE * 100.0
                        ),
                    )
                }
                _ => check(
                    "energy",
                    Fail,
                    format!(
                        "{j:.4} J/sample, but no power reading to check it against: NVML averages power over the last second, so only readings at least 1 s into the steady span ({:.2} s of steady windows) count; run more steps",
                        g.steady_s
                    ),
                ),
            },
            (Some(j), _) => check("energy", Fail, format!("{j} J/sample is not physical")),
            (None, _) => check(
                "energy",
                Fail,
                s.map_or("no summary".into(), |s| s.energy_note.clone()),
            ),
        }
}

/// MFU lies in (0, 1], or the device is unknown (a note).
fn mfu(d: &RunDetail) -> Check {
    use Verdict::{Fail, Note, Pass};
    let s = d.row.summary.as_ref();
    match s.and_then(|s| s.mfu) {
        Some(m) if m > 0.0 && m <= 1.0 => check(
            "mfu",
            Pass,
            format!(
                "{:.1} % of the {}",
                m * 100.0,
                s.map_or("", |s| s.mfu_note.as_str())
            ),
        ),
        Some(m) => check(
            "mfu",
            Fail,
            format!("{m:.3} is outside (0, 1]: the FLOPs, the throughput or the peak is wrong"),
        ),
        // An unknown GPU has no peak to divide by: said, not failed.
        None => match s {
            Some(s) if s.mfu_note.starts_with("unknown device") => {
                check("mfu", Note, format!("not computed: {}", s.mfu_note))
            }
            _ => check(
                "mfu",
                Fail,
                s.map_or("no summary".into(), |s| {
                    format!("not measured: {}", s.mfu_note)
                }),
            ),
        },
    }
}

/// The GPU is one the peak table knows.
fn gpu_sku(d: &RunDetail) -> Check {
    use Verdict::{Fail, Note, Pass};
    match d.gpu_name() {
        Some(name) => match gpu_peak_for(&name) {
            Some(p) => check("gpu_sku", Pass, format!("{name} → {}", p.device)),
            None => check(
                "gpu_sku",
                Note,
                format!("{name}: unknown device (no row in the peak table; MFU not computed)"),
            ),
        },
        None => check("gpu_sku", Fail, "no GPU recorded in the run's provenance"),
    }
}

/// amp-fp16 ran with dynamic loss scaling.
fn loss_scaling(d: &RunDetail) -> Check {
    use Verdict::{Fail, NotApplicable, Pass};
    if d.row.precision == Precision::AmpFp16 {
        match d.loss_scale {
            Some(scale) if scale.is_finite() && scale > 0.0 => check(
                "loss_scaling",
                Pass,
                format!("dynamic loss scale {scale} at the end"),
            ),
            Some(scale) => check(
                "loss_scaling",
                Fail,
                format!("loss scale {scale} at the end"),
            ),
            None => check(
                "loss_scaling",
                Fail,
                "the worker reported no loss scale: amp-fp16 ran without dynamic loss scaling",
            ),
        }
    } else {
        check("loss_scaling", NotApplicable, "not amp-fp16")
    }
}

/// The run's own warnings, as a note.
fn run_warnings(d: &RunDetail) -> Check {
    use Verdict::{Note, Pass};
    let s = d.row.summary.as_ref();
    let warnings: Vec<&str> = s
        .map(|s| s.warnings.iter().map(|w| w.message.as_str()).collect())
        .unwrap_or_default();
    if warnings.is_empty() {
        check("run_warnings", Pass, "none")
    } else {
        check("run_warnings", Note, warnings.join("; "))
    }
}

/// Whether a run's checks let the suite pass (notes and n/a do).
pub fn passed(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.verdict != Verdict::Fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RunRow;
    use crate::summary::{summarize, MemoryPeak, RunMeasurements};
    use crate::telemetry::GpuDigest;

    fn detail(
        name: &str,
        precision: &str,
        energy_j: f64,
        power_w: f64,
        loss_scale: Option<f64>,
    ) -> RunDetail {
        let mut m = RunMeasurements {
            tokens_per_sample: None,
            batch_size: 100,
            devices: 1,
            precision: crate::spec::Precision::parse(precision).ok(),
            flops_per_sample: Some(1e12),
            windows: (0..8)
                .map(|i| crate::stats::WindowTiming {
                    samples: 100,
                    start_ns: i * 1_000_000_000,
                    end_ns: (i + 1) * 1_000_000_000,
                })
                .collect(),
            device_name: Some(name.into()),
            device_peak: gpu_peak_for(name),
            ..Default::default()
        };
        m.gpu = Some(GpuDigest {
            sources: vec!["gpu:0".into()],
            samples: 70,
            steady_s: 7.0,
            energy_j: Some(energy_j),
            energy_note: "counter".into(),
            mean_power_w: Some(power_w),
            power_readings: 0,
            mean_util_percent: Some(97.0),
            peak_mem_used_bytes: Some(1 << 30),
            slowdown_bits: 0,
            slowdown_samples: 0,
            max_other_processes: 0,
        });
        let summary = summarize(&m);
        RunDetail {
            row: RunRow {
                id: 1,
                sweep_id: None,
                config_key: "k".into(),
                scaling_key: "k".into(),
                repeat_index: 0,
                framework: crate::Framework::Pytorch,
                environment: None,
                model: "vit_base_patch16_224".into(),
                precision: Precision::parse(precision).unwrap(),
                compile: crate::spec::Compile::Off,
                device: crate::Device::Cuda(0),
                devices: 1,
                parallel: crate::spec::Parallel::Ddp,
                batch_size: 100,
                data: crate::DataSource::Synthetic,
                status: RunStatus::Completed,
                status_reason: None,
                error_class: None,
                exit_code: Some(0),
                created_unix_ms: 0,
                started_unix_ms: None,
                ended_unix_ms: None,
                param_count: None,
                price_offering: None,
                origin: None,
                measured_on: Default::default(),
                summary: Some(summary),
                env: Default::default(),
                threads: None,
                cudnn_benchmark: None,
            },
            spec: serde_json::json!({}),
            hello: None,
            provenance: Some(serde_json::json!({"gpus": [{"index": 0, "name": name}]})),
            stderr_tail: None,
            first_step_train_s: None,
            compile_s: None,
            loss_scale,
            step_timings: None,
            compiles: None,
            profile: None,
            windows: Vec::new(),
            evals: Vec::new(),
            memory: vec![MemoryPeak {
                device: "cuda:0".into(),
                source: "allocator".into(),
                peak_bytes: 3 << 30,
            }],
            telemetry_samples: 70,
            telemetry_raw_samples: None,
        }
    }

    fn verdict(checks: &[Check], key: &str) -> Verdict {
        checks.iter().find(|c| c.key == key).unwrap().verdict
    }

    #[test]
    fn a_consistent_h100_run_passes_every_check() {
        // 100 samples/s × 1e12 FLOPs ÷ 989e12 ≈ 0.0001 MFU; 400 W × 7 s = 2800 J.
        let c = check_run(&detail(
            "NVIDIA H100 80GB HBM3",
            "amp-fp16",
            2800.0,
            400.0,
            Some(65536.0),
        ));
        assert!(passed(&c), "{c:?}");
        assert!(c
            .iter()
            .find(|x| x.key == "gpu_sku")
            .unwrap()
            .evidence
            .contains("H100 SXM"));
    }

    #[test]
    fn a_steady_span_within_the_power_average_says_to_run_longer() {
        let mut d = detail("NVIDIA H100 80GB HBM3", "fp32", 360.0, 400.0, None);
        let g = d.row.summary.as_mut().unwrap().gpu.as_mut().unwrap();
        (g.steady_s, g.mean_power_w, g.mean_util_percent) = (0.9, None, None);
        let c = check_run(&d);
        let of = |key: &str| c.iter().find(|x| x.key == key).unwrap();
        assert_eq!(of("nvml_samples").verdict, Verdict::Fail);
        assert!(
            of("nvml_samples")
                .evidence
                .contains("not longer than NVML's 1 s averaging"),
            "{c:?}"
        );
        assert!(!of("nvml_samples").evidence.contains("missing: utilisation"));
        assert_eq!(of("energy").verdict, Verdict::Fail);
        assert!(of("energy").evidence.contains("run more steps"), "{c:?}");
    }

    #[test]
    fn implausible_or_missing_figures_fail_and_unknown_gpus_are_notes() {
        // Energy 20 % away from power × time.
        let c = check_run(&detail("NVIDIA H100 PCIe", "fp32", 3360.0, 400.0, None));
        assert_eq!(verdict(&c, "energy"), Verdict::Fail);
        assert_eq!(verdict(&c, "loss_scaling"), Verdict::NotApplicable);
        // amp-fp16 without a reported loss scale.
        let c = check_run(&detail("NVIDIA H100 NVL", "amp-fp16", 2800.0, 400.0, None));
        assert_eq!(verdict(&c, "loss_scaling"), Verdict::Fail);
        // Unknown GPU: reported, MFU not computed; both notes, not failures.
        let c = check_run(&detail("Tesla T4", "fp32", 2800.0, 400.0, None));
        assert_eq!(verdict(&c, "gpu_sku"), Verdict::Note);
        assert_eq!(verdict(&c, "mfu"), Verdict::Note);
        assert!(passed(&c));
        // MFU above 1 is not physical.
        let mut d = detail("NVIDIA H100 80GB HBM3", "fp32", 2800.0, 400.0, None);
        d.row.summary.as_mut().unwrap().mfu = Some(1.7);
        assert_eq!(verdict(&check_run(&d), "mfu"), Verdict::Fail);
    }
}

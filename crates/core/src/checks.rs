//! Validity checks: for each run, whether its numbers can be trusted, as a
//! badge with its evidence. A failing check is also a run warning, so a
//! comparison that includes the run says so. Thresholds are justified in
//! `docs/metrics.md` ("Validity checks").

use serde::{Deserialize, Serialize};

use crate::breakdown::{fmt_s, StepBreakdown};
use crate::protocol::CompileCount;
use crate::stats::{mean_var, WindowTiming};
use crate::telemetry::{slowdown_names, GpuDigest};

/// What a check looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// The training loss stayed finite.
    FiniteLoss,
    /// The steady windows agree with each other (coefficient of variation).
    WindowSpread,
    /// NVML saw no clock slowdown reason during the steady windows.
    GpuThrottle,
    /// No other process used the run's GPUs during the steady windows.
    GpuShared,
    /// Model FLOPs utilisation is inside (0, 1].
    MfuRange,
    /// Host-side data preparation is shorter than the step's compute.
    InputBound,
    /// The training step was not compiled again after step 1.
    Recompiles,
}

impl CheckKind {
    pub const ALL: [CheckKind; 7] = [
        CheckKind::FiniteLoss,
        CheckKind::WindowSpread,
        CheckKind::GpuThrottle,
        CheckKind::GpuShared,
        CheckKind::MfuRange,
        CheckKind::InputBound,
        CheckKind::Recompiles,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::FiniteLoss => "finite_loss",
            CheckKind::WindowSpread => "window_spread",
            CheckKind::GpuThrottle => "gpu_throttle",
            CheckKind::GpuShared => "gpu_shared",
            CheckKind::MfuRange => "mfu_range",
            CheckKind::InputBound => "input_bound",
            CheckKind::Recompiles => "recompiles",
        }
    }

    /// The badge's words.
    pub fn label(self) -> &'static str {
        match self {
            CheckKind::FiniteLoss => "loss finite",
            CheckKind::WindowSpread => "windows steady",
            CheckKind::GpuThrottle => "GPU not throttled",
            CheckKind::GpuShared => "GPU not shared",
            CheckKind::MfuRange => "MFU in (0, 1]",
            CheckKind::InputBound => "not input-bound",
            CheckKind::Recompiles => "no recompilation",
        }
    }

    /// The run warning code a failure of this check carries (the two GPU
    /// codes predate the checks and stay as they were).
    pub fn warning_code(self) -> &'static str {
        match self {
            CheckKind::GpuThrottle => "gpu_slowdown",
            CheckKind::GpuShared => "other_gpu_processes",
            k => k.as_str(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Pass,
    Fail,
    /// The run did not measure what the check needs.
    NotMeasured,
    /// The check has no meaning for this run (a GPU check on a CPU run,
    /// recompilation under eager execution).
    NotApplicable,
}

impl CheckStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Pass => "pass",
            CheckStatus::Fail => "fail",
            CheckStatus::NotMeasured => "not measured",
            CheckStatus::NotApplicable => "not applicable",
        }
    }
}

/// One badge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ValidityCheck {
    pub kind: CheckKind,
    pub status: CheckStatus,
    /// What was seen, with the figures.
    pub evidence: String,
}

/// Coefficient of variation of the steady windows' throughputs above which
/// the windows are "too spread". With the usual 10–20 steady windows, a CV of
/// 15 % puts the standard error of their mean at 3.4–4.7 %, so one run could
/// no longer tell apart two configurations 10 % apart; a GPU run on a quiet
/// machine shows 1–2 %, and tiny CPU models on this project's busy 2-core
/// machine 7–11 % (measured, `docs/metrics.md`).
pub const MAX_WINDOW_CV: f64 = 0.15;

/// What the checks read, beyond the summary's own figures.
#[derive(Debug, Clone, Default)]
pub struct CheckInputs<'a> {
    /// The steady windows (after warm-up).
    pub steady_windows: &'a [WindowTiming],
    /// The worker's error, class and message, when the run failed.
    pub error: Option<(&'a str, &'a str)>,
    /// Whether the run trained on a GPU.
    pub gpu_run: bool,
    pub gpu: Option<&'a GpuDigest>,
    pub mfu: Option<f64>,
    pub mfu_note: &'a str,
    pub breakdown: Option<&'a StepBreakdown>,
    pub compiles: Option<&'a CompileCount>,
    /// How the step ran (the worker's `execution`), to tell eager runs.
    pub execution: Option<&'a str>,
}

fn check(kind: CheckKind, status: CheckStatus, evidence: impl Into<String>) -> ValidityCheck {
    ValidityCheck {
        kind,
        status,
        evidence: evidence.into(),
    }
}

/// Every check, in [`CheckKind::ALL`] order.
pub fn validity_checks(i: &CheckInputs<'_>) -> Vec<ValidityCheck> {
    vec![
        finite_loss(i),
        window_spread(i),
        on_gpu(i, CheckKind::GpuThrottle, gpu_throttle),
        on_gpu(i, CheckKind::GpuShared, gpu_shared),
        mfu_range(i),
        input_bound(i),
        recompiles(i),
    ]
}

/// No loss became NaN or infinite.
fn finite_loss(i: &CheckInputs<'_>) -> ValidityCheck {
    use CheckKind as K;
    use CheckStatus::{Fail, NotMeasured, Pass};
    match i.error {
        Some(("nan_loss", message)) => check(K::FiniteLoss, Fail, message),
        _ if i.steady_windows.is_empty() => check(
            K::FiniteLoss,
            NotMeasured,
            "no timed window was reported (the worker checks the loss at every window)",
        ),
        _ => check(
            K::FiniteLoss,
            Pass,
            format!(
                "no non-finite loss was reported over {} steady window(s): the worker checks each window's mean training loss and each evaluation loss, and stops the run at the first that is not finite",
                i.steady_windows.len()
            ),
        ),
    }
}

/// The steady windows' throughputs agree.
fn window_spread(i: &CheckInputs<'_>) -> ValidityCheck {
    use CheckKind as K;
    use CheckStatus::{Fail, NotMeasured, Pass};
    let throughputs: Vec<f64> = i
        .steady_windows
        .iter()
        .map(WindowTiming::throughput)
        .collect();
    match mean_var(&throughputs) {
        Some((mean, var, n)) if n >= 3 && mean > 0.0 => {
            let cv = var.sqrt() / mean;
            let (lo, hi) = throughputs
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(l, h), x| (l.min(*x), h.max(*x)));
            let evidence = format!(
                "coefficient of variation {:.1} % over {n} steady windows ({lo:.1}–{hi:.1} samples/s; threshold {:.0} %)",
                cv * 100.0,
                MAX_WINDOW_CV * 100.0
            );
            check(
                K::WindowSpread,
                if cv > MAX_WINDOW_CV { Fail } else { Pass },
                evidence,
            )
        }
        _ => check(
            K::WindowSpread,
            NotMeasured,
            format!(
                "{} steady window(s): at least 3 are needed",
                throughputs.len()
            ),
        ),
    }
}

/// A GPU check: not applicable on a CPU, not measured without NVML samples.
fn on_gpu(
    i: &CheckInputs<'_>,
    kind: CheckKind,
    f: fn(&GpuDigest) -> ValidityCheck,
) -> ValidityCheck {
    use CheckStatus::{NotApplicable, NotMeasured};
    match (i.gpu_run, i.gpu) {
        (false, _) => check(kind, NotApplicable, "CPU run: NVML reads GPUs only"),
        (true, None) => check(
            kind,
            NotMeasured,
            "no NVML sample of the run's GPUs during the steady windows",
        ),
        (true, Some(d)) => f(d),
    }
}

/// The GPU's clocks were not held back.
fn gpu_throttle(d: &GpuDigest) -> ValidityCheck {
    use CheckKind as K;
    use CheckStatus::{Fail, Pass};
    if d.slowdown_samples > 0 {
        check(
                K::GpuThrottle,
                Fail,
                format!(
                    "the GPU clocks were held back ({}) in {} of {} NVML samples during the steady windows",
                    slowdown_names(d.slowdown_bits).join(", "),
                    d.slowdown_samples,
                    d.samples
                ),
            )
    } else {
        check(
            K::GpuThrottle,
            Pass,
            format!(
                "no slowdown reason in {} NVML samples during the steady windows",
                d.samples
            ),
        )
    }
}

/// No other process shared the GPU.
fn gpu_shared(d: &GpuDigest) -> ValidityCheck {
    use CheckKind as K;
    use CheckStatus::{Fail, Pass};
    if d.max_other_processes > 0 {
        check(
                K::GpuShared,
                Fail,
                format!(
                    "{} other process(es) used {} during the steady windows: they share the GPU with the run",
                    d.max_other_processes,
                    d.sources.join(", ")
                ),
            )
    } else {
        check(
            K::GpuShared,
            Pass,
            format!(
                "no other process on {} in {} NVML samples",
                d.sources.join(", "),
                d.samples
            ),
        )
    }
}

/// MFU lies in (0, 100 %].
fn mfu_range(i: &CheckInputs<'_>) -> ValidityCheck {
    use CheckKind as K;
    use CheckStatus::{Fail, NotMeasured, Pass};
    match i.mfu {
        Some(m) if m > 0.0 && m <= 1.0 => check(
            K::MfuRange,
            Pass,
            format!("MFU {:.1} % ({})", m * 100.0, i.mfu_note),
        ),
        Some(m) => check(
            K::MfuRange,
            Fail,
            format!(
                "MFU {:.1} % is outside (0, 100 %]: the FLOP count, the throughput or the peak ({}) is wrong",
                m * 100.0,
                i.mfu_note
            ),
        ),
        None => check(K::MfuRange, NotMeasured, format!("no MFU: {}", i.mfu_note)),
    }
}

/// Data loading takes less than compute.
fn input_bound(i: &CheckInputs<'_>) -> ValidityCheck {
    use CheckKind as K;
    use CheckStatus::{Fail, NotMeasured, Pass};
    match i.breakdown {
        Some(b) => {
            let data = b
                .part(crate::breakdown::Part::Data)
                .map_or(0.0, |p| p.mean_s);
            let compute = b.compute_s();
            let evidence = format!(
                "data {} against compute {} per step in the step breakdown ({} steps)",
                fmt_s(data),
                fmt_s(compute),
                b.steps
            );
            check(
                K::InputBound,
                if data >= compute { Fail } else { Pass },
                evidence,
            )
        }
        None => check(K::InputBound, NotMeasured, "no step breakdown"),
    }
}

/// Nothing was compiled again after step 1.
fn recompiles(i: &CheckInputs<'_>) -> ValidityCheck {
    use CheckKind as K;
    use CheckStatus::{Fail, NotApplicable, NotMeasured, Pass};
    let eager = i.execution.is_some_and(|e| e.starts_with("eager"));
    match i.compiles {
        Some(c) if c.after_first_step > 0 => check(
            K::Recompiles,
            Fail,
            format!(
                "the training step was compiled {} more time(s) after step 1 ({})",
                c.after_first_step, c.source
            ),
        ),
        Some(c) => check(
            K::Recompiles,
            Pass,
            format!("no compilation after step 1 ({})", c.source),
        ),
        None if eager => check(
            K::Recompiles,
            NotApplicable,
            "eager execution: nothing is compiled",
        ),
        None => check(
            K::Recompiles,
            NotMeasured,
            "the worker did not count compilations",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::breakdown::breakdown;
    use crate::protocol::{PhaseSeries, StepPhase, StepTimings};

    fn windows(throughputs: &[f64]) -> Vec<WindowTiming> {
        // 100 samples per window: the window lasts 100 / throughput seconds.
        let mut t = 0u64;
        throughputs
            .iter()
            .map(|tp| {
                let d = (100.0 / tp * 1e9) as u64;
                let w = WindowTiming {
                    samples: 100,
                    start_ns: t,
                    end_ns: t + d,
                };
                t += d;
                w
            })
            .collect()
    }

    fn status(checks: &[ValidityCheck], k: CheckKind) -> CheckStatus {
        checks.iter().find(|c| c.kind == k).unwrap().status
    }

    #[test]
    fn a_clean_cpu_run() {
        let w = windows(&[100.0, 104.0, 96.0, 100.0]);
        let c = validity_checks(&CheckInputs {
            steady_windows: &w,
            execution: Some("eager"),
            mfu_note: "unknown device: no accelerator (CPU run)",
            ..Default::default()
        });
        assert_eq!(c.len(), 7);
        use CheckStatus::*;
        let got: Vec<CheckStatus> = c.iter().map(|c| c.status).collect();
        assert_eq!(
            got,
            [
                Pass,
                Pass,
                NotApplicable,
                NotApplicable,
                NotMeasured,
                NotMeasured,
                NotApplicable
            ]
        );
        // Sample s.d. of 100, 104, 96, 100 is 3.266: CV 3.3 %.
        assert!(
            c[1].evidence
                .starts_with("coefficient of variation 3.3 % over 4"),
            "{}",
            c[1].evidence
        );
    }

    #[test]
    fn each_condition_fails_its_own_check() {
        use CheckKind as K;
        let spread = windows(&[100.0, 50.0, 100.0, 100.0]);
        let c = validity_checks(&CheckInputs {
            steady_windows: &spread,
            ..Default::default()
        });
        // Mean 87.5, s.d. 25: CV 28.6 % > 15 %.
        assert_eq!(status(&c, K::WindowSpread), CheckStatus::Fail);

        let c = validity_checks(&CheckInputs {
            error: Some(("nan_loss", "the training loss became nan at step 3")),
            ..Default::default()
        });
        assert_eq!(status(&c, K::FiniteLoss), CheckStatus::Fail);
        assert!(c[0].evidence.contains("step 3"));

        let c = validity_checks(&CheckInputs {
            mfu: Some(1.7),
            mfu_note: "dense peak",
            ..Default::default()
        });
        assert_eq!(status(&c, K::MfuRange), CheckStatus::Fail);

        let t = StepTimings {
            whole_step_s: vec![0.03; 3],
            phases: vec![
                PhaseSeries {
                    phase: StepPhase::Data,
                    seconds: vec![0.02; 3],
                },
                PhaseSeries {
                    phase: StepPhase::Step,
                    seconds: vec![0.01; 3],
                },
            ],
            fused: Some("XLA".into()),
            communication: None,
        };
        let b = breakdown(&t, 8, None).unwrap();
        let c = validity_checks(&CheckInputs {
            breakdown: Some(&b),
            ..Default::default()
        });
        assert_eq!(status(&c, K::InputBound), CheckStatus::Fail);
        assert!(
            c[5].evidence
                .starts_with("data 20.000 ms against compute 10.000 ms"),
            "{}",
            c[5].evidence
        );

        let count = CompileCount {
            after_first_step: 2,
            source: "torch._dynamo unique graphs".into(),
        };
        let c = validity_checks(&CheckInputs {
            compiles: Some(&count),
            execution: Some("torch.compile"),
            ..Default::default()
        });
        assert_eq!(status(&c, K::Recompiles), CheckStatus::Fail);

        let digest = GpuDigest {
            sources: vec!["gpu:0".into()],
            samples: 10,
            steady_s: 1.0,
            energy_j: None,
            energy_note: String::new(),
            mean_power_w: None,
            power_readings: 0,
            mean_util_percent: None,
            peak_mem_used_bytes: None,
            slowdown_bits: 0,
            slowdown_samples: 0,
            max_other_processes: 1,
        };
        let c = validity_checks(&CheckInputs {
            gpu_run: true,
            gpu: Some(&digest),
            ..Default::default()
        });
        assert_eq!(status(&c, K::GpuThrottle), CheckStatus::Pass);
        assert_eq!(status(&c, K::GpuShared), CheckStatus::Fail);
    }
}

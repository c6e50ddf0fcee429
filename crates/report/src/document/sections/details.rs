//! Each run in detail: its configuration and status, its energy and
//! utilisation, and its provenance.

use trainbench_core::compare::Comparison;
use trainbench_core::record::RunDetail;

use crate::document::provenance::RunProvenance;
use crate::document::text::{letter, str_at, text_of};
use crate::document::Page;

/// "Runs": each run's entry, status, framework, execution, precision, size,
/// data, warm-up and time to first step.
pub(crate) fn runs(l: &mut impl Page, c: &Comparison, runs: &[RunDetail]) {
    l.heading("Runs", 12.0);
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let entry = c
                .entries
                .iter()
                .position(|e| e.run_ids.contains(&r.row.id))
                .map_or("—".into(), letter);
            let s = r.row.summary.as_ref();
            vec![
                format!("#{}", r.row.id),
                entry,
                r.row.status.as_str().to_string(),
                format!(
                    "{} {}",
                    r.row.framework,
                    text_of(str_at(&r.hello, &["framework_version"]))
                ),
                text_of(str_at(&r.hello, &["execution"])).replace("not recorded", "—"),
                text_of(str_at(&r.hello, &["precision_in_effect"])),
                format!("{} × {}", r.row.devices, r.row.batch_size),
                r.row.data.to_string(),
                s.map_or("—".into(), |s| {
                    format!("{} / {}", s.windows_warmup, s.windows_total)
                }),
                match (s.and_then(|s| s.time_to_first_step_s), r.compile_s) {
                    (Some(f), Some(cs)) => format!("{f:.2} (compile {cs:.2})"),
                    (Some(f), None) => format!("{f:.2}"),
                    _ => "not measured".into(),
                },
            ]
        })
        .collect();
    l.table(
        &[
            "Run",
            "Entry",
            "Status",
            "Framework",
            "Execution",
            "Precision in effect",
            "Devices × batch",
            "Data",
            "Warm-up / windows",
            "First step, s",
        ],
        &[30.0, 30.0, 50.0, 60.0, 55.0, 70.0, 45.0, 45.0, 45.0, 55.0],
        &rows,
        7.0,
    );
}

/// "Energy and utilisation": MFU, energy per sample, GPU power and
/// utilisation, and each run's own warnings.
pub(crate) fn energy(l: &mut impl Page, runs: &[RunDetail]) {
    l.heading("Energy and utilisation", 12.0);
    l.paragraph(
        "MFU: FLOPs per sample × steady throughput ÷ (the detected device's dense peak at the precision in effect × devices). \
         Energy: NVML's total-energy counter over the steady windows ÷ the samples trained in them. \
         Power and utilisation: NVML's 10 Hz samples over the same span, from 1 s into it (NVML's reading averages the last second). What could not be measured says why.",
        9.0,
        false,
    );
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let s = r.row.summary.as_ref();
            let g = s.and_then(|s| s.gpu.as_ref());
            vec![
                format!("#{}", r.row.id),
                match s.and_then(|s| s.mfu) {
                    Some(m) => format!(
                        "{:.1} % of the {}",
                        m * 100.0,
                        s.map_or("", |s| s.mfu_note.as_str())
                    ),
                    None => s.map_or("not measured".into(), |s| s.mfu_note.clone()),
                },
                match s.and_then(|s| s.energy_j_per_sample) {
                    Some(j) => format!("{j:.4} J"),
                    None => s.map_or("not measured".into(), |s| {
                        if s.energy_note.is_empty() {
                            "not measured".into()
                        } else {
                            s.energy_note.clone()
                        }
                    }),
                },
                g.and_then(|g| g.mean_power_w)
                    .map_or("not measured".into(), |p| format!("{p:.0} W")),
                g.and_then(|g| g.mean_util_percent)
                    .map_or("not measured".into(), |u| format!("{u:.0} %")),
                s.map_or("—".into(), |s| {
                    if s.warnings.is_empty() {
                        "none".into()
                    } else {
                        s.warnings
                            .iter()
                            .map(|w| w.code.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                }),
            ]
        })
        .collect();
    l.table(
        &[
            "Run",
            "MFU",
            "Energy per sample",
            "GPU power",
            "GPU util.",
            "Run warnings",
        ],
        &[30.0, 135.0, 140.0, 45.0, 40.0, 110.0],
        &rows,
        7.0,
    );
}

/// "Provenance": where each run ran and with what software.
pub(crate) fn provenance(l: &mut impl Page, runs: &[RunProvenance]) {
    l.heading("Provenance", 12.0);
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|p| {
            let gpus = p.gpus.join(", ");
            let libraries = p.libraries.join(", ");
            vec![
                format!("#{}", p.run_id),
                match p.imported_run_id {
                    Some(id) => format!("{} (imported, run #{id} there)", p.host),
                    None => p.host.clone(),
                },
                format!("{} ({} cores)", p.cpu_model, p.cpu_cores),
                if gpus.is_empty() {
                    format!("none ({})", p.gpu_probe)
                } else {
                    gpus
                },
                format!("{} / {}", p.nvidia_driver, p.cuda_driver),
                format!("{}; {}", p.os, p.kernel),
                format!(
                    "{} {}{}{}",
                    p.framework,
                    p.framework_version,
                    if libraries.is_empty() { "" } else { "; " },
                    libraries
                ),
                format!("{} ({})", p.studio_version, p.studio_git_revision),
            ]
        })
        .collect();
    l.table(
        &[
            "Run",
            "Host",
            "CPU",
            "GPUs",
            "Driver / CUDA",
            "OS; kernel",
            "Framework and libraries",
            "Studio",
        ],
        &[28.0, 55.0, 80.0, 55.0, 50.0, 80.0, 90.0, 55.0],
        &rows,
        6.5,
    );
}

/// The operator profiles of the runs made with `--profile`: self time per
/// step by category, and each run's top operators.
pub(crate) fn profiles(l: &mut impl Page, runs: &[RunDetail]) {
    use trainbench_core::breakdown::fmt_s;
    use trainbench_core::protocol::OpCategory;
    let with: Vec<&RunDetail> = runs.iter().filter(|r| r.profile.is_some()).collect();
    if with.is_empty() {
        return;
    }
    l.heading("Operator profiles", 12.0);
    l.paragraph(
        "Runs made with --profile: after the timed windows and the step breakdown, one unprofiled step, then a few steps under the framework's own profiler (torch.profiler, libtorch's Kineto profiler for tch, TensorFlow's profiler, jax.profiler); the trace (Chrome trace events, or TensorFlow's XPlane) is reduced to self time per operator (its time less the operators it calls) and per category. On a GPU the kernels on the device's streams are read, on a CPU the operators on the training thread. Idle: the profiled span with no operator running. Figures per step.",
        8.5,
        false,
    );
    let mut header: Vec<String> = vec!["Run".into()];
    header.extend(
        OpCategory::ALL
            .iter()
            .map(|&c| super::category_header(c).to_owned()),
    );
    header.push("idle".into());
    let rows: Vec<Vec<String>> = with
        .iter()
        .map(|r| {
            let Some(p) = r.profile.as_ref() else {
                return Vec::new();
            };
            let mut row = vec![format!("#{}", r.row.id)];
            match &p.not_measured {
                Some(_) => {
                    row.extend((0..=OpCategory::ALL.len()).map(|_| "not measured".to_owned()))
                }
                None => {
                    row.extend(
                        OpCategory::ALL
                            .iter()
                            .map(|c| p.per_step(*c).map_or("—".into(), fmt_s)),
                    );
                    row.push(p.idle_per_step().map_or("—".into(), fmt_s));
                }
            }
            row
        })
        .collect();
    let headers: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut widths = vec![26.0];
    widths.extend((0..=OpCategory::ALL.len()).map(|_| 55.0));
    l.table(&headers, &widths, &rows, 7.5);
    for r in with {
        let Some(p) = &r.profile else { continue };
        let text = match &p.not_measured {
            Some(why) => format!("#{}: not measured: {why}", r.row.id),
            None => {
                let steps = p.steps.max(1) as f64;
                format!(
                    "#{} — {}, {} steps; {}. Top operators by self time per step: {}",
                    r.row.id,
                    p.tool,
                    p.steps,
                    p.what,
                    p.ops
                        .iter()
                        .take(5)
                        .map(|o| format!(
                            "{} {} ({})",
                            o.name,
                            fmt_s(o.self_s / steps),
                            o.category.label()
                        ))
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            }
        };
        l.paragraph(&text, 8.0, false);
    }
}

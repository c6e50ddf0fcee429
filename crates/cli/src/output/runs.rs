//! Tables of runs, one run in full, groups, scaling, batch searches, prices.

use super::*;
use trainbench_core::summary::RunSummary;

pub fn print_runs_table(rows: &[RunRow]) {
    use table::Align::{Left, Right};
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let s = r.summary.as_ref();
            let mem = match s {
                Some(s) => format!(
                    "{} {}",
                    mib(s.peak_memory_bytes),
                    s.peak_memory_source.as_deref().unwrap_or("")
                ),
                None => "not measured".into(),
            };
            vec![
                r.id.to_string(),
                match &r.origin {
                    Some(o) => format!(
                        "{}, imported from {}",
                        r.status.as_str(),
                        escape_controls(&o.hostname)
                    ),
                    None => r.status.as_str().to_owned(),
                },
                config_label(r),
                throughput_text(r),
                s.and_then(|s| s.time_to_first_step_s)
                    .map_or("—".into(), |t| format!("{t:.2} s")),
                mem,
                tta_text(r),
                cost_text(r),
            ]
        })
        .collect();
    table::print(
        &[
            "run",
            "status",
            "configuration",
            "samples/s [95% CI]",
            "1st step",
            "peak memory",
            "time to accuracy",
            "cost/epoch",
        ],
        &[Right, Left, Left, Right, Right, Right, Right, Right],
        &cells,
    );
}

pub fn print_scaling(rows: &[Value]) {
    if rows.is_empty() {
        return;
    }
    println!("\nscaling efficiency = throughput(N) ÷ (N × throughput(1)):");
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let eff = r["scaling_efficiency"]
                .as_f64()
                .map_or("not measured".into(), |e| format!("{:.1} %", e * 100.0));
            vec![
                format!("  {}", r["configuration"].as_str().unwrap_or("")),
                eff,
                format!(
                    "({} vs {} samples/s on one device)",
                    num(r["throughput_samples_per_s"].as_f64(), 1),
                    num(r["single_device_throughput_samples_per_s"].as_f64(), 1),
                ),
            ]
        })
        .collect();
    for l in table::lines(&["", "", ""], &[table::Align::Left; 3], &cells)
        .iter()
        .skip(1)
    {
        println!("{l}");
    }
}

pub fn print_groups(groups: &[Value]) {
    println!("\nrepeats (mean of run medians, Student-t 95 % CI):");
    let cells: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            let r = &g["repeats"];
            let mean = r["throughput_mean_samples_per_s"].as_f64();
            let ci = match (
                r["throughput_ci95"]["low"].as_f64(),
                r["throughput_ci95"]["high"].as_f64(),
            ) {
                (Some(l), Some(h)) => format!("[{l:.1}, {h:.1}]"),
                _ => "CI not measured".into(),
            };
            vec![
                format!("  {}", g["configuration"].as_str().unwrap_or("")),
                format!(
                    "{} samples/s {ci} over {} completed run(s)",
                    num(mean, 1),
                    r["runs"]
                ),
            ]
        })
        .collect();
    for l in table::lines(&["", ""], &[table::Align::Left; 2], &cells)
        .iter()
        .skip(1)
    {
        println!("{l}");
    }
}

/// The probes a run's batch came from (`--batch-size max`).
pub fn print_batch_search(s: &trainbench_app::StoredBatchSearch) {
    println!(
        "batch search:      largest power of two that fits{}; {} probes of {} steps, each in a fresh worker",
        s.memory_limit_bytes
            .map(|l| format!(" within {} of resident memory", bytes(l)))
            .unwrap_or_default(),
        s.probes.len(),
        trainbench_core::batch_search::PROBE_STEPS
    );
    for p in &s.probes {
        println!(
            "  batch {:>6}  {:<22} peak {:>10}  {:>6.1} s{}",
            p.batch_size,
            p.outcome.label(),
            p.peak_memory_bytes.map_or("not measured".into(), bytes),
            p.seconds,
            p.reason
                .as_deref()
                .filter(|_| p.outcome != trainbench_core::batch_search::ProbeOutcome::Fits)
                .map(|r| format!("  {r}"))
                .unwrap_or_default()
        );
    }
}

/// The environment variables the run set, and the frameworks' variables
/// the worker saw (set by the run or inherited), as its hello says.
fn print_settings(d: &RunDetail) {
    if !d.row.env.is_empty() {
        println!(
            "variables set:     {}",
            escape_controls(&trainbench_core::spec::env::label(&d.row.env))
        );
    }
    let Some(hello) = &d.hello else { return };
    let seen: Vec<String> = hello["settings_env"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|p| Some(format!("{}={}", p[0].as_str()?, p[1].as_str()?)))
                .collect()
        })
        .unwrap_or_default();
    if !seen.is_empty() || !d.row.env.is_empty() {
        println!(
            "worker saw:        {}",
            if seen.is_empty() {
                "no framework variables".to_owned()
            } else {
                escape_controls(&seen.join(" ")).into_owned()
            }
        );
    }
}

pub fn print_show(d: &RunDetail) {
    let r = &d.row;
    // A training script sets its own precision, devices and data: what the
    // row holds for them are defaults the script never saw.
    let what = match trainbench_core::models::script::short_label(&r.model) {
        Some(script) => format!(
            "{} {} (precision, compile mode and data as the script sets them) batch {}",
            r.framework,
            escape_controls(&script),
            r.batch_size
        ),
        None => format!(
            "{} {} {} ×{} batch {} data {}",
            r.framework, r.model, r.precision, r.devices, r.batch_size, r.data
        ),
    };
    println!("run {}: {} — {what}", r.id, r.status.as_str());
    if let Some(reason) = &r.status_reason {
        println!("reason: {}", escape_controls(reason));
    }
    if let Some(o) = &r.origin {
        println!(
            "imported:          measured on {} (machine {}), run {} there; imported from {}",
            escape_controls(&o.hostname),
            escape_controls(&o.machine_id),
            o.source_run_id,
            o.file
                .as_deref()
                .map_or("a session file".into(), escape_controls)
        );
    }
    print_settings(d);
    if let Some(data) = d.hello.as_ref().map(|h| &h["data"]) {
        if let Some(loader) = data["loader"].as_str() {
            println!(
                "data loader:       {loader} ({} training images in {} classes, {} held out evaluated)",
                data["train_samples"], data["classes"], data["eval_samples"]
            );
        }
    }
    if let Some(s) = &r.summary {
        print_speed(d, s);
        print_energy_and_checks(d, s);
    }
    println!(
        "windows: {}, evaluations: {}, telemetry samples: {}",
        d.windows.len(),
        d.evals.len(),
        d.telemetry_samples
    );
    if let Some(p) = &d.provenance {
        print_provenance(p);
    }
    if r.status != RunStatus::Completed {
        if let Some(t) = d.stderr_tail.as_deref().filter(|t| !t.is_empty()) {
            println!("last lines of the worker's output:\n{}", escape_controls(t));
        }
    }
}

/// A provenance value as words: lists joined by "; ", objects as
/// "key value" pairs, nothing as "not known".
fn plain(v: &Value) -> String {
    match v {
        Value::Null => "not known".into(),
        Value::String(s) => escape_controls(s).into_owned(),
        Value::Array(a) if a.is_empty() => "none".into(),
        Value::Array(a) => a.iter().map(plain).collect::<Vec<_>>().join("; "),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| format!("{} {}", k.replace('_', " "), plain(v)))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

/// Where the run trained (the machine, its CPU, GPUs, drivers, the studio's
/// version), one line each.
fn print_provenance(p: &Value) {
    println!("provenance:");
    let Some(fields) = p.as_object() else {
        println!("  {}", plain(p));
        return;
    };
    for (key, v) in fields {
        let value = match (key.as_str(), v.as_u64()) {
            ("memory_total_bytes", Some(b)) => format!("{:.1} GiB", b as f64 / 1024f64.powi(3)),
            _ => plain(v),
        };
        let label = key.trim_end_matches("_bytes").replace('_', " ");
        println!("  {:<22} {value}", format!("{label}:"));
    }
}

/// A run's speed, memory, time to accuracy, epoch and cost.
fn print_speed(d: &RunDetail, s: &RunSummary) {
    let r = &d.row;
    println!(
        "throughput:        {} samples/s ({} windows, {} warm-up excluded)",
        throughput_text(r),
        s.windows_total,
        s.windows_warmup
    );
    let nodes = d.spec["nodes"].as_u64().unwrap_or(1);
    if let (true, Some(t)) = (nodes > 1, s.throughput_samples_per_s) {
        println!(
            "per node:          {:.1} samples/s ({nodes} nodes × {} device(s); throughput / nodes)",
            t / nodes as f64,
            r.devices / nodes.max(1) as u32
        );
    }
    if let (Some(t), Some(per)) = (s.tokens_per_s, s.tokens_per_sample) {
        println!(
            "tokens/s:          {t:.0}{} ({per} tokens per sequence, every position trained on)",
            s.tokens_per_s_ci95
                .map(|c| format!(" [95% CI {:.0}–{:.0}]", c.low, c.high))
                .unwrap_or_default()
        );
    }
    println!("warm-up rule:      {}", s.warmup_rule);
    println!(
        "time to 1st step:  {} from process start; {} from the start of training; compile alone: {}",
        s.time_to_first_step_s
            .map_or("not measured".into(), |t| format!("{t:.2} s")),
        d.first_step_train_s
            .map_or("not measured".into(), |t| format!("{t:.2} s")),
        d.compile_s.map_or("not measured apart (inside the first step)".into(), |t| format!("{t:.2} s"))
    );
    println!(
        "peak memory:       {} ({} on {})",
        mib(s.peak_memory_bytes),
        s.peak_memory_source.as_deref().unwrap_or("-"),
        s.peak_memory_device.as_deref().unwrap_or("-")
    );
    println!("time to accuracy:  {}", tta_text(r));
    println!(
        "epoch time:        {} ({})",
        s.epoch_time_s.map_or("not measured".into(), duration_text),
        s.epoch_basis.as_deref().unwrap_or("not measured")
    );
    println!(
        "cost per epoch:    {}{}",
        cost_text(r),
        s.price_as_of
            .as_deref()
            .map(|d| format!(" (price as of {d})"))
            .unwrap_or_default()
    );
}

/// A run's energy, GPU readings, warnings, breakdown, profile, checks, MFU
/// and size.
fn print_energy_and_checks(d: &RunDetail, s: &RunSummary) {
    println!(
        "energy per sample: {} ({})",
        s.energy_j_per_sample
            .map_or("not measured".into(), |j| format!("{j:.4} J")),
        if s.energy_note.is_empty() {
            "no note stored"
        } else {
            &s.energy_note
        }
    );
    if let Some(g) = &s.gpu {
        println!(
            "GPU (steady):      {} mean power, {} mean utilisation, {} NVML samples on {}",
            g.mean_power_w
                .map_or("not measured".into(), |p| format!("{p:.0} W")),
            g.mean_util_percent
                .map_or("not measured".into(), |u| format!("{u:.0} %")),
            g.samples,
            g.sources.join(", ")
        );
    }
    if let Some(scale) = d.loss_scale {
        println!("loss scale at end: {scale}");
    }
    for w in &s.warnings {
        println!("warning:           {} ({})", w.message, w.code);
    }
    print_breakdown(s.breakdown.as_ref());
    print_profile(d.profile.as_ref());
    for c in &s.checks {
        println!(
            "check:             [{}] {}: {}",
            c.status.as_str(),
            c.kind.label(),
            c.evidence
        );
    }
    println!(
        "MFU:               {} ({})",
        s.mfu
            .map_or("not measured".into(), |m| format!("{:.2} %", m * 100.0)),
        s.mfu_note
    );
    println!(
        "parameters:        {}",
        s.param_count
            .map_or("not measured".into(), |p| p.to_string())
    );
}

pub fn print_prices(rows: &[PriceEntry]) {
    let defaults = trainbench_core::reference::default_prices();
    println!(
        "{:<32} {:>3} {:<16} {:>10} {:>12}  {:<20} source",
        "offering", "n", "device", "$/hour", "$/dev-hour", "as of"
    );
    for PriceEntry { row: p, by_user } in rows {
        let mark = match by_user {
            false => "",
            true if defaults.iter().any(|d| d.offering == p.offering) => " (edited)",
            true => " (added)",
        };
        println!(
            "{:<32} {:>3} {:<16} {:>10} {:>12}  {:<20} {}{mark}",
            p.offering,
            p.devices,
            p.device,
            usd(p.usd_per_hour).trim_start_matches('$'),
            usd(p.usd_per_device_hour).trim_start_matches('$'),
            p.as_of,
            p.source,
        );
    }
}

/// The run beside the published record: the closest references of its
/// model family (at most three; `trainbench published` lists them all).
pub fn print_vs_record(record: &trainbench_app::published::RecordPlacement) {
    print_not_placed(record.not_placed.as_slice());
    if record.against.is_empty() {
        return;
    }
    println!("vs the record:     (achieved FLOP/s per device against published results of this model family)");
    for a in record.against.iter().take(3) {
        println!("  {}", a.text);
    }
}

/// Why runs are not beside the published record, each reason once.
pub fn print_not_placed(reasons: &[String]) {
    if reasons.is_empty() {
        return;
    }
    println!(
        "vs the record:     not placed: {} (`--beside-record` places it anyway)",
        reasons.join("; ")
    );
}

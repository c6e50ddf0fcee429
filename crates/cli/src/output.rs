//! What the CLI prints: progress, tables, run details, comparisons.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};
use trainbench_app::live::Figures;
use trainbench_app::prices::PriceEntry;
use trainbench_app::Progress;
use trainbench_core::compare::{config_label, Comparison, Confidence, Metric, MetricValue};
use trainbench_core::protocol::Event;
use trainbench_core::record::{RunDetail, RunRow};
use trainbench_core::summary::RunStatus;
use trainbench_core::text::escape_controls;

/// Progress of one run: a bar on a terminal, plain lines (at most every 2 s)
/// otherwise. Both go to stderr; stdout is for results.
pub struct Bar {
    bar: Option<ProgressBar>,
    label: String,
    /// Steps and throughput, counted as the desktop app counts them.
    figures: Figures,
    last_line: Option<Instant>,
    started: Instant,
}

impl Bar {
    pub fn new(interactive: bool, label: String) -> Bar {
        let bar = interactive.then(|| {
            let b = ProgressBar::new(1);
            let style = ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} steps {msg} ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            b.set_style(style);
            b.set_prefix(label.clone());
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        if bar.is_none() {
            eprintln!("{label}: starting");
        }
        Bar {
            bar,
            label,
            figures: Figures::default(),
            last_line: None,
            started: Instant::now(),
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    fn line(&mut self, text: String, force: bool) {
        match &self.bar {
            Some(b) => b.set_message(text),
            None => {
                if force
                    || self
                        .last_line
                        .is_none_or(|t| t.elapsed() >= Duration::from_secs(2))
                {
                    eprintln!("{}: {text}", self.label);
                    self.last_line = Some(Instant::now());
                }
            }
        }
    }
}

impl Progress for Bar {
    /// The studio's own notes (a busy or full database, a remote host's
    /// connection, Slurm's queue); the worker's log text stays in the run.
    fn log(&mut self, _run_id: i64, line: &str) {
        if ["[studio]", "[remote]", "[slurm]", "[journal]"]
            .iter()
            .any(|p| line.starts_with(p))
        {
            let text = format!("{}: {}", self.label, escape_controls(line));
            match &self.bar {
                Some(b) => b.println(text),
                None => eprintln!("{text}"),
            }
        }
    }

    fn event(&mut self, _run_id: i64, event: &Event) {
        self.figures.observe(event);
        match event {
            Event::Hello {
                total_steps,
                param_count,
                device,
                ..
            } => {
                if let Some(b) = &self.bar {
                    b.set_length(*total_steps);
                }
                self.line(format!("{} parameters on {}", param_count, device.id), true);
            }
            Event::FirstStep {
                since_process_start_s,
                ..
            } => {
                let t = since_process_start_s.map_or("?".into(), |s| format!("{s:.2} s"));
                self.line(format!("first step after {t}"), true);
            }
            Event::Window { loss_mean, .. } => {
                let (step, total) = (self.figures.step, self.figures.total_steps.unwrap_or(0));
                if let Some(b) = &self.bar {
                    b.set_position(step);
                }
                let tp = self.figures.current_samples_per_s.unwrap_or(f64::NAN);
                let elapsed = self.started.elapsed().as_secs_f64();
                let eta = match self.figures.steps_left() {
                    Some(left) if step > 0 => elapsed / step as f64 * left as f64,
                    _ => f64::NAN,
                };
                self.line(
                    format!(
                        "step {step}/{total}  {tp:.1} samples/s  loss {loss_mean:.4}  ETA {eta:.0} s"
                    ),
                    false,
                );
            }
            Event::Eval { step, accuracy, .. } => self.line(
                format!(
                    "evaluation at step {step}: accuracy {:.2} %",
                    accuracy * 100.0
                ),
                true,
            ),
            Event::Done { reason, .. } => {
                self.line(format!("done ({})", escape_controls(reason)), true)
            }
            Event::Error { class, message, .. } => self.line(
                format!("error ({}): {}", class.as_str(), escape_controls(message)),
                true,
            ),
            Event::Breakdown(t) => self.line(
                format!(
                    "step breakdown: {} extra steps timed after the windows",
                    t.whole_step_s.len()
                ),
                true,
            ),
            Event::Profile(p) => self.line(
                match &p.not_measured {
                    Some(why) => format!("operator profile: not measured: {why}"),
                    None => format!("operator profile: {} steps under {}", p.steps, p.tool),
                },
                true,
            ),
            Event::Memory { .. } => {}
        }
    }
}

/// A run as one flat JSON object: its row, with the summary's fields at the top
/// level (`status`, `throughput_samples_per_s`, `throughput_ci95`, …).
pub fn run_json(r: &RunRow) -> Value {
    let mut v = json!({
        "id": r.id, "sweep_id": r.sweep_id, "repeat_index": r.repeat_index, "framework": r.framework,
        "model": r.model, "precision": r.precision, "device": r.device, "devices": r.devices,
        "batch_size": r.batch_size, "data": r.data, "status": r.status, "status_reason": r.status_reason,
        "error_class": r.error_class, "exit_code": r.exit_code, "created_unix_ms": r.created_unix_ms,
        "started_unix_ms": r.started_unix_ms, "ended_unix_ms": r.ended_unix_ms,
        "param_count": r.param_count, "price_offering": r.price_offering,
    });
    let summary = r
        .summary
        .as_ref()
        .and_then(|s| serde_json::to_value(s).ok());
    if let (Some(obj), Some(Value::Object(fields))) = (v.as_object_mut(), summary) {
        for (k, val) in fields {
            if !(k == "param_count" && val.is_null()) {
                obj.insert(k, val);
            }
        }
    }
    v
}

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("not measured".into(), |x| format!("{x:.digits$}"))
}

/// Seconds with their unit, and hours or minutes beside long ones.
fn duration_text(t: f64) -> String {
    if t >= 7200.0 {
        format!("{t:.1} s ({:.1} h)", t / 3600.0)
    } else if t >= 120.0 {
        format!("{t:.1} s ({:.1} min)", t / 60.0)
    } else {
        format!("{t:.1} s")
    }
}

fn mib(b: Option<u64>) -> String {
    b.map_or("not measured".into(), bytes)
}

/// Bytes in MiB, for a person.
pub fn bytes(b: u64) -> String {
    format!("{:.0} MiB", b as f64 / 1048576.0)
}

pub fn throughput_text(r: &RunRow) -> String {
    match r.summary.as_ref().and_then(|s| s.throughput_samples_per_s) {
        None => "not measured".into(),
        Some(t) => match r.summary.as_ref().and_then(|s| s.throughput_ci95) {
            Some(ci) => format!("{t:.1} [{:.1}, {:.1}]", ci.low, ci.high),
            None => format!("{t:.1} (CI not measured)"),
        },
    }
}

fn tta_text(r: &RunRow) -> String {
    match r.summary.as_ref() {
        Some(s) => match (s.target_accuracy, s.time_to_accuracy_s, s.target_reached) {
            (Some(t), Some(x), _) => format!("{:.0} % in {x:.1} s", t * 100.0),
            (Some(t), None, Some(false)) => format!("{:.0} % not reached", t * 100.0),
            _ => match (s.target_loss, s.time_to_loss_s, s.target_reached) {
                (Some(t), Some(x), _) => format!("loss ≤ {t} in {x:.1} s"),
                (Some(t), None, Some(false)) => format!("loss ≤ {t} not reached"),
                _ => "—".into(),
            },
        },
        None => "—".into(),
    }
}

fn cost_text(r: &RunRow) -> String {
    match r.summary.as_ref() {
        Some(s) => match (s.cost_per_epoch_usd, s.cost_is_projected) {
            (Some(c), Some(true)) => format!("${c:.2} projected"),
            (Some(c), _) => format!("${c:.2}"),
            _ if r.price_offering.is_none() => "no price chosen".into(),
            _ => "not measured".into(),
        },
        None => "not measured".into(),
    }
}

pub fn print_runs_table(rows: &[RunRow]) {
    println!(
        "{:>5}  {:<11} {:<34} {:>26}  {:>10}  {:>18}  {:>20}  {:>16}",
        "run",
        "status",
        "configuration",
        "samples/s [95% CI]",
        "1st step",
        "peak memory",
        "time to accuracy",
        "cost/epoch"
    );
    for r in rows {
        let config = config_label(r);
        let s = r.summary.as_ref();
        let mem = match s {
            Some(s) => format!(
                "{} {}",
                mib(s.peak_memory_bytes),
                s.peak_memory_source.as_deref().unwrap_or("")
            ),
            None => "not measured".into(),
        };
        println!(
            "{:>5}  {:<11} {:<34} {:>26}  {:>10}  {:>18}  {:>20}  {:>16}",
            r.id,
            r.status.as_str(),
            config,
            throughput_text(r),
            s.and_then(|s| s.time_to_first_step_s)
                .map_or("—".into(), |t| format!("{t:.2} s")),
            mem,
            tta_text(r),
            cost_text(r)
        );
    }
}

pub fn print_scaling(rows: &[Value]) {
    if rows.is_empty() {
        return;
    }
    println!("\nscaling efficiency = throughput(N) ÷ (N × throughput(1)):");
    for r in rows {
        let eff = r["scaling_efficiency"]
            .as_f64()
            .map_or("not measured".into(), |e| format!("{:.1} %", e * 100.0));
        println!(
            "  {:<44} {eff}  ({} vs {} samples/s on one device)",
            r["configuration"].as_str().unwrap_or(""),
            num(r["throughput_samples_per_s"].as_f64(), 1),
            num(r["single_device_throughput_samples_per_s"].as_f64(), 1),
        );
    }
}

pub fn print_groups(groups: &[Value]) {
    println!("\nrepeats (mean of run medians, Student-t 95 % CI):");
    for g in groups {
        let r = &g["repeats"];
        let mean = r["throughput_mean_samples_per_s"].as_f64();
        let ci = match (
            r["throughput_ci95"]["low"].as_f64(),
            r["throughput_ci95"]["high"].as_f64(),
        ) {
            (Some(l), Some(h)) => format!("[{l:.1}, {h:.1}]"),
            _ => "CI not measured".into(),
        };
        println!(
            "  {:<40} {} samples/s {ci} over {} completed run(s)",
            g["configuration"].as_str().unwrap_or(""),
            num(mean, 1),
            r["runs"]
        );
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

pub fn print_show(d: &RunDetail) {
    let r = &d.row;
    println!(
        "run {}: {} — {} {} {} ×{} batch {} data {}",
        r.id,
        r.status.as_str(),
        r.framework,
        r.model,
        r.precision,
        r.devices,
        r.batch_size,
        r.data
    );
    if let Some(reason) = &r.status_reason {
        println!("reason: {}", escape_controls(reason));
    }
    if let Some(data) = d.hello.as_ref().map(|h| &h["data"]) {
        if let Some(loader) = data["loader"].as_str() {
            println!(
                "data loader:       {loader} ({} training images in {} classes, {} held out evaluated)",
                data["train_samples"], data["classes"], data["eval_samples"]
            );
        }
    }
    if let Some(s) = &r.summary {
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
    println!(
        "windows: {}, evaluations: {}, telemetry samples: {}",
        d.windows.len(),
        d.evals.len(),
        d.telemetry_samples
    );
    if let Some(p) = &d.provenance {
        println!("provenance: {p}");
    }
    if r.status != RunStatus::Completed {
        if let Some(t) = d.stderr_tail.as_deref().filter(|t| !t.is_empty()) {
            println!("last lines of the worker's output:\n{}", escape_controls(t));
        }
    }
}

/// The comparison as JSON: each run's row and summary with its deltas against
/// the baseline and its scaling efficiency, the warnings, and the full
/// comparison model (`comparison`: entries, decision matrix, scaling series).
pub fn compare_report(rows: &[RunRow], c: &Comparison) -> Value {
    let entries: Vec<Value> = c
        .entries
        .iter()
        .filter_map(|e| {
            let r = rows.iter().find(|r| Some(&r.id) == e.run_ids.first())?;
            let mut v = run_json(r);
            let obj = v.as_object_mut()?;
            let delta: serde_json::Map<String, Value> = e
                .metrics
                .iter()
                .map(|(m, x)| (m.key().to_string(), json!(x.delta_vs_baseline)))
                .collect();
            obj.insert("delta_vs_baseline".into(), Value::Object(delta));
            obj.insert(
                "scaling".into(),
                match &e.single_device_entry {
                    Some(one) => json!({
                        "single_device_run": one.parse::<i64>().ok(),
                        "scaling_efficiency": e.scaling_efficiency,
                    }),
                    None => Value::Null,
                },
            );
            Some(v)
        })
        .collect();
    json!({
        "baseline": c.entries[c.baseline].run_ids.first(),
        "runs": entries,
        "warnings": c.warnings,
        "comparison": c,
    })
}

fn metric_text(m: Metric, v: &MetricValue) -> String {
    match v.value {
        None => v.note.clone().unwrap_or_else(|| "not measured".into()),
        Some(x) => {
            let digits = if m == Metric::CostPerEpoch { 2 } else { 1 };
            let mut s = format!("{x:.digits$}");
            if let Some(ci) = v.ci95 {
                s.push_str(&format!(" [{:.digits$}, {:.digits$}]", ci.low, ci.high));
            }
            s
        }
    }
}

pub fn print_compare(c: &Comparison) {
    let base = &c.entries[c.baseline];
    for m in Metric::ALL {
        println!(
            "\n{} ({}, {} is better):",
            m.title(),
            m.unit(),
            if m.higher_is_better() {
                "higher"
            } else {
                "lower"
            }
        );
        for e in &c.entries {
            let v = &e.metrics[&m];
            let delta = v
                .delta_vs_baseline
                .filter(|_| e.key != base.key)
                .map_or(String::new(), |d| {
                    format!("  {:+.1} % vs baseline", d * 100.0)
                });
            let marker = if e.key == base.key { " (baseline)" } else { "" };
            println!("  {:<64} {}{delta}{marker}", e.label, metric_text(m, v));
        }
    }
    println!("\ndecision matrix:");
    for d in &c.decisions {
        let text = match (d.winner, d.confidence) {
            (Some(w), Some(conf)) => {
                let margin = d
                    .margin
                    .map_or(String::new(), |x| format!(" by {:.1} %", x * 100.0));
                let how = match conf {
                    Confidence::Clear => "95 % intervals do not overlap",
                    Confidence::Overlapping => "95 % intervals overlap: not a clear win",
                    Confidence::PointValues => "point values, no interval",
                    Confidence::Alone => "the only one measured",
                };
                format!("{}{margin} ({how})", c.entries[w].label)
            }
            _ => "nobody: not measured".into(),
        };
        println!("  {:<18} {text}", d.metric.title());
    }
    if !c.speedups.is_empty() {
        println!("\nspeed-up against the baseline (throughput ratio):");
        for s in &c.speedups {
            println!("  {}", s.verdict);
            println!("      method: {}", s.method);
        }
    }
    for e in &c.entries {
        if let (Some(eff), Some(one)) = (e.scaling_efficiency, &e.single_device_entry) {
            println!(
                "  {} on {} devices: scaling efficiency {:.1} % against {one} on one device",
                e.label,
                e.devices,
                eff * 100.0
            );
        }
    }
    if c.entries.iter().any(|e| e.breakdown.is_some()) {
        use trainbench_core::breakdown::{fmt_s, Part};
        println!("\nWhere the step goes (per sample; step breakdown after the timed windows):");
        let parts: Vec<Part> = c.breakdown_parts();
        let header: Vec<String> = parts
            .iter()
            .map(|p| format!("{:>12}", p.as_str()))
            .collect();
        let width = label_width(c);
        println!("  {:<width$} {}", "entry", header.join(" "));
        for e in &c.entries {
            let cells: Vec<String> = parts
                .iter()
                .map(|p| {
                    let v = e.breakdown.as_ref().and_then(|b| b.part(*p));
                    format!("{:>12}", v.map_or("—".into(), |v| fmt_s(v.per_sample_s)))
                })
                .collect();
            let tail = if e.breakdown.is_none() {
                "  not measured"
            } else {
                ""
            };
            println!("  {:<width$} {}{tail}", e.label, cells.join(" "));
        }
    }
    if c.entries.iter().any(|e| e.profile.is_some()) {
        use trainbench_core::breakdown::fmt_s;
        use trainbench_core::protocol::OpCategory;
        println!("\nOperator profiles (self time per sample, runs made with --profile):");
        let labels: Vec<&str> = OpCategory::ALL
            .iter()
            .map(|c| c.label())
            .chain(["idle"])
            .collect();
        let width = label_width(c);
        println!(
            "  {:<width$} {}",
            "entry",
            labels
                .iter()
                .map(|l| format!("{:>16}", l))
                .collect::<Vec<_>>()
                .join(" ")
        );
        for e in &c.entries {
            let cells = match &e.profile {
                Some(p) => p
                    .rows
                    .iter()
                    .map(|r| format!("{:>16}", fmt_s(r.per_sample_s)))
                    .collect::<Vec<_>>()
                    .join(" "),
                None => "  not profiled".to_owned(),
            };
            println!("  {:<width$} {cells}", e.label);
        }
        for g in &c.profile_gaps {
            println!("  {} ({})", g.gap.verdict, g.gap.note);
        }
    }
    for w in &c.warnings {
        println!("warning: {w}");
    }
}

pub fn print_prices(rows: &[PriceEntry]) {
    println!(
        "{:<32} {:>3} {:<16} {:>10} {:>12}  {:<20} source",
        "offering", "n", "device", "$/hour", "$/dev-hour", "as of"
    );
    for PriceEntry { row: p, by_user } in rows {
        println!(
            "{:<32} {:>3} {:<16} {:>10.2} {:>12.2}  {:<20} {}{}",
            p.offering,
            p.devices,
            p.device,
            p.usd_per_hour,
            p.usd_per_device_hour,
            p.as_of,
            p.source,
            if *by_user { " (edited)" } else { "" }
        );
    }
}

/// A run's step breakdown as text, or why there is none.
pub fn print_breakdown(b: Option<&trainbench_core::breakdown::StepBreakdown>) {
    use trainbench_core::breakdown::fmt_s;
    let Some(b) = b else {
        println!("step breakdown:    not measured");
        return;
    };
    let whole = if b.whole_steps > 0 {
        b.whole_steps.to_string()
    } else {
        "(count not stored)".to_owned()
    };
    println!(
        "step breakdown:    means of {} split and {whole} whole steps after the timed windows",
        b.steps
    );
    for p in &b.parts {
        println!(
            "  {:<14} {:>12} per step  {:>5.1} %  ({} per sample{})",
            p.part.as_str(),
            fmt_s(p.mean_s),
            p.share * 100.0,
            fmt_s(p.per_sample_s),
            p.ci95
                .map(|c| format!("; 95 % CI {}–{}", fmt_s(c.low), fmt_s(c.high)))
                .unwrap_or_default()
        );
    }
    println!(
        "  parts sum {} vs whole step {} ({:+.1} %, tolerance ±{:.1} %: {}){}",
        fmt_s(b.parts_sum_s),
        fmt_s(b.whole_step_s),
        b.split_difference * 100.0,
        b.tolerance * 100.0,
        if b.agrees { "agree" } else { "do NOT agree" },
        b.steady_step_s
            .map(|s| format!("; timed windows' steady step {}", fmt_s(s)))
            .unwrap_or_default()
    );
    if let Some(f) = &b.fused {
        println!("  fused: {f}");
    }
    if let Some(c) = &b.communication {
        println!("  communication: {c}");
    }
}

/// `trainbench explain` as text.
pub fn print_explain(r: &trainbench_app::explain::ExplainReport) {
    use trainbench_core::breakdown::fmt_s;
    let e = &r.explanation;
    println!("A: {}", r.a.label);
    println!("B: {}", r.b.label);
    println!(
        "time per sample in the breakdown steps: A {}, B {} (B − A = {})",
        fmt_s(e.a_per_sample_s),
        fmt_s(e.b_per_sample_s),
        fmt_s(e.gap_s)
    );
    println!(
        "{:<14} {:>12} {:>12} {:>12} {:>10}",
        "part", "A /sample", "B /sample", "B − A", "of gap"
    );
    for p in &e.parts {
        println!(
            "{:<14} {:>12} {:>12} {:>12} {:>10}",
            p.part.as_str(),
            fmt_s(p.a_per_sample_s),
            fmt_s(p.b_per_sample_s),
            fmt_s(p.difference_s),
            p.share_of_gap
                .map_or("—".into(), |s| format!("{:.0} %", s * 100.0))
        );
    }
    if let Some(n) = &e.granularity_note {
        println!("note: {n}");
    }
    println!("{}", e.verdict);
    match &r.profile {
        None => {
            println!("operator profiles: not compared (both sides need a run made with --profile)")
        }
        Some(g) => {
            println!();
            println!(
                "operator profiles, self time per sample: A {}, B {} (B − A = {}); {}",
                fmt_s(g.a_per_sample_s),
                fmt_s(g.b_per_sample_s),
                fmt_s(g.gap_s),
                g.note
            );
            println!(
                "{:<18} {:>12} {:>12} {:>12} {:>10}",
                "category", "A /sample", "B /sample", "B − A", "of gap"
            );
            for r in &g.rows {
                println!(
                    "{:<18} {:>12} {:>12} {:>12} {:>10}",
                    r.label,
                    fmt_s(r.a_per_sample_s),
                    fmt_s(r.b_per_sample_s),
                    fmt_s(r.gap_s),
                    r.share_of_gap
                        .map_or("—".into(), |s| format!("{:.0} %", s * 100.0))
                );
            }
            println!("{}", g.verdict);
        }
    }
}

/// A run's operator profile as text.
pub fn print_profile(p: Option<&trainbench_core::protocol::OperatorProfile>) {
    use trainbench_core::breakdown::fmt_s;
    let Some(p) = p else {
        println!("operator profile:  none (run with --profile)");
        return;
    };
    if let Some(why) = &p.not_measured {
        println!("operator profile:  not measured: {why}");
        return;
    }
    let steps = p.steps.max(1) as f64;
    println!(
        "operator profile:  {} steps under {}, {} per step ({} busy, {} idle); {}",
        p.steps,
        p.tool,
        fmt_s(p.span_s / steps),
        fmt_s(p.busy_s / steps),
        fmt_s(p.idle_s / steps),
        p.what
    );
    let total: f64 = p.categories.iter().map(|c| c.self_s).sum::<f64>() + p.idle_s;
    let share = |s: f64| if total > 0.0 { s / total * 100.0 } else { 0.0 };
    for c in &p.categories {
        println!(
            "  {:<18} {:>12} per step  {:>5.1} %",
            c.category.label(),
            fmt_s(c.self_s / steps),
            share(c.self_s)
        );
    }
    println!(
        "  {:<18} {:>12} per step  {:>5.1} %",
        "idle",
        fmt_s(p.idle_s / steps),
        share(p.idle_s)
    );
    println!("  top operators by self time (per step, calls per step):");
    for o in p.ops.iter().take(10) {
        println!(
            "    {:>12}  {:>6.1}  {:<18} {}",
            fmt_s(o.self_s / steps),
            o.calls as f64 / steps,
            o.category.label(),
            o.name
        );
    }
    if p.other_ops.count > 0 || p.ops.len() > 10 {
        println!(
            "    … {} more operators listed in `show --json`, {} not listed ({} per step)",
            p.ops.len().saturating_sub(10),
            p.other_ops.count,
            fmt_s(p.other_ops.self_s / steps)
        );
    }
}

/// The width of the entry-label column of a comparison's tables.
fn label_width(c: &Comparison) -> usize {
    c.entries
        .iter()
        .map(|e| e.label.chars().count())
        .max()
        .unwrap_or(5)
        .max("entry".len())
}

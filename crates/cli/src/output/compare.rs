//! A comparison as text and as JSON.

use super::*;

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
            let digits = match (m, v.ci95) {
                (Metric::CostPerEpoch, Some(ci)) => super::cost_digits(x.min(ci.low)),
                (Metric::CostPerEpoch, None) => super::cost_digits(x),
                _ => 1,
            };
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
    if !c.shared_label.is_empty() {
        println!(
            "every entry: {} (each entry below says what sets it apart)",
            c.shared_label
        );
    }
    let width = label_width(c).max(20);
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
            println!("  {:<width$} {}{delta}{marker}", e.label, metric_text(m, v));
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
    print_breakdowns(c);
    print_profiles(c);
    for w in &c.warnings {
        println!("warning: {w}");
    }
}

/// Where the step goes, per entry (step breakdowns, when any was measured).
fn print_breakdowns(c: &Comparison) {
    if !c.entries.iter().any(|e| e.breakdown.is_some()) {
        return;
    }
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

/// Operator profiles, per entry, and each gap to the baseline's (runs made
/// with --profile).
fn print_profiles(c: &Comparison) {
    if !c.entries.iter().any(|e| e.profile.is_some()) {
        return;
    }
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

/// The width of the entry-label column of a comparison's tables.
fn label_width(c: &Comparison) -> usize {
    c.entries
        .iter()
        .map(|e| e.label.chars().count())
        .max()
        .unwrap_or(5)
        .max("entry".len())
}

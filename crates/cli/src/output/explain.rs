//! Step breakdowns, why one run is faster than another, operator profiles.

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

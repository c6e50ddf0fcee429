use super::*;

fn row(id: i64, config: &str, devices: u32, tp: Option<f64>, ci: Option<(f64, f64)>) -> RunRow {
    RunRow {
        id,
        sweep_id: None,
        config_key: format!("{config} ×{devices}"),
        scaling_key: config.to_owned(),
        repeat_index: 0,
        framework: crate::Framework::Tch,
        environment: None,
        model: "m".into(),
        precision: crate::Precision::Fp32,
        compile: Compile::Off,
        device: crate::Device::Cpu,
        devices,
        parallel: Parallel::Ddp,
        batch_size: 8,
        data: crate::DataSource::Synthetic,
        status: RunStatus::Completed,
        status_reason: None,
        error_class: None,
        exit_code: Some(0),
        created_unix_ms: 0,
        started_unix_ms: None,
        ended_unix_ms: None,
        param_count: Some(100),
        price_offering: None,
        origin: None,
        measured_on: Default::default(),
        env: Default::default(),
        threads: None,
        cudnn_benchmark: None,
        summary: Some(RunSummary {
            throughput_samples_per_s: tp,
            throughput_ci95: ci.map(|(low, high)| Interval { low, high }),
            windows_total: 10,
            windows_warmup: 1,
            warmup_rule: String::new(),
            time_to_first_step_s: None,
            peak_memory_bytes: Some(1_048_576 * id as u64),
            peak_memory_source: None,
            peak_memory_device: None,
            target_accuracy: None,
            best_accuracy: None,
            time_to_accuracy_s: None,
            target_reached: None,
            target_loss: None,
            best_loss: None,
            time_to_loss_s: None,
            epoch_samples: None,
            epoch_time_s: None,
            epoch_basis: None,
            cost_per_epoch_usd: None,
            cost_is_projected: None,
            price_offering: None,
            price_as_of: None,
            energy_j_per_sample: None,
            mfu: None,
            mfu_note: String::new(),
            param_count: Some(100),
            global_batch: 8 * u64::from(devices),
            energy_note: String::new(),
            gpu: None,
            warnings: Vec::new(),
            breakdown: None,
            profile_per_sample: None,
            checks: Vec::new(),
            steady_window_throughputs: Vec::new(),
            tokens_per_sample: None,
            tokens_per_s: None,
            tokens_per_s_ci95: None,
        }),
    }
}

#[test]
fn deltas_winners_and_confidence() {
    let rows = vec![
        row(1, "a", 1, Some(100.0), Some((95.0, 105.0))),
        row(2, "b", 1, Some(150.0), Some((140.0, 160.0))),
        row(3, "c", 1, Some(104.0), Some((99.0, 110.0))),
    ];
    let c = compare(&rows, Grouping::Runs, Some(1)).expect("compare");
    let tp = |i: usize| c.entries[i].metrics[&Metric::Throughput].clone();
    assert_eq!(tp(1).delta_vs_baseline, Some(0.5));
    assert_eq!(tp(0).delta_vs_baseline, Some(0.0));
    let d = &c.decisions[0];
    assert_eq!(
        (d.metric, d.winner, d.runner_up),
        (Metric::Throughput, Some(1), Some(2))
    );
    assert_eq!(d.confidence, Some(Confidence::Clear));
    // Memory: lowest wins, no intervals.
    let m = &c.decisions[1];
    assert_eq!(
        (m.winner, m.confidence),
        (Some(0), Some(Confidence::PointValues))
    );
    // Nothing measured: no winner, and the note says why.
    assert_eq!(c.decisions[2].winner, None);
    assert_eq!(
        c.entries[0].metrics[&Metric::CostPerEpoch].note.as_deref(),
        Some("no price chosen")
    );
}

#[test]
fn time_to_loss_ranks_lowest_first_and_says_when_a_target_was_missed() {
    let mut rows = vec![
        row(1, "a", 1, Some(100.0), None),
        row(2, "b", 1, Some(90.0), None),
        row(3, "c", 1, Some(80.0), None),
    ];
    for (r, t) in rows.iter_mut().zip([Some(12.0), Some(9.5), None]) {
        let s = r.summary.as_mut().expect("summary");
        s.target_loss = Some(3.0);
        s.time_to_loss_s = t;
    }
    let c = compare(&rows, Grouping::Runs, Some(1)).expect("compare");
    let d = c
        .decisions
        .iter()
        .find(|d| d.metric == Metric::TimeToLoss)
        .expect("a time-to-loss row");
    assert_eq!((d.winner, d.runner_up), (Some(1), Some(0)));
    assert_eq!(
        c.entries[2].metrics[&Metric::TimeToLoss].note.as_deref(),
        Some("not reached in 1 of 1 runs")
    );
    let plain = compare(&rows[..2], Grouping::Runs, None).expect("compare");
    assert_eq!(
        plain.entries[0].metrics[&Metric::TimeToLoss].value,
        Some(12.0)
    );
    let mut none = rows.clone();
    for r in &mut none {
        r.summary.as_mut().expect("summary").target_loss = None;
    }
    let c = compare(&none, Grouping::Runs, None).expect("compare");
    assert_eq!(
        c.entries[2].metrics[&Metric::TimeToLoss].note.as_deref(),
        Some("no target set")
    );
}

#[test]
fn overlapping_intervals_are_not_a_clear_win() {
    let rows = vec![
        row(1, "a", 1, Some(100.0), Some((90.0, 110.0))),
        row(2, "b", 1, Some(105.0), Some((95.0, 115.0))),
    ];
    let c = compare(&rows, Grouping::Runs, None).expect("compare");
    assert_eq!(c.decisions[0].winner, Some(1));
    assert_eq!(c.decisions[0].confidence, Some(Confidence::Overlapping));
}

#[test]
fn repeats_group_into_one_entry_with_a_t_interval() {
    let rows = vec![
        row(1, "a", 1, Some(100.0), None),
        row(2, "a", 1, Some(110.0), None),
        row(3, "b", 1, Some(50.0), None),
    ];
    let c = compare(&rows, Grouping::Configurations, None).expect("compare");
    assert_eq!(c.entries.len(), 2);
    let tp = &c.entries[0].metrics[&Metric::Throughput];
    assert_eq!(tp.value, Some(105.0));
    let ci = tp.ci95.expect("t interval from 2 repeats");
    assert!(ci.low < 105.0 && ci.high > 105.0);
    assert_eq!(c.entries[0].run_ids, vec![1, 2]);
}

#[test]
fn scaling_and_warnings_for_runs_differing_in_devices() {
    let rows = vec![
        row(1, "a", 1, Some(100.0), None),
        row(2, "a", 2, Some(180.0), None),
    ];
    let c = compare(&rows, Grouping::Runs, None).expect("compare");
    assert_eq!(c.entries[1].scaling_efficiency, Some(0.9));
    assert_eq!(c.scaling.len(), 1);
    assert_eq!(c.scaling[0].points, vec![(1, 0), (2, 1)]);
    assert!(c.warnings.iter().any(|w| w.contains("global batch 16")));
}

#[test]
fn a_missing_value_in_one_repeat_is_not_averaged_away() {
    let mut rows = vec![
        row(1, "a", 1, Some(100.0), None),
        row(2, "a", 1, None, None),
    ];
    rows[1].status = RunStatus::Failed;
    rows.push(row(3, "b", 1, Some(90.0), None));
    let c = compare(&rows, Grouping::Configurations, None).expect("compare");
    let tp = &c.entries[0].metrics[&Metric::Throughput];
    assert_eq!(tp.value, None);
    assert_eq!(
        tp.note.as_deref(),
        Some("not measured (measured in 1 of 2 runs)")
    );
    assert!(c.warnings.iter().any(|w| w.contains("run 2 is failed")));
    assert!(matches!(
        compare(&rows[..1], Grouping::Runs, None),
        Err(CompareError::TooFew { given: 1 })
    ));
    assert!(matches!(
        compare(&rows, Grouping::Runs, Some(9)),
        Err(CompareError::BaselineNotCompared(9))
    ));
}

#[test]
fn speedups_against_the_baseline_from_repeats_and_single_runs() {
    // Repeats: the same logs as speedup.rs's hand computation (ratio e^0.2,
    // 95 % CI 1.167–1.278).
    let mut rows = Vec::new();
    for (i, x) in [-0.02f64, 0.0, 0.02].iter().enumerate() {
        rows.push(row(i as i64 + 1, "base", 1, Some(100.0 * x.exp()), None));
    }
    for (i, x) in [0.18f64, 0.2, 0.22].iter().enumerate() {
        rows.push(row(i as i64 + 4, "fast", 1, Some(100.0 * x.exp()), None));
    }
    let c = compare(&rows, Grouping::Configurations, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.speedups.len(), 1);
    let s = &c.speedups[0];
    assert_eq!((s.entry, s.runs, s.settled), (1, (3, 3), true));
    assert!((s.ratio - 0.2f64.exp()).abs() < 1e-9);
    assert!(
        s.verdict.contains("(3 runs) is 1.22× ") && s.verdict.ends_with(", 95 % CI 1.17–1.28"),
        "{}",
        s.verdict
    );

    // Single runs with window intervals; a run without throughput gets none.
    let rows = vec![
        row(1, "a", 1, Some(100.0), Some((95.0, 105.0))),
        row(2, "b", 1, Some(101.0), Some((96.0, 106.0))),
        row(3, "c", 1, None, None),
    ];
    let c = compare(&rows, Grouping::Runs, Some(1)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.speedups.len(), 1, "{:?}", c.speedups);
    assert!(!c.speedups[0].settled);
    assert!(
        c.speedups[0].verdict.starts_with("no difference shown"),
        "{}",
        c.speedups[0].verdict
    );
}

#[test]
fn profiles_average_over_repeats_and_explain_the_gap_to_the_baseline() {
    use crate::profile::{CategoryPerSample, ProfileSummary};
    use crate::protocol::OpCategory;
    let with = |id: i64, config: &str, matmul: f64, idle: f64| {
        let mut r = row(id, config, 1, Some(100.0), None);
        let rows = OpCategory::ALL
            .iter()
            .map(|c| {
                (
                    Some(*c),
                    c.label(),
                    if *c == OpCategory::MatmulConv {
                        matmul
                    } else {
                        0.0
                    },
                )
            })
            .chain([(None, "idle", idle)])
            .map(|(category, label, v)| CategoryPerSample {
                category,
                label: label.into(),
                per_sample_s: v,
            })
            .collect();
        r.summary.as_mut().unwrap().profile_per_sample = Some(ProfileSummary {
            tool: "t".into(),
            timeline: None,
            steps: 3,
            rows,
        });
        r
    };
    // a: two repeats (matmul 1 ms and 3 ms per sample: mean 2 ms); b: 5 ms + 1 ms idle.
    let rows = vec![
        with(1, "a", 0.001, 0.0),
        with(2, "a", 0.003, 0.0),
        with(3, "b", 0.005, 0.001),
        row(4, "c", 1, Some(90.0), None),
    ];
    let c = compare(&rows, Grouping::Configurations, None).expect("compare");
    let a = c.entries[0].profile.as_ref().unwrap();
    assert!((a.rows[0].per_sample_s - 0.002).abs() < 1e-12);
    assert_eq!(a.steps, 6);
    assert!(c.entries[2].profile.is_none());
    // Only b has a gap to the baseline: c was not profiled.
    assert_eq!(c.profile_gaps.len(), 1);
    let g = &c.profile_gaps[0];
    assert_eq!(g.entry, 1);
    assert!((g.gap.gap_s - 0.004).abs() < 1e-12, "{g:?}");
    assert!((g.gap.rows[0].share_of_gap.unwrap() - 0.75).abs() < 1e-9);
    assert!(
        g.gap.verdict.contains("matmul/conv accounts for 75 %"),
        "{}",
        g.gap.verdict
    );
}

#[test]
fn entries_are_labelled_by_what_differs_and_the_rest_is_said_once() {
    let a = row(1, "a", 1, Some(100.0), None);
    let b = RunRow {
        framework: crate::Framework::Pytorch,
        environment: Some("kit-pytorch".into()),
        compile: Compile::On,
        ..row(2, "b", 1, Some(120.0), None)
    };
    let c = RunRow {
        framework: crate::Framework::Jax,
        ..row(3, "c", 1, Some(130.0), None)
    };
    let cmp = compare(&[a, b, c], Grouping::Runs, None).unwrap();
    assert_eq!(cmp.shared_label, "m fp32 ×1 b8 synthetic");
    let labels: Vec<&str> = cmp.entries.iter().map(|e| e.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "#1 tch compile=off",
            "#2 pytorch@kit-pytorch compile=on",
            "#3 jax compile=off"
        ]
    );
    assert_eq!(
        cmp.entries[1].full_label,
        "pytorch@kit-pytorch m fp32 compile=on ×1 b8 synthetic"
    );
    // Repeats of one configuration: nothing differs but the run.
    let same = compare(
        &[
            row(4, "a", 1, Some(1.0), None),
            row(5, "a", 1, Some(1.0), None),
        ],
        Grouping::Runs,
        None,
    )
    .unwrap();
    assert_eq!(same.entries[0].label, "#4");
    assert_eq!(same.shared_label, "tch m fp32 ×1 b8 synthetic");
}

/// Repeats of one configuration in two JAX releases (their environments).
fn release_rows(older_tp: [f64; 3], newer_tp: [f64; 3]) -> Vec<RunRow> {
    let mut rows = Vec::new();
    for (i, (release, tp)) in [("jax==0.6.2", older_tp), ("jax==0.7.2", newer_tp)]
        .into_iter()
        .flat_map(|(r, tps)| tps.into_iter().map(move |t| (r, t)))
        .enumerate()
    {
        let mut r = row(i as i64 + 1, release, 1, Some(tp), None);
        r.framework = crate::Framework::Jax;
        r.environment = Some(release.to_owned());
        rows.push(r);
    }
    rows
}

#[test]
fn a_newer_release_slower_beyond_the_interval_is_a_regression() {
    let regressions = |c: &Comparison| -> Vec<String> {
        c.warnings
            .iter()
            .filter(|w| w.starts_with("regression:"))
            .cloned()
            .collect()
    };
    let rows = release_rows([100.0, 101.0, 99.0], [90.0, 91.0, 89.0]);
    let c = compare(&rows, Grouping::Configurations, None).expect("compare");
    let r = regressions(&c);
    assert_eq!(r.len(), 1, "{:?}", c.warnings);
    assert!(
        r[0].starts_with("regression: jax==0.7.2 trains at 0.900× the throughput of the older jax==0.6.2, 95 % CI"),
        "{}",
        r[0]
    );
    // The newer as the baseline: the same regression, its ratio the same way round.
    let c = compare(&rows, Grouping::Configurations, Some(4)).expect("compare");
    let r = regressions(&c);
    assert!(
        r[0].starts_with("regression: jax==0.7.2 trains at 0.900×"),
        "{r:?}"
    );
    // Faster, or apart only within the interval: none.
    let faster = release_rows([100.0, 101.0, 99.0], [110.0, 111.0, 109.0]);
    let c = compare(&faster, Grouping::Configurations, None).expect("compare");
    assert!(regressions(&c).is_empty(), "{:?}", c.warnings);
    let noisy = release_rows([100.0, 130.0, 70.0], [95.0, 125.0, 66.0]);
    let c = compare(&noisy, Grouping::Configurations, None).expect("compare");
    assert!(regressions(&c).is_empty(), "{:?}", c.warnings);
}

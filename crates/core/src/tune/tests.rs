use super::method::{Fate, RoundKind, RunResult, Search, Settings, Step, TuneOutcome};
use super::space::{space, Axes, Offer};
use super::{Budget, Ended, Given, Objective};
use crate::spec::Device;
use crate::stats::Interval;

/// A run's figure with a small, fixed wobble (no randomness: the same
/// sequence every time), and its own interval of ±1 %.
fn measured(value: f64, n: u64) -> RunResult {
    let wobble = 1.0 + 0.004 * ((n * 7 % 5) as f64 - 2.0) / 2.0;
    let v = value * wobble;
    RunResult::Measured {
        value: v,
        ci95: Some(Interval {
            low: v * 0.99,
            high: v * 1.01,
        }),
    }
}

/// Runs the search to its end with `figure` (candidate, run number), as
/// the application does; the rounds' kinds in order.
fn drive(
    search: &mut Search,
    mut figure: impl FnMut(usize, u64) -> RunResult,
) -> (TuneOutcome, Vec<RoundKind>, u64) {
    let mut runs = 0;
    let mut kinds = Vec::new();
    loop {
        match search.next_step() {
            Step::Done(o) => return (o, kinds, runs),
            Step::Run(plan) => {
                kinds.push(plan.kind);
                for &c in &plan.order {
                    runs += 1;
                    search.record(c, runs as i64, runs as f64, figure(c, runs));
                }
            }
        }
    }
}

fn labels(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("candidate {i}")).collect()
}

#[test]
fn a_planted_fastest_candidate_wins_and_clear_losers_stop_at_the_probe() {
    // Candidate 3 is 1.5× the next best; 0, 1 and 2 are far below.
    let speeds = [100.0, 300.0, 200.0, 600.0, 400.0, 390.0];
    let mut search = Search::new(labels(6), Settings::new(Objective::Throughput));
    let (o, kinds, runs) = drive(&mut search, |c, n| measured(speeds[c], n));
    assert_eq!(o.ended, Ended::Finished);
    assert_eq!(o.winner, Some(3), "{o:#?}");
    assert_eq!(o.candidates[3].fate, Fate::Winner);
    let ratio = o.ratio.expect("a ratio");
    assert!((ratio - 1.5).abs() < 0.05, "{ratio}");
    let ci = o.ratio_ci95.expect("an interval");
    assert!(ci.low > 1.0, "{ci:?}");
    assert_eq!(o.tie, Some(false));
    assert!(o.confirmed);
    assert!(
        o.verdict.contains("candidate 3 wins: 1.50×"),
        "{}",
        o.verdict
    );
    // The slowest are settled by their intervals at the probe.
    for c in [0, 1, 2] {
        assert_eq!(o.candidates[c].fate, Fate::StoppedSlower, "{c}: {o:#?}");
        assert_eq!(o.candidates[c].round_reached, Some(0));
        assert!(o.candidates[c].why.contains("settled worse at round 0"));
    }
    assert_eq!(kinds.first(), Some(&RoundKind::Probe));
    assert_eq!(kinds.last(), Some(&RoundKind::Confirm));
    // Fewer runs than racing everything to the end (6 × 3 confirm runs).
    assert!(runs < 18, "{runs}");
}

#[test]
fn two_equal_candidates_are_called_a_tie() {
    let mut search = Search::new(labels(2), Settings::new(Objective::Throughput));
    let (o, kinds, _) = drive(&mut search, |_, n| measured(250.0, n));
    assert_eq!(kinds, vec![RoundKind::Probe, RoundKind::Confirm]);
    assert_eq!(o.tie, Some(true), "{o:#?}");
    assert!(o.verdict.starts_with("a tie:"), "{}", o.verdict);
    let ci = o.ratio_ci95.unwrap();
    assert!(ci.low <= 1.0 && 1.0 <= ci.high);
}

#[test]
fn close_candidates_are_halved_not_settled_and_race_with_repeats() {
    // Within each other's intervals: only the halving stops them.
    let speeds = [100.0, 100.5, 101.0, 101.5, 102.0, 102.5, 103.0, 103.5];
    let mut search = Search::new(labels(8), Settings::new(Objective::Throughput));
    let (o, kinds, _) = drive(&mut search, |c, n| measured(speeds[c], n));
    assert_eq!(kinds[..2], [RoundKind::Probe, RoundKind::Race]);
    let halved = o
        .candidates
        .iter()
        .filter(|c| c.fate == Fate::StoppedLowerHalf)
        .count();
    assert!(halved >= 4, "{o:#?}");
    assert!(o.candidates.iter().all(|c| c.fate != Fate::StoppedSlower));
    // A race round runs each survivor twice, twice as long.
    let race = o.candidates[7]
        .rounds
        .iter()
        .find(|r| r.kind == RoundKind::Race)
        .expect("candidate 7 raced");
    assert_eq!(race.runs.len(), 2);
    assert_eq!(race.length_factor, 2);
    assert!(o.winner.is_some());
}

#[test]
fn none_goes_on_behind_a_candidate_settled_worse() {
    // 1 is settled worse than 0 at the probe; 2 and 3 are slower still but
    // with wide intervals (never settled): the better half of four is 0 and
    // 1, so 2 and 3 stop too, and 1 comes back only as the runner-up.
    let mut search = Search::new(labels(4), Settings::new(Objective::Throughput));
    let (o, _, _) = drive(&mut search, |c, n| match c {
        0 => measured(200.0, n),
        1 => measured(100.0, n),
        _ => RunResult::Measured {
            value: 90.0 - c as f64,
            ci95: Some(Interval {
                low: 10.0,
                high: 400.0,
            }),
        },
    });
    for c in [2, 3] {
        assert_eq!(o.candidates[c].fate, Fate::StoppedLowerHalf, "{o:#?}");
        assert_eq!(o.candidates[c].round_reached, Some(0));
    }
    assert_eq!(o.winner, Some(0));
    assert_eq!(o.runner_up, Some(1));
}

#[test]
fn failed_and_refused_candidates_are_recorded_and_the_search_goes_on() {
    let speeds = [100.0, 0.0, 150.0];
    let mut search = Search::new(labels(3), Settings::new(Objective::Throughput));
    search.add_unsupported(
        "tch compile=xla".into(),
        "compile = xla is not allowed".into(),
    );
    let (o, _, _) = drive(&mut search, |c, n| {
        if c == 1 {
            RunResult::Failed {
                reason: "out of memory".into(),
            }
        } else {
            measured(speeds[c], n)
        }
    });
    assert_eq!(o.winner, Some(2), "{o:#?}");
    assert_eq!(o.candidates[1].fate, Fate::Failed);
    assert_eq!(o.candidates[1].why, "failed at round 0: out of memory");
    assert_eq!(o.candidates[3].fate, Fate::Unsupported);
    assert_eq!(o.candidates[3].round_reached, None);
    assert!(o.candidates[3].why.contains("compile = xla"));
    // The runner-up stopped at the probe comes back for the confirmation.
    assert_eq!(o.runner_up, Some(0));
    assert!(o.confirmed);
}

#[test]
fn nothing_runnable_ends_at_once_and_a_lone_survivor_wins_unconfirmed() {
    let mut none = Search::new(Vec::new(), Settings::new(Objective::Throughput));
    none.add_unsupported("a".into(), "refused".into());
    let (o, kinds, _) = drive(&mut none, |_, n| measured(1.0, n));
    assert!(kinds.is_empty());
    assert_eq!(o.winner, None);
    assert!(
        o.verdict.starts_with("no candidate could run"),
        "{}",
        o.verdict
    );

    let mut one = Search::new(labels(2), Settings::new(Objective::Throughput));
    let (o, _, _) = drive(&mut one, |c, n| {
        if c == 0 {
            RunResult::Failed {
                reason: "crashed".into(),
            }
        } else {
            measured(10.0, n)
        }
    });
    assert_eq!(o.winner, Some(1));
    assert!(!o.confirmed);
    assert!(
        o.verdict.contains("the only candidate that ran"),
        "{}",
        o.verdict
    );
}

#[test]
fn the_budget_ends_the_search_with_the_best_so_far_unconfirmed() {
    let budget = Budget::parse("10s").unwrap();
    let speeds = [100.0, 300.0, 200.0];
    let mut search = Search::new(labels(3), Settings::new(Objective::Throughput));
    // Each run takes 4 s of the clock: the third starts at 8 s (< 10 s),
    // the fourth would start at 12 s and is not started.
    let mut clock = 0.0;
    let mut started = Vec::new();
    let outcome = 'search: loop {
        match search.next_step() {
            Step::Done(o) => break o,
            Step::Run(plan) => {
                for &c in &plan.order {
                    if !budget.may_start(clock) {
                        break 'search search.end(Ended::Budget);
                    }
                    started.push(clock);
                    search.record(c, started.len() as i64, clock, measured(speeds[c], 1));
                    clock += 4.0;
                }
            }
        }
    };
    assert_eq!(started, vec![0.0, 4.0, 8.0]);
    assert_eq!(outcome.ended, Ended::Budget);
    assert_eq!(outcome.winner, Some(1));
    assert!(!outcome.confirmed);
    assert!(
        outcome
            .verdict
            .contains("not confirmed: the budget ran out"),
        "{}",
        outcome.verdict
    );
    // A snapshot while running names the same leader.
    let mut live = Search::new(labels(2), Settings::new(Objective::Throughput));
    let Step::Run(plan) = live.next_step() else {
        panic!("a probe round")
    };
    live.record(plan.order[0], 1, 0.0, measured(5.0, 1));
    let snap = live.snapshot();
    assert_eq!(snap.ended, Ended::Running);
    assert_eq!(snap.winner, Some(plan.order[0]));
}

#[test]
fn budgets_are_read_in_words_and_refused_by_name() {
    for (text, seconds) in [
        ("90", 90.0),
        ("90s", 90.0),
        ("15m", 900.0),
        ("1h30m", 5400.0),
    ] {
        assert_eq!(Budget::parse(text).unwrap().seconds, seconds, "{text}");
    }
    for text in ["", "0", "-5m", "15x", "m", "15m3", "8d", "1e9"] {
        let e = Budget::parse(text).unwrap_err();
        assert_eq!(e.field, "budget", "{text}");
    }
    let b = Budget { seconds: 10.0 };
    assert!(b.may_start(9.99));
    assert!(!b.may_start(10.0));
}

#[test]
fn objectives_are_named_and_those_not_searched_yet_refused_with_the_allowed_ones() {
    assert_eq!(Objective::parse("memory").unwrap(), Objective::Memory);
    let e = Objective::parse("speed").unwrap_err();
    assert_eq!(e.field, "objective");
    assert!(e.allowed.contains("throughput"), "{e}");
    let given = |priced, target, gpu| Given {
        priced,
        target,
        gpu,
    };
    assert!(Objective::Throughput.check(Given::default()).is_ok());
    assert!(Objective::Cost.check(given(true, false, false)).is_ok());
    assert!(Objective::TimeToAccuracy
        .check(given(false, true, false))
        .is_ok());
    assert!(Objective::Energy.check(given(false, false, true)).is_ok());
    assert!(!Objective::Energy.higher_is_better());
    assert_eq!(Objective::Energy.unit(), "J/sample");
    for (o, says) in [
        (Objective::Cost, "--price"),
        (Objective::Energy, "on a GPU only"),
        (Objective::TimeToAccuracy, "--target-accuracy"),
    ] {
        let e = o.check(Given::default()).unwrap_err();
        assert_eq!(e.field, "objective");
        assert!(e.to_string().contains(says), "{e}");
        assert!(e.allowed.starts_with("throughput, memory, cost"), "{e}");
    }
    assert!(!Objective::TimeToAccuracy.rounds_lengthen());
    assert!(Objective::Throughput.rounds_lengthen());
}

#[test]
fn the_least_memory_wins_when_memory_is_the_objective() {
    // MiB: candidate 1 uses the least.
    let mib = [300.0, 120.0, 200.0];
    let mut search = Search::new(labels(3), Settings::new(Objective::Memory));
    let (o, _, _) = drive(&mut search, |c, n| RunResult::Measured {
        value: mib[c] * (1.0 + 0.001 * (n % 3) as f64),
        ci95: None,
    });
    assert_eq!(o.winner, Some(1), "{o:#?}");
    let ratio = o.ratio.unwrap();
    assert!(
        ratio < 1.0,
        "the winner's figure ÷ the runner-up's: {ratio}"
    );
    assert_eq!(o.unit, "MiB");
    assert!(
        o.verdict.contains("the peak memory of the runner-up"),
        "{}",
        o.verdict
    );
}

fn cpu_offer(installed: &[&str]) -> Offer {
    Offer {
        installed: installed.iter().map(|s| s.to_string()).collect(),
        device: Device::Cpu,
        cpu_cores: 8,
    }
}

#[test]
fn the_default_space_is_what_is_installed_and_what_each_framework_has() {
    let shares = space(
        &Axes::default(),
        &cpu_offer(&["tch", "pytorch", "tensorflow"]),
    )
    .unwrap();
    let compiles: Vec<(&str, Vec<&str>)> = shares
        .iter()
        .map(|s| {
            (
                s.framework.as_str(),
                s.compile.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        compiles,
        vec![
            ("tch", vec!["off"]),
            ("pytorch", vec!["off", "on", "max-autotune"]),
            ("tensorflow", vec!["off", "xla"]),
        ]
    );
    assert_eq!(shares[0].precision, vec!["fp32", "amp-bf16"]);
    assert_eq!(shares[0].batch_size, vec![64, 32]);
    assert_eq!(shares[0].threads, vec![2, 4, 8]);
    // (1 + 3 + 2) compile modes × 2 precisions × 2 batches × 3 thread counts.
    assert_eq!(shares.iter().map(|s| s.count()).sum::<usize>(), 72);
    // On a GPU: four precisions, the framework's own threads.
    let gpu = Offer {
        device: Device::Cuda(0),
        ..cpu_offer(&["tch"])
    };
    let s = &space(&Axes::default(), &gpu).unwrap()[0];
    assert_eq!(s.precision.len(), 4);
    assert!(s.threads.is_empty());
    assert_eq!(s.count(), 8);
}

#[test]
fn axes_given_replace_the_defaults_and_bad_values_are_refused_by_field() {
    let given = Axes {
        framework: vec!["tch".into(), "pytorch@mine".into()],
        compile: vec!["off".into()],
        precision: vec!["fp32".into()],
        batch_size: vec![8, 16, 32],
        threads: vec![1],
        ..Axes::default()
    };
    let shares = space(&given, &cpu_offer(&["jax"])).unwrap();
    assert_eq!(shares.len(), 2);
    assert_eq!(shares[1].framework, "pytorch@mine");
    assert_eq!(shares.iter().map(|s| s.count()).sum::<usize>(), 6);
    // Device counts, loader workers and cuDNN's mode multiply the space
    // only when given.
    assert!(shares[0].devices.is_empty() && shares[0].cudnn_benchmark.is_empty());
    let wider = Axes {
        devices: vec![1, 2],
        loader_workers: vec![0, 2, 4],
        cudnn_benchmark: vec![true, false],
        ..given
    };
    let shares = space(&wider, &cpu_offer(&["jax"])).unwrap();
    assert_eq!(shares[0].devices, [1, 2]);
    assert_eq!(
        shares.iter().map(|s| s.count()).sum::<usize>(),
        6 * 2 * 3 * 2
    );
    for (axes, field) in [
        (
            Axes {
                precision: vec!["fp64".into()],
                ..Axes::default()
            },
            "precision",
        ),
        (
            Axes {
                compile: vec!["fast".into()],
                ..Axes::default()
            },
            "compile",
        ),
        (
            Axes {
                batch_size: vec![0],
                ..Axes::default()
            },
            "batch_size",
        ),
        (
            Axes {
                threads: vec![-1],
                ..Axes::default()
            },
            "threads",
        ),
        (
            Axes {
                devices: vec![0],
                ..Axes::default()
            },
            "devices",
        ),
        (
            Axes {
                loader_workers: vec![-1],
                ..Axes::default()
            },
            "loader_workers",
        ),
        (
            Axes {
                batch_size: (1..=200).collect(),
                ..Axes::default()
            },
            "space",
        ),
    ] {
        let e = space(&axes, &cpu_offer(&["tch"])).unwrap_err();
        assert_eq!(e.field, field, "{e}");
    }
    let e = space(&Axes::default(), &cpu_offer(&[])).unwrap_err();
    assert_eq!(e.field, "framework");
    assert!(e.to_string().contains("trainbench env install"), "{e}");
}

#[test]
fn the_time_to_a_target_loss_is_the_figure_of_a_run_given_a_loss_to_reach() {
    use crate::summary::{summarize, RunMeasurements};
    let to_loss = summarize(&RunMeasurements {
        eval_losses: vec![(5.0, 3.1), (9.0, 2.4)],
        target_loss: Some(2.5),
        ..RunMeasurements::default()
    });
    assert_eq!(
        Objective::TimeToAccuracy.figure(&to_loss),
        Some((9.0, None))
    );
    // A run given an accuracy to reach keeps its time to accuracy.
    let to_accuracy = summarize(&RunMeasurements {
        evals: vec![(4.0, 0.5), (8.0, 0.95)],
        target_accuracy: Some(0.9),
        ..RunMeasurements::default()
    });
    assert_eq!(
        Objective::TimeToAccuracy.figure(&to_accuracy),
        Some((8.0, None))
    );
}

use super::*;
use crate::protocol::PhaseSeries;

fn series(phase: StepPhase, seconds: &[f64]) -> PhaseSeries {
    PhaseSeries {
        phase,
        seconds: seconds.to_vec(),
    }
}

fn eager() -> StepTimings {
    StepTimings {
        whole_step_s: vec![0.100, 0.102, 0.098, 0.100],
        phases: vec![
            series(StepPhase::Data, &[0.010, 0.010, 0.010, 0.010]),
            series(StepPhase::Forward, &[0.030, 0.031, 0.029, 0.030]),
            series(StepPhase::Backward, &[0.050, 0.050, 0.050, 0.050]),
            series(StepPhase::Optimizer, &[0.012, 0.012, 0.012, 0.012]),
        ],
        fused: None,
        communication: None,
    }
}

#[test]
fn parts_are_means_and_sum_to_the_split_step() {
    let b = breakdown(&eager(), 8, Some(80.0)).unwrap();
    assert_eq!(b.steps, 4);
    let names: Vec<Part> = b.parts.iter().map(|p| p.part).collect();
    assert_eq!(
        names,
        [Part::Data, Part::Forward, Part::Backward, Part::Optimizer]
    );
    assert!((b.parts_sum_s - 0.102).abs() < 1e-12);
    assert!((b.whole_step_s - 0.100).abs() < 1e-12);
    // 0.102 / 0.100 − 1 = 2 %, inside 10 % + 3 SE.
    assert!((b.split_difference - 0.02).abs() < 1e-9);
    assert!(b.agrees);
    // Global batch 8 at 80 samples/s in the windows: 0.1 s per step.
    assert!((b.steady_step_s.unwrap() - 0.1).abs() < 1e-12);
    let fwd = b.part(Part::Forward).unwrap();
    assert!((fwd.per_sample_s - 0.030 / 8.0).abs() < 1e-12);
    assert!((fwd.share - 0.030 / 0.102).abs() < 1e-12);
    // Forward: mean 0.030, s = 0.000816, t(3) = 3.182 → ± 0.0012990.
    let ci = fwd.ci95.unwrap();
    assert!((ci.high - 0.030 - 0.001_299).abs() < 1e-6, "{ci:?}");
    assert!((b.compute_s() - 0.092).abs() < 1e-12);
    assert!(!b.is_fused());
}

#[test]
fn a_split_far_from_the_whole_step_does_not_agree() {
    let mut t = eager();
    t.whole_step_s = vec![0.080, 0.080, 0.080, 0.080];
    let b = breakdown(&t, 8, None).unwrap();
    // 0.102 / 0.080 − 1 = 27.5 % against 10 % + 3 SE (SE ≈ 0.0006 / 0.08).
    assert!(!b.agrees, "{b:?}");
    assert!(b.steady_step_s.is_none());
}

#[test]
fn communication_is_backward_minus_its_local_twin() {
    let mut t = eager();
    t.phases[2] = series(StepPhase::Backward, &[0.050, 0.052, 0.048, 0.050]);
    t.phases.push(series(
        StepPhase::BackwardLocal,
        &[0.040, 0.041, 0.039, 0.040],
    ));
    t.communication = Some("DDP".into());
    let b = breakdown(&t, 16, None).unwrap();
    let names: Vec<Part> = b.parts.iter().map(|p| p.part).collect();
    assert_eq!(
        names,
        [
            Part::Data,
            Part::Forward,
            Part::Backward,
            Part::Communication,
            Part::Optimizer
        ]
    );
    assert!((b.part(Part::Backward).unwrap().mean_s - 0.040).abs() < 1e-12);
    assert!((b.part(Part::Communication).unwrap().mean_s - 0.010).abs() < 1e-12);
    // The sum is unchanged: backward split in two.
    assert!((b.parts_sum_s - 0.102).abs() < 1e-12);
    assert!((b.communication_share.unwrap() - 0.010 / 0.102).abs() < 1e-12);
    // Its interval, by hand: s²/n = 2.667e-6/4 and 6.667e-7/4, so
    // SE = √8.333e-7 = 9.129e-4; Welch–Satterthwaite
    // (8.333e-7)² ÷ ((6.667e-7)²/3 + (1.667e-7)²/3) = 4.41 → 4 df,
    // t(4) = 2.776: 0.010 ± 0.002534.
    let ci = b.part(Part::Communication).unwrap().ci95.unwrap();
    assert!((ci.high - 0.010 - 0.002_534).abs() < 2e-6, "{ci:?}");
    assert!((0.010 - ci.low - 0.002_534).abs() < 2e-6, "{ci:?}");
}

#[test]
fn explain_splits_the_gap_and_merges_fused_compute() {
    let a = breakdown(&eager(), 8, None).unwrap();
    let mut slower = eager();
    slower.phases[2] = series(StepPhase::Backward, &[0.090, 0.090, 0.090, 0.090]);
    slower.whole_step_s = vec![0.140; 4];
    let b = breakdown(&slower, 8, None).unwrap();
    let e = explain(&a, &b, "A", "B");
    // Gap = 0.040 / 8 per sample, all of it backward.
    assert!((e.gap_s - 0.005).abs() < 1e-12);
    let bw = e.parts.iter().find(|p| p.part == Part::Backward).unwrap();
    assert!((bw.share_of_gap.unwrap() - 1.0).abs() < 1e-9);
    assert!(
        e.verdict
            .starts_with("B takes 1.39× the time per sample of A"),
        "{}",
        e.verdict
    );
    assert!(
        e.verdict.contains("backward accounts for 100 %"),
        "{}",
        e.verdict
    );
    assert!(e.granularity_note.is_none());

    let fused = StepTimings {
        whole_step_s: vec![0.060; 3],
        phases: vec![
            series(StepPhase::Data, &[0.005; 3]),
            series(StepPhase::Step, &[0.056; 3]),
        ],
        fused: Some("one XLA program".into()),
        communication: None,
    };
    let c = breakdown(&fused, 8, None).unwrap();
    let e = explain(&a, &c, "torch", "jax");
    let names: Vec<Part> = e.parts.iter().map(|p| p.part).collect();
    assert_eq!(names, [Part::Data, Part::Step]);
    // A's compute 0.092 per step folds into one part: 0.0115 per sample.
    let step = &e.parts[1];
    assert!((step.a_per_sample_s - 0.0115).abs() < 1e-12);
    assert!((step.b_per_sample_s - 0.007).abs() < 1e-12);
    let note = e.granularity_note.unwrap();
    assert!(note.starts_with("jax fuses"), "{note}");
    assert!(
        note.contains("jax's is only the host work before its program")
            && note.contains("torch's the whole batch preparation"),
        "{note}"
    );
    assert!(e.verdict.starts_with("torch takes"), "{}", e.verdict);
}

#[test]
fn repeats_average_part_by_part() {
    let a = breakdown(&eager(), 8, None).unwrap();
    let mut t = eager();
    t.phases[0] = series(StepPhase::Data, &[0.030; 4]);
    let b = breakdown(&t, 8, None).unwrap();
    let m = average(&[&a, &b]).unwrap();
    assert!((m.part(Part::Data).unwrap().mean_s - 0.020).abs() < 1e-12);
    assert!((m.parts_sum_s - 0.112).abs() < 1e-12);
    assert_eq!(m.steps, 8);
    assert!(m.method.contains("2 repeats"));
}

#[test]
fn nothing_measured_is_none() {
    let t = StepTimings {
        whole_step_s: vec![],
        phases: vec![],
        fused: None,
        communication: None,
    };
    assert!(breakdown(&t, 8, None).is_none());
}

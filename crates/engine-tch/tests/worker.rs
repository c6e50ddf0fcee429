//! The real worker binary, training real tiny models on the CPU.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::{assert_clean_failure, error_of, train, windows, worker, Outcome};
use trainbench_core::protocol::{ErrorClass, Event};

/// The step breakdown comes after the last window, times
/// `breakdown_steps(steps)` whole and split steps, splits them into data,
/// forward, backward and optimizer, and its parts sum to the whole step
/// within the tolerance `core::breakdown` justifies.
fn check_breakdown(o: &Outcome, model: &str, batch: u64, steps: u64) {
    use trainbench_core::breakdown::breakdown;
    use trainbench_core::protocol::StepPhase;
    let at = o
        .events
        .iter()
        .position(|e| matches!(e, Event::Breakdown(_)))
        .unwrap_or_else(|| panic!("{model}: no breakdown event"));
    let last_window = o
        .events
        .iter()
        .rposition(|e| matches!(e, Event::Window { .. }))
        .unwrap();
    assert!(
        at > last_window,
        "{model}: the breakdown must follow the timed windows"
    );
    let Event::Breakdown(t) = &o.events[at] else {
        unreachable!()
    };
    let n = trainbench_core::spec::breakdown_steps(steps) as usize;
    assert_eq!(t.whole_step_s.len(), n, "{model}");
    let phases: Vec<StepPhase> = t.phases.iter().map(|p| p.phase).collect();
    assert_eq!(
        phases,
        [
            StepPhase::Data,
            StepPhase::Forward,
            StepPhase::Backward,
            StepPhase::Optimizer
        ],
        "{model}"
    );
    assert!(t
        .phases
        .iter()
        .all(|p| p.seconds.len() == n && p.seconds.iter().all(|s| *s >= 0.0)));
    assert!(t.fused.is_none(), "{model}: libtorch is eager");
    let b = breakdown(t, batch, None).unwrap();
    assert!(
        b.agrees,
        "{model}: parts sum {} s, whole step {} s, difference {:.1} % > tolerance {:.1} %",
        b.parts_sum_s,
        b.whole_step_s,
        b.split_difference * 100.0,
        b.tolerance * 100.0
    );
    // Backward has about twice forward's FLOPs, but these tiny models are
    // bound by per-operator overhead: BERT-tiny measured 24.1 ms backward
    // against 24.2 ms forward on a busy 2-core CI machine, and on a busier
    // one all four forward steps ran slower than every backward (fastest
    // 34.2 ms against 25.6 ms). Time booked to the wrong phase leaves
    // backward near zero (a missing clock read moves all of it into the
    // next phase), so the check asks for a third of forward: far below
    // what contention has shown, far above a misbooked phase.
    // Each phase's fastest step, not its mean: of four steps, one slowed by
    // another process moves a mean (forward 59 ms, its 95 % interval 13–105
    // ms, failed a mean check on a busy machine), not a minimum.
    let fastest = |ph: StepPhase| {
        t.phases
            .iter()
            .find(|p| p.phase == ph)
            .unwrap()
            .seconds
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
    };
    assert!(
        fastest(StepPhase::Backward) > fastest(StepPhase::Forward) / 3.0,
        "{model}: fastest backward {} s, fastest forward {} s; {b:?}",
        fastest(StepPhase::Backward),
        fastest(StepPhase::Forward)
    );
}

/// Trains on synthetic data and checks the event stream's shape.
fn check_synthetic_training(model: &str, batch: u64, steps: u64) {
    let window = 5;
    let o = train(&serde_json::json!({
        "model": model, "batch_size": batch, "steps": steps, "window_steps": window,
        "synthetic_samples": 2 * batch, "lr": 3e-3, "warmup_steps": 2, "seed": 7,
    }));
    assert_eq!(o.code, 0, "{model}: {}\n{}", o.stdout, o.stderr);
    let kinds: Vec<&str> = o
        .events
        .iter()
        .map(|e| match e {
            Event::Hello { .. } => "hello",
            Event::FirstStep { .. } => "first_step",
            Event::Window { .. } => "window",
            Event::Eval { .. } => "eval",
            Event::Memory { .. } => "memory",
            Event::Breakdown(_) => "breakdown",
            Event::Profile(_) => "profile",
            Event::Done { .. } => "done",
            Event::Error { .. } => "error",
        })
        .collect();
    assert_eq!(kinds[0], "hello", "{model}");
    assert_eq!(kinds[1], "first_step", "{model}");
    assert_eq!(kinds.last(), Some(&"done"), "{model}");
    assert!(kinds.contains(&"memory"), "{model}");
    check_breakdown(&o, model, batch, steps);
    let Event::Hello {
        param_count,
        flops_per_sample,
        total_steps,
        protocol,
        ..
    } = &o.events[0]
    else {
        unreachable!()
    };
    assert_eq!(*protocol, 1);
    assert_eq!(*total_steps, steps);
    assert!(param_count.is_some_and(|n| n > 0) && flops_per_sample.is_some_and(|f| f > 0.0));
    // Step 1 is reported by first_step; windows cover steps 2..=steps.
    let w = windows(&o);
    assert_eq!(w.len() as u64, (steps - 1).div_ceil(window), "{model}");
    assert_eq!(w.iter().map(|x| x.0).sum::<u64>(), steps - 1, "{model}");
    let mut previous_end = match &o.events[1] {
        Event::FirstStep { t_ns, .. } => *t_ns,
        _ => unreachable!(),
    };
    for (_, start, end, _) in &w {
        assert!(
            *start >= previous_end && end > start,
            "{model}: windows must be ordered and non-empty"
        );
        previous_end = *end;
    }
    let first = w.first().unwrap().3;
    let last = w.last().unwrap().3;
    assert!(
        last < 0.7 * first,
        "{model}: loss did not go down enough ({first} → {last})"
    );
    match o.events.last() {
        Some(Event::Done {
            steps: s,
            samples,
            reason,
            ..
        }) => {
            assert_eq!(
                (*s, *samples, reason.as_str()),
                (steps, steps * batch, "completed")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn small_cnn_trains_on_synthetic_data() {
    check_synthetic_training("resnet_mini", 16, 41);
}

#[test]
fn small_vit_trains_on_synthetic_data() {
    check_synthetic_training("vit_mini_patch4_32", 16, 41);
}

#[test]
fn small_bert_trains_on_synthetic_data() {
    check_synthetic_training("bert_tiny", 8, 41);
}

#[test]
fn small_cnn_reaches_95_percent_on_mnist_within_two_minutes() {
    let o = train(&serde_json::json!({
        "model": "resnet_mini", "data": "mnist", "batch_size": 64, "epochs": 6, "lr": 2e-3,
        "target_accuracy": 0.95, "stop_at_target": true,
    }));
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let Event::Hello { data, .. } = &o.events[0] else {
        panic!("no hello")
    };
    assert_eq!((data.train_samples, data.eval_samples), (4500, 500));
    let evals: Vec<(f64, f64)> = o
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Eval {
                accuracy,
                elapsed_s,
                ..
            } => Some((*accuracy, *elapsed_s)),
            _ => None,
        })
        .collect();
    let (acc, elapsed) = *evals.last().expect("evaluations");
    assert!(acc >= 0.95, "accuracy {acc}");
    assert!(elapsed < 120.0, "took {elapsed} s");
    assert!(
        evals.windows(2).all(|p| p[1].1 > p[0].1),
        "eval times must increase"
    );
    match o.events.last() {
        Some(Event::Done { reason, .. }) => assert_eq!(reason, "target_reached"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn amp_bf16_autocast_runs_on_the_cpu() {
    let o = train(&serde_json::json!({
        "model": "vit_mini_patch4_32", "batch_size": 8, "steps": 6, "window_steps": 5, "precision": "amp-bf16",
    }));
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let Event::Hello {
        precision_in_effect,
        ..
    } = &o.events[0]
    else {
        panic!()
    };
    assert!(
        precision_in_effect.contains("bfloat16"),
        "{precision_in_effect}"
    );
}

#[test]
fn precisions_the_cpu_cannot_do_are_unsupported() {
    for precision in ["tf32", "amp-fp16"] {
        let o = train(
            &serde_json::json!({"model": "resnet_mini", "batch_size": 4, "steps": 2, "precision": precision}),
        );
        assert_clean_failure(&o, ErrorClass::Unsupported, "precision", 3);
        assert!(error_of(&o).2.contains(precision));
    }
}

#[test]
fn an_allocation_the_machine_cannot_hold_is_an_oom_error() {
    // 10 million 32×32×3 fp32 images (123 GB) cannot be allocated on any test machine.
    let o = train(&serde_json::json!({
        "model": "resnet_mini", "batch_size": 10_000_000, "synthetic_samples": 10_000_000, "steps": 1,
    }));
    let (class, field, message) = error_of(&o);
    assert_eq!(class, ErrorClass::Oom, "{message}");
    assert_eq!(field, None);
    assert_eq!(o.code, 1);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

#[test]
fn more_than_one_device_is_unsupported_and_names_the_frameworks_that_can() {
    let o = train(
        &serde_json::json!({"model": "resnet_mini", "batch_size": 4, "steps": 2, "devices": 2}),
    );
    assert_clean_failure(&o, ErrorClass::Unsupported, "devices", 3);
    let msg = error_of(&o).2;
    for fw in ["pytorch", "tensorflow", "jax"] {
        assert!(msg.contains(fw), "{msg}");
    }
}

#[test]
fn a_gpu_that_is_not_there_is_unsupported() {
    if tch::Cuda::is_available() {
        return;
    }
    let o = train(
        &serde_json::json!({"model": "resnet_mini", "batch_size": 4, "steps": 2, "device": "cuda:0"}),
    );
    assert_clean_failure(&o, ErrorClass::Unsupported, "device", 3);
    // libtorch's CUDA half is loaded for a CUDA run (the linker leaves it out
    // of the worker, and without it libtorch sees no GPU even where there is
    // one); its real CUDA hooks answer, and there is no device here.
    let msg = error_of(&o).2;
    let cuda_lib = std::path::Path::new(env!("TRAINBENCH_LIBTORCH_LIB")).join("libtorch_cuda.so");
    if cuda_lib.is_file() {
        assert!(msg.contains("libtorch's CUDA library loaded"), "{msg}");
    } else {
        assert!(
            msg.contains("libtorch's CUDA library did not load"),
            "{msg}"
        );
    }
}

#[test]
fn bad_specs_name_the_field() {
    let missing = std::env::temp_dir().join("trainbench-no-such-dir");
    let cases = [
        (
            serde_json::json!({"model": "resnet_9000", "batch_size": 4, "steps": 2}),
            "model",
        ),
        (
            serde_json::json!({"model": "resnet_mini", "batch_size": 0, "steps": 2}),
            "batch_size",
        ),
        (
            serde_json::json!({"model": "resnet_mini", "batch_size": 4, "steps": -3}),
            "steps",
        ),
        (
            serde_json::json!({"model": "resnet_mini", "batch_size": 4}),
            "steps",
        ),
        (
            serde_json::json!({"model": "resnet_mini", "batch_size": 4, "steps": 2, "data": "cifar10", "data_path": missing}),
            "data_path",
        ),
        (
            serde_json::json!({"model": "resnet_mini", "batch_size": 5000, "steps": 2, "data": "mnist"}),
            "batch_size",
        ),
        // A model file comes with the studio's TorchScript capture (`--capture`).
        (
            serde_json::json!({"model": "/m.py:build", "model_sha256": "0".repeat(64), "batch_size": 2, "steps": 2, "in_channels": 3, "image_size": 8, "num_classes": 5}),
            "model",
        ),
    ];
    for (spec, field) in cases {
        let o = train(&spec);
        assert_clean_failure(&o, ErrorClass::BadConfig, field, 2);
    }
    // Not JSON at all.
    let mut child = worker()
        .args(["train"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"model: resnet")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let events: Vec<Event> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(Event::parse_line)
        .collect();
    assert!(
        matches!(events.last(), Some(Event::Error { class: ErrorClass::BadConfig, field: Some(f), .. }) if f == "spec")
    );
}

/// Writes a CIFAR-10 directory in the standard binary format with random pixels.
fn write_cifar(dir: &Path, train_records: usize, test_records: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let mut state = 12345u64;
    let mut record = |label: u8| {
        let mut r = vec![label];
        for _ in 0..3072 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            r.push((state >> 56) as u8);
        }
        r
    };
    let mut batch = |n: usize| {
        (0..n)
            .flat_map(|i| record((i % 10) as u8))
            .collect::<Vec<u8>>()
    };
    std::fs::write(dir.join("data_batch_1.bin"), batch(train_records)).unwrap();
    std::fs::write(dir.join("test_batch.bin"), batch(test_records)).unwrap();
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trainbench-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn cifar10_binary_trains_and_evaluates() {
    let dir = temp_dir("cifar-ok");
    write_cifar(&dir, 64, 20);
    let o = train(&serde_json::json!({
        "model": "resnet_mini", "batch_size": 16, "epochs": 2, "data": "cifar10", "data_path": dir,
    }));
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let evals = o
        .events
        .iter()
        .filter(|e| matches!(e, Event::Eval { samples: 20, .. }))
        .count();
    assert_eq!(evals, 2, "one evaluation per epoch");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_corrupt_cifar10_file_is_a_bad_config() {
    let dir = temp_dir("cifar-corrupt");
    write_cifar(&dir, 10, 10);
    // Truncate one record.
    let p = dir.join("data_batch_1.bin");
    let bytes = std::fs::read(&p).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() - 100]).unwrap();
    let o = train(
        &serde_json::json!({"model": "resnet_mini", "batch_size": 4, "steps": 2, "data": "cifar10", "data_path": dir}),
    );
    assert_clean_failure(&o, ErrorClass::BadConfig, "data_path", 2);
    assert!(error_of(&o).2.contains("data_batch_1.bin"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn describe(args: &[&str]) -> serde_json::Value {
    let out = worker()
        .arg("describe")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn check_reference_count(model: &str) {
    let d = describe(&["--model", model]);
    let reference = d["reference_params"].as_u64().unwrap();
    let counted = d["param_count"].as_u64().unwrap();
    let in_scope = if d["reference_includes_head"].as_bool().unwrap() {
        counted
    } else {
        d["backbone_param_count"].as_u64().unwrap()
    };
    assert_eq!(in_scope, reference, "{model}");
    assert_eq!(
        counted,
        d["param_count_analytical"].as_u64().unwrap(),
        "{model}"
    );
}

#[test]
fn parameter_counts_equal_the_references() {
    for model in [
        "vit_tiny_patch16_224",
        "vit_small_patch16_224",
        "vit_base_patch16_224",
        "resnet18",
        "resnet50",
        "bert_base_uncased",
        "gpt2_small",
        "llama_135m",
        "fraud_transformer_354m",
    ] {
        check_reference_count(model);
    }
}

/// ViT-L and larger need several GiB; run with TRAINBENCH_TEST_LARGE=1
/// (Llama 3 8B, 32 GB in fp32, is counted by the Python workers' shape-only
/// builds instead).
#[test]
fn parameter_counts_of_the_large_models() {
    if std::env::var_os("TRAINBENCH_TEST_LARGE").is_none() {
        eprintln!("skipped: set TRAINBENCH_TEST_LARGE=1 to build ViT-L/H/g/G and BERT-large");
        return;
    }
    for model in [
        "vit_large_patch16_224",
        "bert_large_uncased",
        "vit_huge_patch14_224",
        "vit_giant_patch14_224",
        "vit_gigantic_patch14_224",
        "gpt2_medium",
        "tinyllama_1_1b",
        "llama3_2_1b",
    ] {
        check_reference_count(model);
    }
}

#[test]
fn parameter_counts_follow_the_options() {
    let d = describe(&["--model", "resnet50", "--num-classes", "10"]);
    assert_eq!(d["param_count"], 25_557_032 - 2048 * 990 - 990);
    let d = describe(&[
        "--model",
        "vit_base_patch16_224",
        "--num-classes",
        "37",
        "--image-size",
        "384",
    ]);
    // 577 tokens instead of 197: 380 more position embeddings; head 768×37+37.
    assert_eq!(d["param_count"], 86_567_656 + 380 * 768 - 768 * 963 - 963);
    let d = describe(&[
        "--model",
        "bert_base_uncased",
        "--num-classes",
        "5",
        "--vocab-size",
        "1000",
    ]);
    assert_eq!(d["param_count"], 109_482_240 - 29_522 * 768 + 768 * 5 + 5);
}

#[test]
fn describe_rejects_bad_options_with_the_field() {
    let out = worker()
        .args([
            "describe",
            "--model",
            "vit_base_patch16_224",
            "--image-size",
            "100",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["field"], "image_size");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn quick_prints_a_report_for_a_person() {
    let out = worker().args(["quick", "--epochs", "1"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "steady throughput",
        "samples/s",
        "time to first step",
        "peak memory",
        "process peak RSS",
        "final accuracy",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

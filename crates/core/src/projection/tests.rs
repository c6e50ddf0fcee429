use super::*;
use crate::reference::gpu_peak_for;

fn split_of(compute: f64, memory: f64, fixed: f64) -> StepSplit {
    StepSplit {
        compute_s: compute,
        memory_s: memory,
        fixed_s: fixed,
        basis: String::new(),
    }
}

#[test]
fn a_step_scales_part_by_part_between_the_peak_and_bandwidth_ratios() {
    // 0.6 s compute, 0.3 s memory, 0.1 s data; batch 10.
    let s = split_of(0.6, 0.3, 0.1);
    // H100 SXM → H200: the same peak, 4.8 / 3.35 the bandwidth.
    let h100 = gpu_peak_for("NVIDIA H100 80GB HBM3").unwrap();
    let h200 = gpu_peak_for("NVIDIA H200").unwrap();
    let r = Ratios::gpus(&h100, &h200, Precision::AmpBf16);
    assert_eq!(r.peak, 1.0);
    let bw = 4.8 / 3.35;
    assert!((r.bandwidth - bw).abs() < 1e-12);
    let b = by_parts(10.0, &s, r);
    // Worst: compute as measured, memory faster; best: both faster.
    assert!(
        (b.low - 10.0 / (0.6 + 0.3 / bw + 0.1)).abs() < 1e-9,
        "{b:?}"
    );
    assert!(
        (b.high - 10.0 / (0.6 / bw + 0.3 / bw + 0.1)).abs() < 1e-9,
        "{b:?}"
    );
    assert!((b.mid - (b.low * b.high).sqrt()).abs() < 1e-9);
    // One thread → two on the same CPU: compute up to twice as fast.
    let b = by_parts(10.0, &s, Ratios::threads(1, 2));
    assert!(
        (b.low - 10.0).abs() < 1e-9 && (b.high - 10.0 / 0.7).abs() < 1e-9,
        "{b:?}"
    );
    // Epoch time is the inverse band.
    let e = b.inverse(1000.0);
    assert!(
        (e.low - 70.0).abs() < 1e-9 && (e.high - 100.0).abs() < 1e-9,
        "{e:?}"
    );
}

#[test]
fn a_cpu_run_projects_to_a_gpu_by_the_mfu_its_family_reaches_in_print() {
    let h100 = gpu_peak_for("H100 SXM").unwrap();
    let resnet = |m: &str| m == "resnet50";
    let (range, rows) = published_mfu(resnet);
    assert!(rows >= 4, "{rows}");
    assert!(range.0 > 0.1 && range.1 < 0.6, "{range:?}");
    let flops = crate::models::lookup("resnet50")
        .unwrap()
        .default_config()
        .flops_per_sample();
    let b = by_mfu(flops, &h100, Precision::AmpBf16, range);
    assert!((b.low - range.0 * 989e12 / flops).abs() < 1e-6, "{b:?}");
    // No published row of a family: the fallback range, said by zero rows.
    assert_eq!(published_mfu(|_| false), (FALLBACK_MFU, 0));
}

#[test]
fn a_model_outside_the_catalogue_or_a_family_with_one_result_takes_the_generic_range() {
    // A library model has no family: no published result is of it (an
    // empty catalogue name in the published table is not its family).
    for model in [
        "timm:resnet18",
        "hf:gpt2",
        "/w/model.py:build",
        "script:/w/t.py",
    ] {
        let r = family_mfu(model);
        assert_eq!(
            (r.low, r.high, r.rows),
            (FALLBACK_MFU.0, FALLBACK_MFU.1, 0),
            "{model}"
        );
        assert!(r.basis().starts_with("no published result"), "{model}");
    }
    // Many results: their own range, not widened.
    let r = family_mfu("resnet50");
    assert!(r.rows >= 4 && !r.widened, "{r:?}");
    // One plausible result: a point, so the generic range around it.
    let r = MfuRange::of(((0.6, 0.6), 1));
    assert!(
        r.widened && (r.low, r.high) == (FALLBACK_MFU.0, 0.6),
        "{r:?}"
    );
    assert!(r.basis().contains("one published result"), "{}", r.basis());
    let r = MfuRange::of(((0.3, 0.3), 1));
    assert_eq!((r.low, r.high), FALLBACK_MFU, "{r:?}");
}

use super::*;
use crate::reference::gpu_peak_for;

#[test]
fn scaling_efficiency_is_throughput_n_over_n_times_throughput_1() {
    assert_eq!(scaling_efficiency(Some(180.0), 2, Some(100.0)), Some(0.9));
    assert_eq!(scaling_efficiency(Some(100.0), 1, Some(100.0)), Some(1.0));
    assert_eq!(scaling_efficiency(None, 2, Some(100.0)), None);
    assert_eq!(scaling_efficiency(Some(100.0), 2, Some(0.0)), None);
}

fn w(samples: u64, secs: f64) -> WindowTiming {
    WindowTiming {
        samples,
        start_ns: 0,
        end_ns: (secs * 1e9) as u64,
    }
}

#[test]
fn summary_from_fixed_windows_matches_hand_computation() {
    let m = RunMeasurements {
        tokens_per_sample: None,
        param_count: Some(1000),
        flops_per_sample: Some(1e12),
        batch_size: 100,
        devices: 1,
        precision: Some(Precision::AmpBf16),
        windows: vec![
            w(100, 10.0),
            w(100, 1.0),
            w(100, 1.0),
            w(100, 0.5),
            w(100, 1.0),
            w(100, 2.0),
            w(100, 1.0),
            w(100, 1.0),
        ],
        first_step_s: Some(3.5),
        evals: vec![(5.0, 0.5), (9.0, 0.8), (12.0, 0.9)],
        target_accuracy: Some(0.8),
        memory: vec![
            MemoryPeak {
                device: "cpu".into(),
                source: "process_rss".into(),
                peak_bytes: 9,
            },
            MemoryPeak {
                device: "cuda:0".into(),
                source: "allocator".into(),
                peak_bytes: 7,
            },
        ],
        gpu: Some(GpuDigest {
            sources: vec!["gpu:0".into()],
            samples: 70,
            steady_s: 7.5,
            energy_j: Some(700.0),
            energy_note: "counter".into(),
            mean_power_w: Some(93.3),
            power_readings: 0,
            mean_util_percent: None,
            peak_mem_used_bytes: None,
            slowdown_bits: 0x4,
            slowdown_samples: 3,
            max_other_processes: 1,
        }),
        device_name: Some("NVIDIA H100 80GB HBM3".into()),
        device_peak: gpu_peak_for("NVIDIA H100 80GB HBM3"),
        price: Some(crate::reference::default_prices()[3].clone()),
        real_epoch_samples: None,
        image_model: true,
        ..Default::default()
    };
    let s = summarize(&m);
    assert_eq!(s.throughput_samples_per_s, Some(100.0));
    assert_eq!(
        s.throughput_ci95,
        Some(Interval {
            low: 50.0,
            high: 200.0
        })
    );
    assert_eq!((s.windows_total, s.windows_warmup), (8, 1));
    assert_eq!(s.peak_memory_source.as_deref(), Some("allocator"));
    assert_eq!(s.time_to_accuracy_s, Some(9.0));
    assert_eq!(s.target_reached, Some(true));
    // Projected: 1,281,167 / 100 s = 12,811.67 s at the row's price per device-hour.
    assert_eq!(s.cost_is_projected, Some(true));
    let per_hour = m.price.as_ref().unwrap().usd_per_device_hour;
    assert!((s.cost_per_epoch_usd.unwrap() - 12_811.67 / 3600.0 * per_hour).abs() < 1e-9);
    // 700 J over the 7 steady windows' 700 samples.
    assert_eq!(s.energy_j_per_sample, Some(1.0));
    // 1e12 FLOPs × 100 /s ÷ 989e12.
    assert!((s.mfu.unwrap() - 100.0 / 989.0).abs() < 1e-12);
    // The steady windows run at 50–200 samples/s: too spread, besides
    // what NVML saw.
    let codes: Vec<&str> = s.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(
        codes,
        ["window_spread", "gpu_slowdown", "other_gpu_processes"]
    );
    assert_eq!(s.checks.len(), 7);
    assert!(s.breakdown.is_none());
    assert!(
        s.warnings[1]
            .message
            .contains("(software power cap) in 3 of 70"),
        "{:?}",
        s.warnings
    );
}

#[test]
fn what_was_not_measured_stays_empty() {
    let m = RunMeasurements {
        tokens_per_sample: None,
        batch_size: 8,
        devices: 1,
        target_accuracy: Some(0.99),
        evals: vec![(1.0, 0.5)],
        ..Default::default()
    };
    let s = summarize(&m);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(s.throughput_samples_per_s, None);
    assert_eq!(s.cost_per_epoch_usd, None);
    assert_eq!(s.mfu, None);
    assert!(s.mfu_note.starts_with("unknown device"));
    assert_eq!(
        (s.time_to_accuracy_s, s.target_reached),
        (None, Some(false))
    );
    assert_eq!(s.energy_j_per_sample, None);
}

#[test]
fn a_full_real_epoch_is_measured_not_projected() {
    let m = RunMeasurements {
        tokens_per_sample: None,
        batch_size: 10,
        devices: 1,
        real_epoch_samples: Some(40),
        windows: vec![w(20, 2.0), w(20, 2.0), w(20, 2.0)],
        price: Some(crate::reference::default_prices()[3].clone()),
        ..Default::default()
    };
    let s = summarize(&m);
    assert_eq!(s.epoch_time_s, Some(4.0));
    assert_eq!(s.epoch_samples, Some(40));
    assert_eq!(s.cost_is_projected, Some(false));
}

#[test]
fn time_to_loss_is_the_first_evaluation_at_or_under_the_target() {
    let m = RunMeasurements {
        eval_losses: vec![(5.0, 3.1), (9.0, 2.4), (12.0, 2.0), (15.0, 2.2)],
        target_loss: Some(2.4),
        ..RunMeasurements::default()
    };
    let s = summarize(&m);
    assert_eq!(s.time_to_loss_s, Some(9.0));
    assert_eq!(s.best_loss, Some(2.0));
    assert_eq!(s.target_reached, Some(true));
    assert_eq!(s.time_to_accuracy_s, None);
    let missed = summarize(&RunMeasurements {
        target_loss: Some(1.0),
        ..m
    });
    assert_eq!(missed.time_to_loss_s, None);
    assert_eq!(missed.target_reached, Some(false));
}

#[test]
fn repeats_aggregate_with_a_t_interval() {
    let mk = |t| RunSummary {
        throughput_samples_per_s: Some(t),
        ..summarize(&RunMeasurements::default())
    };
    let r = aggregate_repeats(&[mk(1.0), mk(2.0), mk(3.0)]);
    assert_eq!(r.throughput_mean_samples_per_s, Some(2.0));
    assert!((r.throughput_ci95.unwrap().high - 4.4843).abs() < 1e-3);
}

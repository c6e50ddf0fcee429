//! Generated runs for tests and benchmarks (feature `fixtures`): written
//! through the same calls the runner makes (insert, start, events, telemetry,
//! finish, summary), with deterministic values from a seed. They are labelled
//! `generated` in their provenance and never mixed into a user's database by
//! the studio itself.

use trainbench_core::protocol::{DataInfo, DeviceInfo, Event};
use trainbench_core::spec::{
    Compile, ConfigKeys, DataSource, Device, Framework, Parallel, Precision,
};
use trainbench_core::summary::{summarize, RunStatus};

use crate::{NewRun, Result, Store, TelemetrySample};

/// What to generate.
#[derive(Debug, Clone)]
pub struct FixtureRun {
    pub framework: Framework,
    /// Its environment (a release's is `jax==0.7.2`); `None`: the studio's own.
    pub environment: Option<String>,
    pub model: String,
    pub precision: Precision,
    pub devices: u32,
    pub batch_size: u64,
    /// Steady throughput the windows are built around, samples/s.
    pub samples_per_s: f64,
    pub windows: u64,
    pub target_accuracy: Option<f64>,
    pub price_offering: Option<String>,
    pub status: RunStatus,
    pub seed: u64,
    /// Environment variables the run set (`spec::env`).
    pub env: std::collections::BTreeMap<String, String>,
    /// The sweep it belongs to (`None`: none).
    pub sweep_id: Option<i64>,
}

impl Default for FixtureRun {
    fn default() -> Self {
        FixtureRun {
            framework: Framework::Tch,
            environment: None,
            model: "resnet_mini".into(),
            precision: Precision::Fp32,
            devices: 1,
            batch_size: 32,
            samples_per_s: 400.0,
            windows: 12,
            target_accuracy: Some(0.9),
            price_offering: Some("AWS p4d.24xlarge on-demand".into()),
            status: RunStatus::Completed,
            seed: 1,
            env: Default::default(),
            sweep_id: None,
        }
    }
}

/// A small deterministic generator (SplitMix64).
fn next(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// `n` generated runs in `store` for the benchmarks at scale: four
/// frameworks, four models, four precisions, one and two devices, one run in
/// fifty failed, throughputs spread over 200–1,160 samples/s.
pub fn many_runs(store: &mut Store, n: usize) -> Result<()> {
    let models = [
        "resnet_mini",
        "vit_mini_patch4_32",
        "resnet50",
        "vit_base_patch16_224",
    ];
    let frameworks = [
        Framework::Tch,
        Framework::Pytorch,
        Framework::Jax,
        Framework::Tensorflow,
    ];
    for i in 0..n {
        write_run(
            store,
            &FixtureRun {
                framework: frameworks[i % 4],
                model: models[(i / 4) % 4].into(),
                precision: Precision::ALL[(i / 16) % 4],
                devices: 1 + (i % 2) as u32,
                samples_per_s: 200.0 + (i % 97) as f64 * 10.0,
                status: if i % 50 == 7 {
                    RunStatus::Failed
                } else {
                    RunStatus::Completed
                },
                seed: i as u64,
                ..FixtureRun::default()
            },
        )?;
    }
    Ok(())
}

/// Writes one generated run and returns its id.
pub fn write_run(store: &mut Store, f: &FixtureRun) -> Result<i64> {
    let id = store.insert_run(&new_run(f))?;
    store.start_run(
        id,
        &serde_json::json!({
            "generated": true, "cpu_model": "generated fixture", "cpu_cores": 2,
            "hostname": "fixture-host", "os": "generated", "kernel": "generated",
            "gpus": [], "gpu_probe": "no NVIDIA GPU (generated fixture)",
            "studio_version": "fixture", "studio_git_revision": "none",
        }),
    )?;
    let mut rng = f.seed.wrapping_mul(7919).wrapping_add(17);
    let global = f.batch_size * u64::from(f.devices);
    let steps_per_window = 10u64;
    let mut events = opening_events(f);
    let mut t = 1_000_000_000u64;
    let mut telemetry = Vec::new();
    for w in 0..f.windows {
        let warm = if w == 0 { 0.5 } else { 1.0 };
        let tp = f.samples_per_s * warm * (0.95 + 0.1 * next(&mut rng));
        let samples = global * steps_per_window;
        let dur = (samples as f64 / tp * 1e9) as u64;
        events.push(Event::Window {
            index: w,
            first_step: 2 + w * steps_per_window,
            steps: steps_per_window,
            samples,
            start_ns: t,
            end_ns: t + dur,
            loss_mean: 2.3 * (-(w as f64) / 8.0).exp() + 0.05 * next(&mut rng),
            lr: Some(1e-3),
        });
        telemetry.push(TelemetrySample {
            t_ns: t,
            source: "host".into(),
            cpu_percent: Some(95.0 + 5.0 * next(&mut rng)),
            rss_bytes: Some(300_000_000 + (next(&mut rng) * 1e7) as u64),
            host_cpu_percent: Some(110.0),
            ..Default::default()
        });
        t += dur;
        if f.target_accuracy.is_some() && w % 4 == 3 {
            let step = 1 + (w + 1) * steps_per_window;
            events.push(Event::Eval {
                step,
                epoch: (w + 1) as f64 / f.windows as f64,
                elapsed_s: (t - 1_000_000_000) as f64 / 1e9,
                accuracy: (0.5 + 0.5 * (w + 1) as f64 / f.windows as f64).min(0.99),
                loss: Some(0.3),
                samples: 1000,
                t_ns: t,
            });
        }
    }
    events.push(Event::Memory {
        device: "cpu".into(),
        source: "process_rss".into(),
        peak_bytes: 310_000_000 + u64::from(f.devices) * 50_000_000,
        reserved_peak_bytes: None,
    });
    store.record(id, &events, &telemetry)?;
    let reason = (f.status != RunStatus::Completed).then_some("generated failure");
    store.finish_run(
        id,
        f.status,
        reason,
        reason.map(|_| "internal"),
        Some(i32::from(f.status != RunStatus::Completed)),
        "",
    )?;
    let m = store.measurements(id)?;
    store.save_summary(id, &summarize(&m))?;
    Ok(id)
}

/// The queued run of a fixture: its spec, keys and typed columns.
fn new_run(f: &FixtureRun) -> NewRun {
    let mut spec = serde_json::json!({
        "model": f.model, "precision": f.precision, "devices": f.devices, "batch_size": f.batch_size,
        "data": "synthetic", "target_accuracy": f.target_accuracy,
    });
    if !f.env.is_empty() {
        spec["env"] = serde_json::json!(f.env);
    }
    let key = |spec: &serde_json::Value| {
        let mut k = serde_json::json!({"framework": f.framework, "spec": spec});
        if let Some(e) = &f.environment {
            k["environment"] = serde_json::json!(e);
        }
        k.to_string()
    };
    let mut one_device = spec.clone();
    one_device["devices"] = serde_json::Value::Null;
    NewRun {
        sweep_id: f.sweep_id,
        keys: ConfigKeys {
            config: key(&spec),
            scaling: key(&one_device),
        },
        repeat_index: 0,
        framework: f.framework,
        environment: f.environment.clone(),
        model: f.model.clone(),
        precision: f.precision,
        compile: Compile::Off,
        device: Device::Cpu,
        devices: f.devices,
        parallel: Parallel::Ddp,
        batch_size: f.batch_size,
        data: DataSource::Synthetic,
        spec_json: spec.to_string(),
        price_offering: f.price_offering.clone(),
        epoch_samples: None,
        batch_search: None,
    }
}

/// The worker's `hello` and `first_step` events of a fixture.
fn opening_events(f: &FixtureRun) -> Vec<Event> {
    let cpu = DeviceInfo {
        id: "cpu".into(),
        name: Some("generated fixture".into()),
    };
    vec![
        Event::Hello {
            protocol: 1,
            worker: "fixture".into(),
            framework: f.framework.to_string(),
            framework_version: "generated".into(),
            libraries: Vec::new(),
            devices_visible: vec![cpu.clone()],
            device: cpu,
            model: f.model.clone(),
            param_count: Some(77_834),
            flops_per_sample: Some(1.2e7),
            flops_method: None,
            precision: f.precision.to_string(),
            precision_in_effect: f.precision.to_string(),
            execution: None,
            world_size: Some(f.devices),
            batch_size: f.batch_size,
            total_steps: 1 + f.windows * 10,
            threads: 1,
            settings_env: Vec::new(),
            data: DataInfo {
                source: "synthetic".into(),
                path: None,
                train_samples: 4096,
                eval_samples: 1000,
                samples_per_epoch: 4096,
                ..DataInfo::default()
            },
            tokens_per_sample: None,
            train_start_ns: 1_000_000_000,
            t_ns: 1_000_000_000,
        },
        Event::FirstStep {
            since_process_start_s: Some(0.8),
            since_train_start_s: 0.3,
            compile_s: None,
            t_ns: 1_300_000_000,
        },
    ]
}

//! Benchmark: can the store keep up with a long run without slowing it?
//!
//! Writes what a 100,000-step run (a window every 10 steps) and one hour of
//! 10 Hz telemetry (host + one GPU) produce, in the runner's batches (one
//! transaction every 500 ms of run time), to a real file, and reports the time
//! per flush. The runner writes on its own thread of control while the worker
//! trains in another process, so the budget that matters is: a flush must take
//! far less than the 500 ms between flushes.
//!
//!     cargo run --release -p trainbench-store --example write_load

use std::time::Instant;

use trainbench_core::protocol::Event;
use trainbench_core::spec::{CheckedSpec, Framework};
use trainbench_store::{NewRun, Store, TelemetrySample};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("trainbench-write-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("load.sqlite");
    let mut store = Store::open(&path)?;
    let spec = CheckedSpec::new(serde_json::from_value(serde_json::json!({
        "model": "resnet50", "precision": "amp-bf16", "device": "cuda:0", "batch_size": 256, "steps": 1000,
    }))?)?;
    let run = store.insert_run(&NewRun::of_spec(Framework::Tch, None, &spec))?;
    store.start_run(run, &serde_json::json!({}))?;

    // One hour at one flush per 500 ms (WRITE_LOAD_FLUSHES to shorten).
    let flushes: usize = std::env::var("WRITE_LOAD_FLUSHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3600 * 2);
    let windows_total = 10_000u64; // 100,000 steps, windows of 10
    let mut window = 0u64;
    let mut flush_ms = Vec::with_capacity(flushes);
    let started = Instant::now();
    for f in 0..flushes as u64 {
        let mut events = Vec::new();
        // Spread the windows evenly over the hour.
        while window < windows_total && window * flushes as u64 <= f * windows_total {
            events.push(Event::Window {
                index: window,
                first_step: 2 + window * 10,
                steps: 10,
                samples: 2560,
                start_ns: window * 1_000_000_000,
                end_ns: window * 1_000_000_000 + 900_000_000,
                loss_mean: 1.0 / (1.0 + window as f64),
                lr: Some(1e-3),
            });
            window += 1;
        }
        let t0 = f * 500_000_000;
        let telemetry: Vec<TelemetrySample> = (0..5)
            .flat_map(|k| {
                let t = t0 + k * 100_000_000;
                [
                    TelemetrySample {
                        t_ns: t,
                        source: "host".into(),
                        cpu_percent: Some(99.0),
                        rss_bytes: Some(3 << 30),
                        host_cpu_percent: Some(120.0),
                        ..Default::default()
                    },
                    TelemetrySample {
                        t_ns: t,
                        source: "gpu:0".into(),
                        mem_used_bytes: Some(60 << 30),
                        util_percent: Some(97.0),
                        power_w: Some(650.0),
                        energy_mj: Some(t / 1_000_000 * 650),
                        sm_clock_mhz: Some(1980),
                        mem_clock_mhz: Some(2619),
                        throttle_reasons: Some(0),
                        ..Default::default()
                    },
                ]
            })
            .collect();
        let t = Instant::now();
        store.record(run, &events, &telemetry)?;
        flush_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let total = started.elapsed().as_secs_f64();
    flush_ms.sort_by(f64::total_cmp);
    let pct = |p: f64| flush_ms[((flush_ms.len() - 1) as f64 * p) as usize];
    let size = std::fs::metadata(&path)?.len()
        + std::fs::metadata(dir.join("load.sqlite-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
    println!(
        "{flushes} flushes ({windows_total} windows, {} telemetry rows) in {total:.2} s",
        flushes * 10
    );
    println!(
        "per flush: median {:.3} ms, p99 {:.3} ms, max {:.3} ms (budget: 500 ms between flushes)",
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    println!("database size {:.1} MiB", size as f64 / 1048576.0);
    let t = Instant::now();
    let m = store.measurements(run)?;
    let s = trainbench_core::summary::summarize(&m);
    println!("summary of the hour-long run read back and computed in {:.1} ms ({} windows, throughput {:?})", t.elapsed().as_secs_f64() * 1e3, m.windows.len(), s.throughput_samples_per_s);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

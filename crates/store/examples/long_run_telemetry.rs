//! Benchmark: what 1 hour and 24 hours of telemetry from an 8-GPU machine at
//! 10 Hz (the host and 8 GPUs: 9 sources) cost the store, before and after
//! the end-of-run averaging (`Store::compact_telemetry`), and what exporting
//! the run as a session file costs afterwards.
//!
//!     cargo run --release -p trainbench-store --example long_run_telemetry [HOURS…]
//!
//! Samples are written one minute of run time per transaction (the runner
//! writes every 0.5 s; `write_load` measures that rhythm).

use std::time::Instant;

use trainbench_core::spec::{CheckedSpec, Framework};
use trainbench_core::summary::RunStatus;
use trainbench_store::{NewRun, Store, TelemetrySample};

fn samples(minute: u64, gpus: u32) -> Vec<TelemetrySample> {
    let mut out = Vec::with_capacity(600 * (gpus as usize + 1));
    for k in 0..600u64 {
        let t = (minute * 600 + k) * 100_000_000;
        out.push(TelemetrySample {
            t_ns: t,
            source: "host".into(),
            cpu_percent: Some(99.0 + (k % 7) as f64),
            rss_bytes: Some((3 << 30) + (k % 13) * 4096),
            host_cpu_percent: Some(800.0),
            ..Default::default()
        });
        for g in 0..gpus {
            out.push(TelemetrySample {
                t_ns: t,
                source: format!("gpu:{g}"),
                mem_used_bytes: Some((60 << 30) + (k % 11) * 1_048_576),
                util_percent: Some(95.0 + (k % 5) as f64),
                power_w: Some(600.0 + (k % 17) as f64),
                energy_mj: Some(t / 1_000_000 * 650),
                sm_clock_mhz: Some(1980),
                mem_clock_mhz: Some(2619),
                throttle_reasons: Some(if k == 300 { 0x4 } else { 0 }),
                other_processes: Some(0),
                ..Default::default()
            });
        }
    }
    out
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1_048_576.0
}

fn one(hours: u64) -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!(
        "trainbench-long-run-{}-{hours}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("long.sqlite");
    let mut store = Store::open(&path)?;
    let spec = CheckedSpec::new(serde_json::from_value(serde_json::json!({
        "model": "resnet50", "precision": "amp-bf16", "device": "cuda:0", "devices": 8,
        "batch_size": 256, "steps": 1000,
    }))?)?;
    let run = store.insert_run(&NewRun::of_spec(Framework::Tch, None, &spec))?;
    store.start_run(run, &serde_json::json!({}))?;
    let t = Instant::now();
    for minute in 0..hours * 60 {
        store.record(run, &[], &samples(minute, 8))?;
    }
    let write_s = t.elapsed().as_secs_f64();
    let sql = rusqlite::Connection::open(&path)?;
    let checkpoint = || sql.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
    checkpoint()?;
    let raw = std::fs::metadata(&path)?.len();
    let rows = store.run_detail(run)?.telemetry_samples;
    let t = Instant::now();
    let done = store.compact_telemetry(run, None)?;
    let compact_s = t.elapsed().as_secs_f64();
    checkpoint()?;
    let file = std::fs::metadata(&path)?.len();
    let pages: u64 = sql.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let free: u64 = sql.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
    let page: u64 = sql.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    let live = (pages - free) * page;
    // A session holds at least two runs: the long one and a short one.
    let short = store.insert_run(&NewRun::of_spec(Framework::Tch, None, &spec))?;
    for id in [run, short] {
        store.finish_run(id, RunStatus::Completed, None, None, Some(0), "")?;
    }
    let session = store.save_session("long run", &[run, short], Some(run), &Default::default())?;
    let t = Instant::now();
    let file_json = serde_json::to_vec(&store.export_session(session.id, "bench")?)?;
    let export_s = t.elapsed().as_secs_f64();
    println!(
        "| {hours} h | {rows} | {:.0} MiB | {:.1} s | {} | {:.1} s | {:.1} MiB ({:.0} MiB on disk until reused or vacuumed) | {:.2} s, {:.1} MiB |",
        mib(raw),
        write_s,
        done.map_or(rows, |d| d.after),
        compact_s,
        mib(live),
        mib(file),
        export_s,
        mib(file_json.len() as u64),
    );
    drop(store);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let hours: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    println!("| run | telemetry rows | database | written in | rows kept | averaged in | database after | session export |");
    println!("|---|---|---|---|---|---|---|---|");
    for h in if hours.is_empty() { vec![1, 24] } else { hours } {
        one(h)?;
    }
    Ok(())
}

//! A store of many generated runs, for the listing benchmarks
//! (`bench/listing_memory.py`): four frameworks, four models, four
//! precisions, one and two devices, one run in fifty failed, each run with
//! its windows, evaluations, telemetry and summary, written through the
//! calls the runner makes (the `fixtures` feature).
//!
//!     cargo run --release -p trainbench-store --example many_runs -- PATH [RUNS]
//!
//! RUNS defaults to 10,000. PATH must not exist yet.

use std::time::Instant;

use trainbench_core::spec::{Framework, Precision};
use trainbench_core::summary::RunStatus;
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = std::path::PathBuf::from(args.next().ok_or("usage: many_runs PATH [RUNS]")?);
    let n: usize = match args.next() {
        Some(a) => a.parse()?,
        None => 10_000,
    };
    if path.exists() {
        return Err(format!("{} exists already", path.display()).into());
    }
    let started = Instant::now();
    let mut store = Store::open(&path)?;
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
            &mut store,
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
    println!(
        "{n} runs written to {} in {:.1} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

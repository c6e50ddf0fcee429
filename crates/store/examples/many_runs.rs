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

use trainbench_store::fixtures::many_runs;
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
    many_runs(&mut store, n)?;
    println!(
        "{n} runs written to {} in {:.1} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

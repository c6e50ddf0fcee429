//! Benchmark of reports and session files on generated runs (written through
//! the store like real ones; see `trainbench_store::fixtures`):
//!
//! - PDF export of a 10-run comparison with all eight charts (target < 1 s);
//! - CSV export of 10,000 runs (listing from SQLite + writing);
//! - import of a 100-run session file into a fresh database (parse, validate,
//!   one transaction).
//!
//!     cargo run --release -p trainbench-report --example bench [-- --seed-corpus DIR]
//!
//! With `--seed-corpus DIR` it only writes a small valid session file there
//! (the fuzz target's seed) and exits.

use std::time::Instant;

use trainbench_core::compare::Grouping;
use trainbench_core::session::{ChartKind, SessionFile, SessionSettings};
use trainbench_core::{Framework, Precision};
use trainbench_report::{csv, document, pdf};
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn fixture(i: usize) -> FixtureRun {
    FixtureRun {
        framework: Framework::ALL[i % 4],
        precision: [Precision::Fp32, Precision::AmpBf16][(i / 4) % 2],
        devices: 1 + (i / 8 % 2) as u32,
        samples_per_s: 300.0 + (i % 7) as f64 * 40.0,
        seed: i as u64,
        ..Default::default()
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::env::temp_dir().join(format!("trainbench-report-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;

    if let Some(pos) = args.iter().position(|a| a == "--seed-corpus") {
        let out = std::path::PathBuf::from(args.get(pos + 1).ok_or("--seed-corpus DIR")?);
        let mut store = Store::open(&dir.join("seed.sqlite"))?;
        let ids: Vec<i64> = (0..2)
            .map(|i| {
                write_run(
                    &mut store,
                    &FixtureRun {
                        windows: 4,
                        ..fixture(i)
                    },
                )
            })
            .collect::<Result<_, _>>()?;
        let s = store.save_session("seed", &ids, Some(ids[0]), &SessionSettings::default())?;
        let file = store.export_session(s.id, "seed")?;
        std::fs::create_dir_all(&out)?;
        std::fs::write(out.join("valid.json"), serde_json::to_vec(&file)?)?;
        std::fs::remove_dir_all(&dir)?;
        return Ok(());
    }

    // 10,000 runs.
    let mut store = Store::open(&dir.join("bench.sqlite"))?;
    let t = Instant::now();
    let ids: Vec<i64> = (0..10_000)
        .map(|i| write_run(&mut store, &fixture(i)))
        .collect::<Result<_, _>>()?;
    println!(
        "generated 10,000 runs in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let mut list_ms = Vec::new();
    let mut csv_ms = Vec::new();
    let mut size = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let rows = store.list_runs()?;
        list_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let mut out = Vec::new();
        csv::runs(&rows, &mut out)?;
        csv_ms.push(t.elapsed().as_secs_f64() * 1e3);
        size = out.len();
    }
    println!(
        "CSV of 10,000 runs: list from SQLite {:.0} ms + write {:.0} ms = {:.0} ms (median of 5), {:.1} MB",
        median(list_ms.clone()),
        median(csv_ms.clone()),
        median(list_ms) + median(csv_ms),
        size as f64 / 1e6
    );

    // PDF of 10 runs with every chart.
    let ten = &ids[..10];
    let mut pdf_ms = Vec::new();
    let mut pages_bytes = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let loaded = store.load_comparison(ten, Grouping::Runs, None)?;
        let bytes = pdf::report(&document::ReportInput {
            title: "bench".into(),
            comparison: &loaded.comparison,
            runs: &loaded.runs,
            charts: &ChartKind::ALL,
            hidden_series: &[],
            prices: &loaded.prices,
            generated_unix_ms: 0,
            studio_version: "bench",
            extra: &[],
            context: &[],
        })?;
        pdf_ms.push(t.elapsed().as_secs_f64() * 1e3);
        pages_bytes = bytes.len();
        std::fs::write(dir.join("bench.pdf"), &bytes)?;
    }
    println!(
        "PDF of a 10-run comparison with 8 charts: {:.0} ms median of 5 (min {:.0}, max {:.0}), {:.0} kB",
        median(pdf_ms.clone()),
        pdf_ms.iter().copied().fold(f64::INFINITY, f64::min),
        pdf_ms.iter().copied().fold(0.0, f64::max),
        pages_bytes as f64 / 1e3
    );

    // A 100-run session file, imported into fresh databases.
    let s = store.save_session("hundred", &ids[..100], None, &SessionSettings::default())?;
    let t = Instant::now();
    let file = store.export_session(s.id, "bench")?;
    let bytes = serde_json::to_vec(&file)?;
    let export_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut parse_ms = Vec::new();
    let mut import_ms = Vec::new();
    for k in 0..5 {
        let mut target = Store::open(&dir.join(format!("import-{k}.sqlite")))?;
        let t = Instant::now();
        let parsed = SessionFile::parse(&bytes)?;
        parse_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let outcome = target.import_session(&parsed, None)?;
        import_ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(outcome.runs_imported, 100);
    }
    println!(
        "session of 100 runs ({:.1} MB, {} windows): export {:.0} ms; import = parse+validate {:.0} ms + one transaction {:.0} ms (medians of 5, fresh database each)",
        bytes.len() as f64 / 1e6,
        file.runs.iter().map(|r| r.windows.len()).sum::<usize>(),
        export_ms,
        median(parse_ms),
        median(import_ms)
    );
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

//! Backend timings of the desktop studio with 10,000 stored runs: each figure
//! is a real IPC request through Tauri's mock runtime (command, store query,
//! serialisation to the JSON the window receives), median of 7.
//!
//!   cargo run --release -p trainbench-studio --example studio_bench [-- RUNS]
//!
//! Targets: opening the runs table and a comparison, under 200 ms each for
//! the backend part.

use std::time::Instant;

use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, mock_context, noop_assets, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use trainbench_store::fixtures::many_runs;
use trainbench_store::Store;
use trainbench_studio::settings::Settings;
use trainbench_studio::{configure, Studio};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let dir = std::env::temp_dir().join(format!("trainbench-studio-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("bench.sqlite");
    let t = Instant::now();
    generate(&db, n)?;
    println!(
        "generated {n} runs in {:.1} s ({})",
        t.elapsed().as_secs_f64(),
        db.display()
    );

    let studio = Studio::new(Settings::at(&db, &dir.join("studio.json")))?;
    let app = configure(mock_builder(), studio).build(mock_context(noop_assets()))?;
    let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default()).build()?;
    let call = |cmd: &str, args: Value| -> Result<(f64, usize), String> {
        let t = Instant::now();
        let res = get_ipc_response(
            &window,
            InvokeRequest {
                cmd: cmd.into(),
                callback: CallbackFn(0),
                error: CallbackFn(1),
                url: "tauri://localhost".parse().map_err(|e| format!("{e}"))?,
                body: InvokeBody::Json(args),
                headers: Default::default(),
                invoke_key: INVOKE_KEY.to_string(),
            },
        )
        .map_err(|e| e.to_string())?;
        let bytes = match res {
            tauri::ipc::InvokeResponseBody::Json(s) => s.len(),
            tauri::ipc::InvokeResponseBody::Raw(b) => b.len(),
        };
        Ok((t.elapsed().as_secs_f64() * 1000.0, bytes))
    };
    let median = |cmd: &str, args: Value| -> Result<(f64, f64, f64, usize), String> {
        let mut times = Vec::new();
        let mut size = 0;
        for _ in 0..7 {
            let (ms, b) = call(cmd, args.clone())?;
            times.push(ms);
            size = b;
        }
        times.sort_by(f64::total_cmp);
        Ok((times[3], times[0], times[6], size))
    };
    let report = |what: &str, r: (f64, f64, f64, usize)| {
        println!(
            "{what:<44} median {:>7.1} ms  (min {:.1}, max {:.1})  {:>9} bytes of JSON",
            r.0, r.1, r.2, r.3
        );
    };
    report("app_info (first screen)", median("app_info", json!({}))?);
    report(
        &format!("list_runs ({n} runs: the runs table)"),
        median("list_runs", json!({}))?,
    );
    let ten: Vec<i64> = (1..=10).map(|i| i * 37).collect();
    report(
        "compare 10 runs (by run)",
        median(
            "compare",
            json!({"runIds": ten, "grouping": "runs", "baseline": ten[0]}),
        )?,
    );
    let hundred: Vec<i64> = (1..=100).map(|i| i * 7).collect();
    report(
        "compare 100 runs (by configuration)",
        median(
            "compare",
            json!({"runIds": hundred, "grouping": "configurations", "baseline": null}),
        )?,
    );
    report(
        "run_detail (one run)",
        median("run_detail", json!({"runId": 4242}))?,
    );
    drop(window);
    drop(app);
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// `n` generated runs (the store's `many_runs` fixture) in a new database at `db`.
fn generate(db: &std::path::Path, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let mut store = Store::open(db)?;
    many_runs(&mut store, n)?;
    Ok(())
}

//! `trainbench query` through the real CLI: on a real sweep, the views say
//! what `runs` says; on a real SQLite file of generated runs, the documented question answered as a table, CSV and
//! JSON; writes refused (exit 2, field `sql`) with the file unchanged byte
//! for byte; a syntax error, a runaway query and bad limits named by field.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod common;

use std::path::PathBuf;

use common::{output_json, text, trainbench, Db, Scratch, SMALL};
use serde_json::Value;
use trainbench_core::spec::Precision;
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

const FASTEST: &str = "SELECT precision, batch_size, COUNT(*) AS repeats, \
     AVG(throughput_samples_per_s) AS mean_throughput FROM q_runs \
     WHERE status = 'completed' GROUP BY config_key ORDER BY mean_throughput DESC";

/// Four runs: two configurations, two repeats each; amp-bf16 is faster.
/// The store is closed, so its log is folded into the file.
fn seeded(tag: &str) -> (Scratch, PathBuf) {
    let scratch = Scratch::new(&format!("cli-query-{tag}"));
    let path = scratch.0.join("studio.sqlite");
    let mut store = Store::open(&path).unwrap();
    for (seed, (precision, speed)) in [(Precision::Fp32, 400.0), (Precision::AmpBf16, 900.0)]
        .into_iter()
        .enumerate()
    {
        for repeat in 0..2 {
            let run = FixtureRun {
                precision,
                samples_per_s: speed,
                seed: seed as u64 * 10 + repeat,
                ..FixtureRun::default()
            };
            write_run(&mut store, &run).unwrap();
        }
    }
    drop(store);
    (scratch, path)
}

/// The command fails with exit 2 naming `field`; its JSON error's message.
fn refused(scratch: &Scratch, args: &[&str], field: &str) -> String {
    let (out, v) = output_json(trainbench(&scratch.0).args(args).arg("--json"));
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
    assert_eq!(v["error"]["field"], field, "{args:?}: {}", text(&out));
    v["error"]["message"].as_str().unwrap().to_owned()
}

#[test]
fn the_fastest_configuration_as_a_table_csv_and_json() {
    let (scratch, _) = seeded("fastest");
    let (out, v) = output_json(trainbench(&scratch.0).args(["query", FASTEST, "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        v["columns"],
        serde_json::json!(["precision", "batch_size", "repeats", "mean_throughput"])
    );
    assert_eq!(v["rows"][0][0], "amp-bf16");
    assert_eq!(v["rows"][0][1], 32);
    assert_eq!(v["rows"][0][2], 2);
    assert!(v["rows"][0][3].as_f64().unwrap() > v["rows"][1][3].as_f64().unwrap());
    assert_eq!(v["truncated"], false);

    let out = trainbench(&scratch.0)
        .args(["query", FASTEST])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let table = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("precision  batch_size"), "{table}");
    assert!(lines[2].starts_with("amp-bf16"), "{table}");
    assert_eq!(lines.last(), Some(&"(2 rows)"), "{table}");

    let out = trainbench(&scratch.0)
        .args(["query", FASTEST, "--csv", "--max-rows", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let csv = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "precision,batch_size,repeats,mean_throughput");
    assert!(lines[1].starts_with("amp-bf16,32,2,"), "{csv}");
    assert_eq!(lines.len(), 2, "one row: {csv}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-rows"));

    // NULL is null; a missing summary figure stays missing.
    let (out, v) = output_json(trainbench(&scratch.0).args([
        "query",
        "SELECT NULL AS empty, 1.5 AS x",
        "--json",
    ]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(v["rows"], serde_json::json!([[Value::Null, 1.5]]));
}

#[test]
fn a_write_is_refused_and_the_database_is_unchanged() {
    let (scratch, path) = seeded("writes");
    let before = std::fs::read(&path).unwrap();
    for sql in [
        "DELETE FROM runs",
        "ATTACH DATABASE 'other.sqlite' AS other",
        "PRAGMA user_version = 3",
        "UPDATE runs SET status = 'failed'",
        "DROP VIEW q_runs",
        "SELECT 1; DELETE FROM runs",
    ] {
        let message = refused(&scratch, &["query", sql], "sql");
        assert!(message.contains("read-only"), "{sql}: {message}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "the file changed");
    assert!(!scratch.0.join("other.sqlite").exists());
    let (out, v) = output_json(trainbench(&scratch.0).args([
        "query",
        "SELECT COUNT(*) FROM q_runs",
        "--json",
    ]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(v["rows"][0][0], 4);
}

#[test]
fn a_syntax_error_a_runaway_query_and_bad_limits_are_named() {
    let (scratch, _) = seeded("errors");
    let message = refused(&scratch, &["query", "SELEC * FROM q_runs"], "sql");
    assert!(message.contains("syntax error"), "{message}");
    // Stopped by the time limit: an error, not a hang.
    let forever =
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n";
    let message = refused(&scratch, &["query", forever, "--timeout", "0.5"], "sql");
    assert!(message.contains("time limit"), "{message}");
    refused(
        &scratch,
        &["query", "SELECT 1", "--max-rows", "0"],
        "max_rows",
    );
    refused(&scratch, &["query", "SELECT 1", "--timeout=0"], "timeout");
    // A database that is not there is not made.
    let absent = scratch.0.join("absent.sqlite");
    let (out, v) = output_json(
        std::process::Command::new(common::TRAINBENCH)
            .arg("--db")
            .arg(&absent)
            .args(["query", "SELECT 1", "--json"]),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "database");
    assert!(!absent.exists());
}

/// Equal, numbers to the last digits: SQLite reads the stored JSON's
/// decimals with its own conversion, which may round the last bit apart.
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
        _ => a == b,
    }
}

/// What the views say of real runs is what `runs --json` says of them.
#[test]
fn the_views_of_a_real_sweep_say_what_runs_says() {
    let db = Db::new("query-real");
    let mut args = vec!["run"];
    args.extend(SMALL);
    let batch = args.iter().position(|a| *a == "8").unwrap();
    args[batch] = "4,8";
    args.push("--json");
    let (out, _) = db.run(&args);
    assert!(out.status.success(), "{}", text(&out));
    let (out, runs) = db.run(&["runs", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let (out, view) = db.run(&[
        "query",
        "SELECT run_id, status, batch_size, sweep_id, param_count, throughput_samples_per_s, \
         throughput_ci95_low, throughput_ci95_high, peak_memory_bytes, peak_memory_source, \
         time_to_first_step_s, mfu, steady_windows FROM q_runs ORDER BY run_id",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let runs = runs["runs"].as_array().unwrap();
    let rows = view["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (run, row) in runs.iter().zip(rows) {
        let said = [
            run["id"].clone(),
            run["status"].clone(),
            run["batch_size"].clone(),
            run["sweep_id"].clone(),
            run["param_count"].clone(),
            run["throughput_samples_per_s"].clone(),
            run["throughput_ci95"]["low"].clone(),
            run["throughput_ci95"]["high"].clone(),
            run["peak_memory_bytes"].clone(),
            run["peak_memory_source"].clone(),
            run["time_to_first_step_s"].clone(),
            run["mfu"].clone(),
        ];
        for (got, want) in row.as_array().unwrap().iter().zip(&said) {
            assert!(same(got, want), "run {}: {got} against {want}", run["id"]);
        }
        let steady =
            run["windows_total"].as_i64().unwrap() - run["windows_warmup"].as_i64().unwrap();
        assert_eq!(row[12], steady);
    }
    let (out, sweeps) = db.run(&[
        "query",
        "SELECT kind, runs, completed_runs, (SELECT COUNT(*) FROM q_windows) FROM q_sweeps",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let windows: i64 = runs
        .iter()
        .map(|r| r["windows_total"].as_i64().unwrap())
        .sum();
    assert_eq!(sweeps["rows"], serde_json::json!([["run", 2, 2, windows]]));
}

//! The listings written a row at a time (`runs --json`, `query --json` and
//! `--csv`, `export csv` of every run) against the documents made whole,
//! byte for byte, on a real database of generated runs with damaged rows.

use std::path::{Path, PathBuf};

use trainbench_app::query::{query, to_csv, to_json, QueryRequest};
use trainbench_app::Workspace;
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

use crate::open::locate;
use crate::output::stream::Out;
use crate::query_cmd::{stream, Format};
use crate::runs_cmd::{runs_json, write_runs_json};

/// A fresh database of `n` generated runs (ids 1 to n) in a scratch folder.
fn seeded(name: &str, n: u64) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("trainbench-listing-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("studio.sqlite");
    let mut store = Store::open(&path).unwrap();
    for seed in 1..=n {
        let run = FixtureRun {
            seed,
            samples_per_s: 100.0 + seed as f64,
            ..FixtureRun::default()
        };
        write_run(&mut store, &run).unwrap();
    }
    path
}

fn sql(path: &Path, statement: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    assert_eq!(conn.execute(statement, []).unwrap(), 1, "{statement}");
}

/// `runs --json` streamed, and the document made whole as before.
fn both_runs_documents(path: &Path) -> (String, String, Vec<String>) {
    let at = locate(Some(path));
    let (ws, _) = Workspace::open(path).unwrap();
    let (bytes, left_out) = write_runs_json(&ws, &at, Out::to(Vec::new())).unwrap();
    let (whole, listing) = runs_json(&ws, &at).unwrap();
    let said: Vec<String> = listing.left_out.into_iter().map(|d| d.message).collect();
    assert_eq!(left_out, said);
    (
        String::from_utf8(bytes).unwrap(),
        format!("{whole}\n"),
        left_out,
    )
}

#[test]
fn runs_json_streamed_is_the_whole_document_byte_for_byte() {
    let path = seeded("runs", 6);
    sql(&path, "UPDATE runs SET param_count = -7 WHERE id = 2");
    sql(
        &path,
        "UPDATE summaries SET summary_json = '{\"throughput' WHERE run_id = 5",
    );
    let (streamed, whole, left_out) = both_runs_documents(&path);
    assert_eq!(streamed, whole);
    assert_eq!(left_out.len(), 2, "{left_out:?}");
    let v: serde_json::Value = serde_json::from_str(&streamed).unwrap();
    let ids: Vec<i64> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1, 3, 4, 6]);
    assert_eq!(v["left_out"][0]["column"], "param_count");
}

#[test]
fn runs_json_of_an_empty_database_is_the_whole_document() {
    let (streamed, whole, left_out) = both_runs_documents(&seeded("empty", 0));
    assert_eq!(streamed, whole);
    assert!(
        streamed.ends_with("\"left_out\":[],\"runs\":[]}\n"),
        "{streamed}"
    );
    assert!(left_out.is_empty());
}

#[test]
fn query_json_and_csv_streamed_are_the_whole_answers_byte_for_byte() {
    let path = seeded("query", 5);
    for (sql, max_rows) in [
        ("SELECT * FROM q_runs ORDER BY run_id", 1000),
        ("SELECT * FROM q_runs ORDER BY run_id", 3),
        ("SELECT run_id, 'a,b \"c\"' AS t, NULL AS n FROM q_runs", 2),
        ("SELECT run_id FROM q_runs WHERE run_id > 99", 10),
    ] {
        let request = QueryRequest {
            max_rows,
            ..QueryRequest::new(sql)
        };
        let answer = query(&path, &request).unwrap();
        let (json, rows, truncated) =
            stream(&path, &request, Format::Json, Out::to(Vec::new())).unwrap();
        assert_eq!(
            String::from_utf8(json).unwrap(),
            format!("{}\n", to_json(&answer)),
            "{sql}"
        );
        assert_eq!((rows, truncated), (answer.rows.len(), answer.truncated));
        let (csv, _, _) = stream(&path, &request, Format::Csv, Out::to(Vec::new())).unwrap();
        assert_eq!(String::from_utf8(csv).unwrap(), to_csv(&answer), "{sql}");
    }
}

#[test]
fn a_refused_query_writes_nothing() {
    let path = seeded("refused", 1);
    let request = QueryRequest::new("DELETE FROM runs");
    let mut out = Vec::new();
    let e = stream(&path, &request, Format::Json, Out::to(&mut out));
    assert!(matches!(e, Err(crate::error::CliError::BadInput { .. })));
    assert!(out.is_empty());
}

#[test]
fn the_runs_csv_written_a_run_at_a_time_is_the_whole_csv() {
    let path = seeded("csv", 4);
    sql(&path, "UPDATE runs SET param_count = -7 WHERE id = 3");
    let (ws, _) = Workspace::open(&path).unwrap();
    let mut streamed = Vec::new();
    ws.write_runs_csv(&mut streamed).unwrap();
    let whole = ws.runs_csv(&ws.runs().unwrap()).unwrap();
    assert_eq!(streamed, whole);
    assert_eq!(String::from_utf8(streamed).unwrap().lines().count(), 1 + 3);
    // Into a file, as `export csv -o` writes it.
    let file = path.with_file_name("runs.csv");
    let written = ws.export_runs_csv(&file).unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), whole);
    assert_eq!(written.bytes, whole.len() as u64);
    // Never over the database.
    assert!(ws.export_runs_csv(&path).is_err());
}

#[test]
fn session_list_json_streamed_is_the_whole_document_byte_for_byte() {
    let path = seeded("sessions", 4);
    let (mut ws, _) = Workspace::open(&path).unwrap();
    let none = crate::report_cmd::write_sessions_json(&ws, Out::to(Vec::new())).unwrap();
    assert_eq!(String::from_utf8(none).unwrap(), "{\"sessions\":[]}\n");
    let settings = trainbench_core::session::SessionSettings {
        grouping: trainbench_core::compare::Grouping::Runs,
        charts: trainbench_app::reports::parse_charts(&[]).unwrap(),
        hidden_series: Vec::new(),
    };
    ws.save_session("first", &[1, 2], None, &settings).unwrap();
    ws.save_session("second", &[2, 3, 4], Some(3), &settings)
        .unwrap();
    let streamed = crate::report_cmd::write_sessions_json(&ws, Out::to(Vec::new())).unwrap();
    let whole = serde_json::json!({"sessions": ws.sessions().unwrap()});
    assert_eq!(String::from_utf8(streamed).unwrap(), format!("{whole}\n"));
}

//! `trainbench query`'s store side against a real SQLite file of generated
//! runs: the views answer a documented question, every kind of write is
//! refused with the file left byte for byte as it was, and a runaway query
//! is stopped by the time limit.

use std::path::{Path, PathBuf};
use std::time::Duration;

use trainbench_core::spec::{Framework, Precision};
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::{query_read_only, Cell, QueryLimits, Store, StoreError};

const LIMITS: QueryLimits = QueryLimits {
    max_rows: 1000,
    timeout: Duration::from_secs(30),
};

/// A database of six runs: three configurations, two repeats each; the
/// bf16 one is the fastest. Closed, so that its WAL is folded into the file.
fn database(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trainbench-query-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join("runs.sqlite");
    let mut store = Store::open(&path).expect("open");
    for (seed, (precision, batch, speed)) in [
        (Precision::Fp32, 32, 400.0),
        (Precision::AmpBf16, 32, 900.0),
        (Precision::Fp32, 64, 500.0),
    ]
    .into_iter()
    .enumerate()
    {
        for repeat in 0..2u64 {
            let run = FixtureRun {
                framework: Framework::Tch,
                precision,
                batch_size: batch,
                samples_per_s: speed,
                seed: seed as u64 * 10 + repeat,
                ..FixtureRun::default()
            };
            write_run(&mut store, &run).expect("run");
        }
    }
    drop(store);
    path
}

fn refusal(path: &Path, sql: &str) -> String {
    match query_read_only(path, sql, LIMITS) {
        Err(StoreError::Invalid { field, allowed, .. }) => {
            assert_eq!(field, "sql", "{sql}");
            allowed
        }
        other => panic!("{sql}: expected a refusal naming sql, got {other:?}"),
    }
}

#[test]
fn the_views_answer_which_configuration_is_fastest() {
    let path = database("fastest");
    let answer = query_read_only(
        &path,
        "SELECT precision, batch_size, COUNT(*) AS repeats, AVG(throughput_samples_per_s) AS mean_throughput \
         FROM q_runs WHERE status = 'completed' GROUP BY config_key ORDER BY mean_throughput DESC",
        LIMITS,
    )
    .expect("query");
    assert_eq!(
        answer.columns,
        ["precision", "batch_size", "repeats", "mean_throughput"]
    );
    assert_eq!(answer.rows.len(), 3);
    assert_eq!(answer.rows[0][0], Cell::Text("amp-bf16".into()));
    assert_eq!(answer.rows[0][1], Cell::Integer(32));
    assert_eq!(answer.rows[0][2], Cell::Integer(2));
    match answer.rows[0][3] {
        Cell::Real(v) => assert!((800.0..1000.0).contains(&v), "{v}"),
        ref other => panic!("throughput {other:?}"),
    }
    assert!(!answer.truncated);

    // Every view answers, and their rows belong to the runs.
    for view in ["q_windows", "q_evals", "q_telemetry"] {
        let sql = format!("SELECT COUNT(*), COUNT(DISTINCT run_id) FROM {view}");
        let answer = query_read_only(&path, &sql, LIMITS).expect(view);
        assert_eq!(answer.rows[0][1], Cell::Integer(6), "{view}");
    }
    let answer = query_read_only(
        &path,
        "SELECT throughput_ci95_low < throughput_samples_per_s, mfu, peak_memory_bytes FROM q_runs LIMIT 1",
        LIMITS,
    )
    .expect("interval");
    assert_eq!(answer.rows[0][0], Cell::Integer(1));
    // The windows the throughput is the median of are the ones not marked warm-up.
    let steady = query_read_only(
        &path,
        "SELECT r.run_id, r.steady_windows, COUNT(*) FILTER (WHERE w.warmup = 0), \
         COUNT(*) FILTER (WHERE w.warmup = 1) \
         FROM q_runs r JOIN q_windows w USING (run_id) GROUP BY r.run_id",
        LIMITS,
    )
    .expect("steady windows");
    assert_eq!(steady.rows.len(), 6);
    for row in &steady.rows {
        assert_eq!(row[1], row[2], "{row:?}");
        assert_ne!(row[3], Cell::Integer(0), "a warm-up window: {row:?}");
    }
    query_read_only(&path, "SELECT * FROM q_sweeps", LIMITS).expect("sweeps");
    // Discovering a view's columns is reading.
    let columns = query_read_only(
        &path,
        "SELECT name FROM pragma_table_info('q_runs')",
        LIMITS,
    )
    .expect("columns");
    assert!(columns
        .rows
        .contains(&vec![Cell::Text("throughput_samples_per_s".into())]));
}

#[test]
fn every_kind_of_write_is_refused_and_the_file_is_unchanged() {
    let path = database("writes");
    let before = std::fs::read(&path).expect("bytes");
    for sql in [
        "DELETE FROM runs",
        "UPDATE runs SET status = 'failed'",
        "INSERT INTO sweeps (created_unix_ms, command, configurations, repeats) VALUES (1, 'x', 1, 1)",
        "DROP VIEW q_runs",
        "CREATE TABLE t (x)",
        "CREATE TEMP TABLE t (x)",
        "ATTACH DATABASE ':memory:' AS other",
        "PRAGMA user_version = 7",
        "PRAGMA query_only = OFF",
        "PRAGMA journal_mode = DELETE",
        "BEGIN IMMEDIATE",
        "VACUUM",
        "SELECT 1; DELETE FROM runs",
        "WITH x AS (SELECT 1) DELETE FROM runs",
    ] {
        let allowed = refusal(&path, sql);
        assert!(allowed.contains("SELECT"), "{sql}: {allowed}");
    }
    assert!(refusal(&path, "DELETE FROM runs").contains("DELETE from runs"));
    assert!(refusal(&path, "SELECT 1; SELECT 2").contains("more than one statement"));
    assert_eq!(std::fs::read(&path).expect("bytes"), before);
    let runs = query_read_only(&path, "SELECT COUNT(*) FROM q_runs", LIMITS).expect("count");
    assert_eq!(runs.rows, vec![vec![Cell::Integer(6)]]);
}

#[test]
fn a_syntax_error_or_an_empty_query_names_the_field() {
    let path = database("syntax");
    assert!(refusal(&path, "SELEC * FROM q_runs").contains("SQLite says"));
    assert!(refusal(&path, "SELECT nope FROM q_runs").contains("no such column"));
    refusal(&path, "   ");
    match query_read_only(&path.with_file_name("absent.sqlite"), "SELECT 1", LIMITS) {
        Err(StoreError::NotFound { what, .. }) => assert_eq!(what, "database"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_runaway_query_is_stopped_and_rows_are_bounded() {
    let path = database("runaway");
    let limits = QueryLimits {
        max_rows: 5,
        timeout: Duration::from_millis(300),
    };
    let forever =
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n";
    match query_read_only(&path, forever, limits) {
        Err(StoreError::Invalid { field, allowed, .. }) => {
            assert_eq!(field, "sql");
            assert!(allowed.contains("time limit"), "{allowed}");
        }
        other => panic!("{other:?}"),
    }
    let endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n";
    let answer = query_read_only(&path, endless, limits).expect("the first rows");
    assert_eq!(answer.rows.len(), 5);
    assert!(answer.truncated);
}

/// The column names a view's table in docs/query.md lists, in order.
fn documented_columns(doc: &str, view: &str) -> Vec<String> {
    let heading = format!("### `{view}`");
    let section = doc.split(&heading).nth(1).expect("a section per view");
    let section = section.split("\n### ").next().unwrap_or(section);
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| {
            let first = l.split('|').nth(1).unwrap_or("");
            first
                .split(',')
                .map(|c| c.trim().trim_matches('`').to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn docs_query_md_lists_every_column_of_every_view_in_order() {
    let path = database("documented");
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/query.md"))
        .expect("docs/query.md");
    for view in [
        "q_runs",
        "q_windows",
        "q_evals",
        "q_telemetry",
        "q_sweeps",
        "q_gates",
    ] {
        let sql = format!("SELECT name FROM pragma_table_info('{view}') ORDER BY cid");
        let answer = query_read_only(&path, &sql, LIMITS).expect(view);
        let columns: Vec<String> = answer
            .rows
            .iter()
            .map(|r| match &r[0] {
                Cell::Text(t) => t.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            documented_columns(&doc, view),
            columns,
            "docs/query.md, {view}"
        );
    }
}

#[test]
fn an_older_database_is_brought_up_to_date_before_it_is_read() {
    let path = database("older");
    let raw = rusqlite::Connection::open(&path).expect("raw");
    raw.execute_batch(
        "DROP VIEW q_runs; DROP VIEW q_windows; DROP VIEW q_evals; DROP VIEW q_telemetry; \
         DROP VIEW q_sweeps; DROP VIEW q_gates; DROP TABLE gates; \
         ALTER TABLE remote_runs RENAME COLUMN place_job TO slurm_job; \
         DELETE FROM schema_migrations WHERE version >= 16",
    )
    .expect("back to schema 15");
    drop(raw);
    let answer = query_read_only(&path, "SELECT COUNT(*) FROM q_runs", LIMITS).expect("query");
    assert_eq!(answer.rows, vec![vec![Cell::Integer(6)]]);
}

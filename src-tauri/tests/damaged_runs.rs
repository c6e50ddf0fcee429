//! Stored runs whose row was edited by hand or damaged (a negative
//! parameter count, a summary that is not JSON), through the desktop's real
//! IPC on a real SQLite file: the runs table lists every other run and
//! names each run left out with its column, the value and what is allowed,
//! as `trainbench runs` does.

mod common;

use common::app::{open_app_without_worker, scratch};
use serde_json::json;
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

#[test]
fn the_runs_table_names_each_damaged_run_and_lists_the_others() {
    let dir = scratch("damaged-runs");
    let db = dir.join("studio.sqlite");
    {
        let mut store = Store::open(&db).expect("database");
        for seed in 1..=3 {
            write_run(
                &mut store,
                &FixtureRun {
                    seed,
                    ..FixtureRun::default()
                },
            )
            .expect("run stored");
        }
    }
    let conn = rusqlite::Connection::open(&db).expect("database by hand");
    for edit in [
        "UPDATE runs SET param_count = -7 WHERE id = 2",
        "UPDATE summaries SET summary_json = '{\"throughput' WHERE run_id = 3",
    ] {
        assert_eq!(conn.execute(edit, []).expect(edit), 1, "{edit}");
    }
    drop(conn);

    let app = open_app_without_worker(&dir);
    let list = app.ok("list_runs", json!({}));
    let ids: Vec<_> = list["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(ids, [json!(1)], "the run that can be read: {list}");
    let left = list["left_out"].as_array().expect("left_out");
    assert_eq!(left.len(), 2, "{list}");
    assert_eq!(left[0]["run"], 2, "{list}");
    assert_eq!(left[0]["column"], "param_count", "{list}");
    assert_eq!(left[0]["value"], "-7", "{list}");
    let line = left[0]["message"].as_str().expect("message");
    assert!(
        line.starts_with(
            "run 2 left out: param_count = -7 is damaged: expected a whole number ≥ 0"
        ),
        "{line}"
    );
    assert!(
        line.ends_with("(the stored row was edited by hand or the file is damaged)"),
        "{line}"
    );
    assert_eq!(left[1]["run"], 3, "{list}");
    assert_eq!(left[1]["column"], "summary", "{list}");
    assert!(
        left[1]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("run 3 left out: summary = {\"throughput is damaged")),
        "{list}"
    );
}

//! The runs list's "measured on" columns, read out of each run's stored
//! provenance and hello in one query, against a real SQLite file: a damaged
//! document leaves them empty instead of failing the whole list.

use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

#[test]
fn the_list_says_where_each_run_trained_and_survives_a_damaged_document() {
    let dir = std::env::temp_dir().join(format!("trainbench-store-list-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join("runs.sqlite");
    let mut store = Store::open(&path).expect("open");
    let gpu = write_run(&mut store, &FixtureRun::default()).expect("run");
    let damaged = write_run(&mut store, &FixtureRun::default()).expect("run");
    let raw = rusqlite::Connection::open(&path).expect("raw");
    raw.execute(
        "UPDATE runs SET provenance_json = ?2, hello_json = ?3 WHERE id = ?1",
        rusqlite::params![
            gpu,
            r#"{"hostname": "gpu-box", "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}]}"#,
            r#"{"framework_version": "2.11.0"}"#
        ],
    )
    .expect("provenance");
    raw.execute(
        "UPDATE runs SET provenance_json = 'not json {', hello_json = NULL WHERE id = ?1",
        [damaged],
    )
    .expect("damage");
    let rows = store
        .list_runs()
        .expect("the list, damaged document and all");
    let on = |id: i64| {
        rows.iter()
            .find(|r| r.id == id)
            .expect("listed")
            .measured_on
            .clone()
    };
    let g = on(gpu);
    assert_eq!(g.hostname.as_deref(), Some("gpu-box"));
    assert_eq!(g.gpu.as_deref(), Some("NVIDIA H100 80GB HBM3"));
    assert_eq!(g.framework_version.as_deref(), Some("2.11.0"));
    assert_eq!(on(damaged), Default::default());
    let _ = std::fs::remove_dir_all(&dir);
}

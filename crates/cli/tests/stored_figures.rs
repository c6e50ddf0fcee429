//! Stored figures that make no sense, through the real CLI on a real
//! SQLite file: a row edited by hand or damaged (a negative parameter
//! count, a summary that is not JSON) is named with its column and left
//! out of listings; a negative throughput is not projected from; a thread
//! count beyond the run's machine is not projected to.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod common;

use common::{output_json, text, trainbench, Db};
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

/// `n` generated runs (ids 1 to n) in a fresh database.
fn seeded(name: &str, n: u64) -> Db {
    let db = Db::new(name);
    let mut store = Store::open(&db.path()).unwrap();
    for seed in 1..=n {
        write_run(
            &mut store,
            &FixtureRun {
                seed,
                ..FixtureRun::default()
            },
        )
        .unwrap();
    }
    db
}

fn sql(db: &Db, statement: &str) {
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    assert_eq!(conn.execute(statement, []).unwrap(), 1, "{statement}");
}

/// `project 1 ARGS --json`'s answer, which must succeed.
fn projected(db: &Db, args: &[&str]) -> serde_json::Value {
    let (out, p) = output_json(
        trainbench(db.dir())
            .args(["project", "1"])
            .args(args)
            .arg("--json"),
    );
    assert!(out.status.success(), "{}", text(&out));
    p
}

fn fails_naming(db: &Db, args: &[&str], says: &[&str]) {
    let out = trainbench(db.dir()).args(args).output().unwrap();
    assert!(!out.status.success(), "{args:?}: {}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    for s in says {
        assert!(err.contains(s), "{args:?} should say {s:?}: {}", text(&out));
    }
}

#[test]
fn a_damaged_row_is_named_and_the_listing_goes_on_without_it() {
    let db = seeded("damaged-row", 3);
    sql(&db, "UPDATE runs SET param_count = -7 WHERE id = 2");
    sql(
        &db,
        "UPDATE summaries SET summary_json = '{\"throughput' WHERE run_id = 3",
    );
    let (out, v) = output_json(trainbench(db.dir()).args(["runs", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    let ids: Vec<i64> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1], "{v}");
    let left: Vec<_> = v["left_out"].as_array().unwrap().iter().collect();
    assert_eq!(left.len(), 2, "{v}");
    assert_eq!(left[0]["run"], 2);
    assert_eq!(left[0]["column"], "param_count");
    assert!(
        left[0]["message"]
            .as_str()
            .unwrap()
            .contains("param_count = -7"),
        "{v}"
    );
    assert_eq!(left[1]["run"], 3);
    assert_eq!(left[1]["column"], "summary");
    assert!(
        left[1]["message"].as_str().unwrap().contains("damaged"),
        "{v}"
    );
    // The table says it too, after the runs it could read.
    let out = trainbench(db.dir()).arg("runs").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let all = text(&out);
    assert!(all.contains("run 2 left out"), "{all}");
    assert!(all.contains("param_count = -7"), "{all}");
    assert!(all.contains("run 3 left out"), "{all}");
    // A command that needs the run names it and its column.
    fails_naming(&db, &["compare", "1", "2"], &["run 2", "param_count = -7"]);
    fails_naming(
        &db,
        &["project", "2", "--gpu", "H100"],
        &["run 2", "param_count = -7"],
    );
    fails_naming(&db, &["show", "3"], &["run 3", "summary", "damaged"]);
}

#[test]
fn a_negative_throughput_is_not_projected_from() {
    let db = seeded("negative-rate", 2);
    sql(
        &db,
        "UPDATE summaries SET summary_json = json_set(summary_json, '$.throughput_samples_per_s', -5.0) WHERE run_id = 2",
    );
    let p = projected(&db, &["--gpu", "H100"]);
    assert!(p["samples_per_s"]["low"].as_f64().unwrap() > 0.0, "{p}");
    let out = trainbench(db.dir())
        .args(["project", "2", "--gpu", "H100"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("run = 2 is not allowed"), "{err}");
    assert!(err.contains("throughput_samples_per_s = -5"), "{err}");
}

/// A step breakdown in run `id`'s summary, so it can be projected to
/// other thread counts of its CPU (the generated runs have none).
fn with_breakdown(db: &Db, id: i64) {
    let part = |name: &str| {
        format!(
            r#"{{"part":"{name}","mean_s":0.04,"ci95":null,"per_sample_s":0.00125,"share":0.5}}"#
        )
    };
    let breakdown = format!(
        r#"{{"steps":5,"whole_steps":5,"parts":[{},{}],"parts_sum_s":0.08,"whole_step_s":0.08,"whole_step_ci95":null,"split_difference":0.0,"tolerance":0.1,"agrees":true,"steady_step_s":0.08,"global_batch":32,"fused":null,"communication":null,"communication_share":null,"method":"test"}}"#,
        part("forward"),
        part("backward")
    );
    sql(
        db,
        &format!("UPDATE summaries SET summary_json = json_set(summary_json, '$.breakdown', json('{breakdown}')) WHERE run_id = {id}"),
    );
}

#[test]
fn a_thread_count_beyond_the_runs_machine_is_not_projected_to() {
    // The generated runs trained on a machine of 2 cores.
    let db = seeded("threads-bound", 1);
    with_breakdown(&db, 1);
    let p = projected(&db, &["--threads", "2"]);
    assert!(p["samples_per_s"]["high"].as_f64().unwrap() > 0.0, "{p}");
    let out = trainbench(db.dir())
        .args(["project", "1", "--threads", "1000000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("threads = 1000000 is not allowed"), "{err}");
    assert!(err.contains("2 cores"), "{err}");
}

/// A run of a model outside the catalogue (here a timm name) projected to a
/// GPU by MFU: no published result is of its family, so the generic range,
/// not the MFU of a published row whose own model is outside the
/// catalogue too (a Llama 2 7B's, which once projected a ResNet-18).
#[test]
fn a_library_model_is_projected_with_the_generic_mfu_range() {
    let db = seeded("library-projected", 1);
    sql(&db, "UPDATE runs SET model = 'timm:resnet18' WHERE id = 1");
    let p = projected(&db, &["--gpu", "H100 SXM"]);
    let method = p["method"].as_str().unwrap();
    assert!(
        method.contains("× 10–45 % MFU (no published result of this family"),
        "{method}"
    );
    let b = &p["samples_per_s"];
    assert!(
        b["high"].as_f64().unwrap() > 4.0 * b["low"].as_f64().unwrap(),
        "{p}"
    );
}

/// A device peak is read in the peak table's unit: 70 GiB on a GPU fits an
/// H100's 80 (its 90 % is 72 GiB), though it is 75.2 decimal GB.
#[test]
fn a_device_peak_is_held_against_the_boards_memory_in_its_unit() {
    let db = seeded("memory-fit", 1);
    sql(
        &db,
        "UPDATE summaries SET summary_json = json_set(summary_json, '$.peak_memory_bytes', 75161927680, '$.peak_memory_device', 'cuda:0') WHERE run_id = 1",
    );
    let p = projected(&db, &["--gpu", "H100 SXM"]);
    let memory = p["memory"].as_str().unwrap();
    assert!(
        memory.starts_with("fits: the framework's peak of 70.0 GiB"),
        "{memory}"
    );
}

/// A measured epoch's time includes its warm-up, so the epoch projected to
/// other hardware is its own samples at the projected throughput, not its
/// time × the steady rate (which counts more samples than it has).
#[test]
fn a_measured_epoch_is_projected_by_its_samples() {
    let db = seeded("epoch-projected", 1);
    sql(
        &db,
        "UPDATE summaries SET summary_json = json_set(summary_json, '$.throughput_samples_per_s', 200.0, '$.epoch_time_s', 10.0, '$.epoch_samples', 1000) WHERE run_id = 1",
    );
    let p = projected(&db, &["--gpu", "H100 SXM"]);
    let slowest = p["epoch_s"]["high"].as_f64().unwrap();
    let rate = p["samples_per_s"]["low"].as_f64().unwrap();
    assert!((slowest * rate - 1000.0).abs() < 1e-6 * 1000.0, "{p}");
}

//! What docs/cli.md and the README promise, held against the binary on
//! generated runs (no training): `delete` without `--yes` only says what it
//! would do, imported runs are marked, `show` reads as text, and the price
//! table says what changed.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod common;

use common::{output_json, text, trainbench, Db};
use serde_json::Value;
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

/// `n` generated runs (ids 1 …).
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

/// `trainbench ARGS` on `db` (no worker needed: nothing trains).
fn tb(db: &Db, args: &[&str]) -> (std::process::Output, Value) {
    output_json(trainbench(db.dir()).args(args))
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[test]
fn delete_without_yes_names_the_runs_deletes_nothing_and_exits_0() {
    let db = seeded("delete-ask", 2);
    let (out, _) = tb(&db, &["delete", "1", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    for expected in [
        "Would delete 2 run(s)",
        "run 1:",
        "run 2:",
        "trainbench delete 1 2 --yes",
    ] {
        assert!(said.contains(expected), "{expected:?} in:\n{said}");
    }
    let (out, v) = tb(&db, &["delete", "2", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(v["deleted"], 0, "{v}");
    assert_eq!(v["would_delete"][0]["id"], 2, "{v}");
    let (_, v) = tb(&db, &["runs", "--json"]);
    assert_eq!(
        v["runs"].as_array().unwrap().len(),
        2,
        "nothing deleted: {v}"
    );
    let (out, _) = tb(&db, &["delete", "2", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (_, v) = tb(&db, &["runs", "--json"]);
    assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{v}");
}

/// Marks run `id` as imported from host `lab-box` (its run 7 there).
fn mark_imported(db: &Db, id: i64) {
    let origin = r#"{"machine_id":"m-1","hostname":"lab-box","source_run_id":7,"imported_unix_ms":1764000000000,"file":"lab.trainbench-session.json"}"#;
    rusqlite::Connection::open(db.path())
        .unwrap()
        .execute(
            "UPDATE runs SET origin_json = ?1 WHERE id = ?2",
            rusqlite::params![origin, id],
        )
        .unwrap();
}

#[test]
fn imported_runs_are_marked_in_show_and_runs() {
    let db = seeded("imported", 2);
    mark_imported(&db, 1);
    let (out, _) = tb(&db, &["show", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    assert!(
        said.contains("imported:") && said.contains("lab-box") && said.contains("run 7 there"),
        "{said}"
    );
    assert!(said.contains("lab.trainbench-session.json"), "{said}");
    let (out, _) = tb(&db, &["show", "2"]);
    assert!(!stdout(&out).contains("imported"), "{}", stdout(&out));
    let (out, _) = tb(&db, &["runs"]);
    let said = stdout(&out);
    let line = |id: &str| {
        said.lines()
            .find(|l| l.trim_start().starts_with(id))
            .unwrap_or_else(|| panic!("run {id} in:\n{said}"))
            .to_owned()
    };
    assert!(line("1 ").contains("imported from lab-box"), "{said}");
    assert!(!line("2 ").contains("imported"), "{said}");
}

#[test]
fn show_prints_provenance_as_lines_not_json() {
    let db = seeded("provenance", 1);
    let (out, _) = tb(&db, &["show", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    let at = said.find("provenance:").expect("a provenance section");
    let section: Vec<&str> = said[at..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert!(
        section
            .iter()
            .any(|l| l.contains("hostname:") && l.contains("fixture-host")),
        "{said}"
    );
    assert!(
        section
            .iter()
            .any(|l| l.contains("cpu cores:") && l.contains('2')),
        "{said}"
    );
    assert!(!said[at..].lines().next().unwrap().contains('{'), "{said}");
    assert!(section.iter().all(|l| !l.contains("{\"")), "{said}");
}

#[test]
fn describe_says_which_input_size_it_counted() {
    let db = Db::new("describe");
    let (out, _) = tb(
        &db,
        &["describe", "--model", "resnet50", "--image-size", "64"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    assert!(said.contains("3×64×64 images (--image-size 64)"), "{said}");
    let (out, _) = tb(&db, &["describe", "--model", "resnet50"]);
    let said = stdout(&out);
    assert!(
        said.contains("3×224×224 images (the model's default)"),
        "{said}"
    );
    let (_, v) = tb(
        &db,
        &[
            "describe",
            "--model",
            "bert_base_uncased",
            "--seq-len",
            "64",
            "--json",
        ],
    );
    assert!(
        v["input"]
            .as_str()
            .unwrap()
            .contains("sequences of 64 tokens (--seq-len 64)"),
        "{v}"
    );
}

#[test]
fn a_scaling_chart_without_a_device_sweep_is_refused_and_nothing_written() {
    let db = seeded("scaling-chart", 2);
    let svg = db.dir().join("scaling.svg");
    let (out, v) = tb(
        &db,
        &[
            "export",
            "chart",
            "scaling",
            "1",
            "2",
            "-o",
            svg.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "kind", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("device-count sweep"), "{message}");
    assert!(!svg.exists(), "no empty chart is written");
    let (out, _) = tb(
        &db,
        &[
            "export",
            "chart",
            "throughput",
            "1",
            "2",
            "-o",
            svg.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn show_says_the_best_accuracy_of_a_missed_target_and_small_costs_in_full() {
    let db = Db::new("missed-target");
    let (out, _) = tb(
        &db,
        &[
            "prices",
            "add",
            "Tiny box",
            "--devices",
            "1",
            "--device",
            "CPU",
            "--usd-per-hour",
            "0.0045",
            "--as-of",
            "2026-11",
            "--source",
            "a test",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut store = Store::open(&db.path()).unwrap();
    write_run(
        &mut store,
        &FixtureRun {
            seed: 1,
            // The generated evaluations reach 99 % at best.
            target_accuracy: Some(0.995),
            price_offering: Some("Tiny box".into()),
            ..FixtureRun::default()
        },
    )
    .unwrap();
    drop(store);
    let (out, _) = tb(&db, &["show", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    assert!(said.contains("not reached; best 99.0 %"), "{said}");
    // 3,240 s at $0.0045 an hour: $0.00405, not "$0.00".
    let line = said
        .lines()
        .find(|l| l.starts_with("cost per epoch:"))
        .unwrap();
    assert!(line.contains("$0.0041 projected"), "{line}");
    let (out, _) = tb(&db, &["runs"]);
    let said = stdout(&out);
    assert!(
        said.contains("not reached; best 99.0 %") && said.contains("$0.0041"),
        "{said}"
    );
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn the_price_table_says_what_changed_and_marks_new_offerings_as_added() {
    let db = Db::new("prices-said");
    let lab = "My lab 4x L40S";
    let (out, _) = tb(
        &db,
        &[
            "prices",
            "add",
            lab,
            "--devices",
            "4",
            "--device",
            "L40S",
            "--usd-per-hour",
            "6",
            "--as-of",
            "2026-11",
            "--source",
            "our invoice",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = stdout(&out);
    assert!(
        said.contains(&format!(
            "added {lab}: devices 4, device L40S, usd_per_hour 6, usd_per_device_hour 1.5"
        )),
        "{said}"
    );
    let row = said.lines().find(|l| l.starts_with(lab)).unwrap();
    assert!(row.ends_with("(added)"), "{row}");
    assert!(
        stderr(&out).is_empty() || !stderr(&out).contains("warning"),
        "{}",
        stderr(&out)
    );

    let (out, v) = tb(
        &db,
        &[
            "prices",
            "edit",
            lab,
            "--usd-per-device-hour",
            "2",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        v["changed"]["fields"][0]["field"], "usd_per_device_hour",
        "{v}"
    );
    let warned = stderr(&out);
    for part in [
        "warning",
        "usd_per_device_hour = 2",
        "usd_per_hour ÷ devices = 6 ÷ 4 = 1.5",
    ] {
        assert!(warned.contains(part), "{part:?} in {warned}");
    }
    let (out, _) = tb(&db, &["prices", "edit", lab, "--usd-per-hour", "8"]);
    let said = stdout(&out);
    // 8 ÷ 4 is the 2 already stored: only the hourly price changed.
    assert!(
        said.contains(&format!("edited {lab}: usd_per_hour 6 → 8\n")),
        "{said}"
    );
    assert!(
        !stderr(&out).contains("warning"),
        "re-derived: {}",
        stderr(&out)
    );

    let (out, _) = tb(
        &db,
        &[
            "prices",
            "edit",
            "Lambda Cloud 1x H100 SXM",
            "--source",
            "checked",
        ],
    );
    let said = stdout(&out);
    let row = said
        .lines()
        .find(|l| l.starts_with("Lambda Cloud 1x H100 SXM"))
        .unwrap();
    assert!(row.ends_with("(edited)"), "{row}");
    let (out, _) = tb(&db, &["prices", "delete", lab]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stdout(&out).contains(&format!("deleted {lab}")),
        "{}",
        stdout(&out)
    );
}

#[test]
fn gpu_session_plan_says_the_budget_and_what_fits_and_refuses_an_unknown_gpu() {
    let db = Db::new("plan-budget");
    let (out, v) = tb(
        &db,
        &[
            "gpu-session",
            "plan",
            "--rehearse",
            "--budget",
            "100",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(v["budget_s"], 100.0, "{v}");
    let items = v["items"].as_array().unwrap();
    let fit: Vec<bool> = items
        .iter()
        .map(|i| i["fits_in_budget"].as_bool().unwrap())
        .collect();
    // The items that fit, worst case, take at most the budget less what is kept for the outputs.
    let used: f64 = items
        .iter()
        .filter(|i| i["fits_in_budget"] == true)
        .map(|i| i["allowance_s"].as_f64().unwrap())
        .sum();
    assert!(used <= 100.0 - v["reserve_s"].as_f64().unwrap(), "{v}");
    assert!(
        fit.contains(&false),
        "100 s does not hold the whole plan: {v}"
    );
    let (out, _) = tb(&db, &["gpu-session", "plan", "--rehearse"]);
    let said = stdout(&out);
    assert!(said.contains("budget: 540 s"), "{said}");
    assert!(said.contains("items fit"), "{said}");
    let (out, v) = tb(&db, &["gpu-session", "plan", "--gpu", "Z99", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "gpu", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("gpu = Z99") && message.contains("H100 SXM"),
        "{message}"
    );
    let (out, _) = tb(
        &db,
        &["gpu-session", "plan", "--gpu", "NVIDIA H100 80GB HBM3"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

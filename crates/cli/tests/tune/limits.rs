//! A search's limits: a candidate over the memory limit and combinations a
//! framework cannot do recorded with their reason while the search goes on;
//! the budget read before each run; Ctrl-C keeps what ran.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::common::{output_json, text, trainbench, Scratch};
use super::{runs_of_sweep, stored_trace};

#[test]
fn over_the_memory_limit_or_refused_a_candidate_is_recorded_and_the_search_goes_on() {
    let dir = Scratch::new("tune-failures");
    // resnet_mini in the tch worker peaks near 140 MiB at batch 2 and at
    // 350–385 MiB at batch 128 (see the batch search's test): 300 MiB stops
    // 128 with room on both sides (235 MiB against batch 64, which peaks at
    // 230–263 MiB, could let it through).
    let (out, v) = output_json(trainbench(&dir.0).args([
        "tune",
        "--model",
        "resnet_mini",
        "--framework",
        "tch",
        "--compile",
        "off,xla",
        "--precision",
        "fp32",
        "--threads",
        "1",
        "--batch-size",
        "2,128",
        "--steps",
        "8",
        "--window-steps",
        "2",
        "--memory-limit",
        "300MiB",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let candidates = v["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 4, "{v}");
    let by_fate =
        |fate: &str| -> Vec<&Value> { candidates.iter().filter(|c| c["fate"] == fate).collect() };
    let failed = by_fate("failed");
    assert_eq!(failed.len(), 1, "{v}");
    assert_eq!(failed[0]["settings"]["batch_size"], 128);
    let why = failed[0]["why"].as_str().unwrap();
    assert!(
        why.starts_with("failed at round 0:") && why.contains("memory"),
        "{why}"
    );
    let refused = by_fate("unsupported");
    assert_eq!(refused.len(), 2, "{v}");
    for r in refused {
        assert!(
            r["configuration"].as_str().unwrap().contains("compile=xla"),
            "{r}"
        );
        assert!(r["why"].as_str().unwrap().contains("xla"), "{r}");
        assert_eq!(r["round_reached"], Value::Null);
    }
    assert_eq!(v["winner"]["settings"]["batch_size"], 2, "{v}");
    assert!(
        v["verdict"]
            .as_str()
            .unwrap()
            .contains("the only candidate that ran"),
        "{v}"
    );
    // Bad input is refused before anything runs, naming the field.
    for (args, field) in [
        (vec!["--objective", "speed"], "objective"),
        (vec!["--objective", "energy"], "objective"),
        (vec!["--objective", "time-to-accuracy"], "objective"),
        (vec!["--objective", "cost"], "objective"),
        (vec!["--budget", "soon"], "budget"),
        (vec!["--precision", "fp64"], "precision"),
        (vec!["--epochs", "1"], "epochs"),
        (vec!["--repeats", "1"], "repeats"),
        (vec!["--batch-size", "max,32"], "batch_size"),
        (vec!["--batch-size", "max"], "memory_limit"),
    ] {
        let (out, e) = output_json(
            trainbench(&dir.0)
                .args([
                    "tune",
                    "--model",
                    "resnet_mini",
                    "--framework",
                    "tch",
                    "--json",
                ])
                .args(&args),
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert_eq!(e["error"]["field"], field, "{args:?}: {e}");
    }
    let (out, e) = output_json(trainbench(&dir.0).args(["tune", "--json"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(e["error"]["field"], "model", "{e}");
}

#[test]
fn the_budget_is_read_before_each_run_and_ctrl_c_keeps_what_ran() {
    let dir = Scratch::new("tune-stops");
    let tch = [
        "--model",
        "resnet_mini",
        "--framework",
        "tch",
        "--precision",
        "fp32",
    ];
    // A three-second budget: no run starts after it. (The budget counts
    // from the search's start, before its sweep and trace are stored, so a
    // one-second budget could end on a busy machine before any run.)
    let (out, v) = output_json(
        trainbench(&dir.0)
            .args([
                "tune",
                "--budget",
                "3s",
                "--threads",
                "1",
                "--batch-size",
                "2,4",
            ])
            .args(tch)
            .args(["--steps", "8", "--window-steps", "2", "--json"]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let trace = stored_trace(&dir, &v["sweep_id"]);
    let mut started = Vec::new();
    for c in trace["candidates"].as_array().unwrap() {
        for r in c["rounds"].as_array().unwrap() {
            for run in r["runs"].as_array().unwrap() {
                started.push(run["started_s"].as_f64().unwrap());
            }
        }
    }
    assert!(!started.is_empty());
    assert!(started.iter().all(|&s| s < 3.0), "{started:?}");
    assert_eq!(started.len(), runs_of_sweep(&dir, &v["sweep_id"]).len());
    assert!(
        ["budget", "finished"].contains(&v["ended"].as_str().unwrap()),
        "{v}"
    );

    // Ctrl-C once the first probe trains (a run far too long to end first).
    let mut child = trainbench(&dir.0)
        .args(["tune", "--threads", "1", "--batch-size", "2,4"])
        .args(tch)
        .args(["--steps", "1000000", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    for line in lines.by_ref() {
        if line.unwrap().contains("first step after") {
            break;
        }
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(v["ended"], "cancelled", "{v} {rest:?}");
    assert_eq!(out.status.code(), Some(1), "nothing measured: {rest:?}");
    let trace = stored_trace(&dir, &v["sweep_id"]);
    assert_eq!(trace["ended"], "cancelled");
    let runs = runs_of_sweep(&dir, &v["sweep_id"]);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].1, "cancelled");
}

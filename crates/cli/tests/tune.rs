//! `trainbench tune` through the real CLI, real workers that train tiny
//! models on the CPU, and a real SQLite file: a planted answer found and
//! confirmed against the runner-up; a candidate over the memory limit and
//! combinations a framework cannot do recorded with their reason while the
//! search goes on; the budget read before each run; Ctrl-C keeps what ran.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use serde_json::Value;

#[path = "common/mod.rs"]
mod common;
#[path = "tune/limits.rs"]
mod limits;

use common::{output_json, pdf_text, text, trainbench, Scratch};

/// A model whose every forward pass sleeps 50 ms whatever the batch, so
/// samples/s grow with the batch by construction: batch 16 is about 4× batch
/// 4, far beyond any noise of this machine (the sleep dwarfs the tiny
/// model's own work, which a busy machine slows).
const PLANTED: &str = r##"
import time
from torch import nn


class Sleepy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 5))

    def forward(self, x):
        time.sleep(0.05)
        return self.net(x)


def sleepy():
    return Sleepy()
"##;

/// The search's trace as stored beside its sweep.
fn stored_trace(dir: &Scratch, sweep: &Value) -> Value {
    let db = rusqlite::Connection::open(dir.0.join("studio.sqlite")).unwrap();
    let json: String = db
        .query_row(
            "SELECT outcome_json FROM tunes WHERE sweep_id = ?1",
            [sweep.as_i64().unwrap()],
            |r| r.get(0),
        )
        .unwrap();
    serde_json::from_str(&json).unwrap()
}

fn runs_of_sweep(dir: &Scratch, sweep: &Value) -> Vec<(i64, String)> {
    let db = rusqlite::Connection::open(dir.0.join("studio.sqlite")).unwrap();
    let mut q = db
        .prepare("SELECT id, status FROM runs WHERE sweep_id = ?1 ORDER BY id")
        .unwrap();
    q.query_map([sweep.as_i64().unwrap()], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn the_planted_fastest_batch_wins_and_is_confirmed_against_the_runner_up() {
    let dir = Scratch::new("tune-planted");
    std::fs::write(dir.0.join("planted.py"), PLANTED).unwrap();
    let (out, v) = output_json(
        trainbench(&dir.0)
            .current_dir(&dir.0)
            .args([
                "tune",
                "--model",
                "planted.py:sleepy",
                "--framework",
                "pytorch",
            ])
            .args(["--input-shape", "3x8x8", "--num-classes", "5"])
            .args(["--compile", "off", "--precision", "fp32", "--threads", "1"])
            .args([
                "--batch-size",
                "4,16",
                "--steps",
                "16",
                "--window-steps",
                "2",
            ])
            .args(["--repeats", "2", "--json", "--save-config", "winner.toml"]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(v["ended"], "finished", "{v}");
    assert_eq!(v["winner"]["settings"]["batch_size"], 16, "{v}");
    assert_eq!(v["winner"]["fate"], "winner");
    assert_eq!(v["runner_up"]["settings"]["batch_size"], 4, "{v}");
    assert_eq!(v["confirmed"], true);
    assert_eq!(v["tie"], false);
    // 16 ÷ 4 by construction (a little less: the step's own work).
    let ratio = v["ratio"].as_f64().unwrap();
    assert!((2.0..4.5).contains(&ratio), "{ratio}");
    assert!(v["ratio_ci95"]["low"].as_f64().unwrap() > 1.0, "{v}");
    assert!(v["verdict"].as_str().unwrap().contains(" wins: "), "{v}");
    // Batch 4 was settled worse at the probe (its interval wholly below),
    // then brought back as the runner-up for the confirmation.
    let rounds = v["runner_up"]["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2, "{v}");
    assert_eq!(rounds[0]["kind"], "probe");
    assert_eq!(rounds[1]["kind"], "confirm");
    assert_eq!(rounds[1]["runs"].as_array().unwrap().len(), 2);
    assert_eq!(rounds[1]["length_factor"], 2);
    // Why the runner-up lost: the step breakdowns of their last runs.
    let why = &v["why_runner_up_lost"]["explanation"];
    assert!(why["gap_s"].as_f64().unwrap() > 0.0, "{v}");
    // The frontier: the winner, fastest, leads it with the same figure as
    // its confirmation (the geometric mean of the same runs); each point
    // has its peak memory; no price, so no cost frontier.
    let memory = v["frontier"]["memory"].as_array().unwrap();
    assert_eq!(memory[0]["label"], v["winner"]["configuration"], "{v}");
    let fastest = memory[0]["samples_per_s"].as_f64().unwrap();
    let confirmed = v["winner"]["value"].as_f64().unwrap();
    assert!((fastest - confirmed).abs() < 1e-6 * confirmed, "{v}");
    for p in memory {
        assert!(p["peak_memory_mib"].as_f64().unwrap() > 0.0, "{p}");
    }
    assert_eq!(v["frontier"]["cost"], serde_json::json!([]), "{v}");
    // The winner's outlook: its run, and every GPU of the peak table as a
    // projected band (nothing there was measured).
    let outlook = &v["outlook"];
    assert!(outlook["run_id"].as_i64().is_some(), "{v}");
    let projected = outlook["projected"].as_array().unwrap();
    assert_eq!(
        projected.len() + outlook["not_projected"].as_array().unwrap().len(),
        11,
        "{outlook}"
    );
    assert!(projected.iter().any(|p| p["to"] == "H100 SXM"), "{outlook}");
    for p in projected {
        assert_eq!(p["label"], "projected", "{p}");
        assert!(
            p["samples_per_s"]["low"].as_f64().unwrap()
                <= p["samples_per_s"]["high"].as_f64().unwrap(),
            "{p}"
        );
    }
    // The command that reproduces the winner.
    let command = v["winner"]["command"].as_str().unwrap();
    assert!(command.starts_with("trainbench run --model "), "{command}");
    assert!(command.contains("--batch-size 16"), "{command}");
    the_saved_settings_train_again(&dir, &v);
    // Stored: the runs as one sweep, the trace beside it, and `compare`
    // works on them.
    let runs = runs_of_sweep(&dir, &v["sweep_id"]);
    let ids: Vec<i64> = v["run_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    assert_eq!(runs.iter().map(|r| r.0).collect::<Vec<_>>(), ids);
    assert!(runs.iter().all(|r| r.1 == "completed"), "{runs:?}");
    // 2 probes, then the winner and the runner-up twice each.
    assert_eq!(runs.len(), 6, "{runs:?}");
    let trace = stored_trace(&dir, &v["sweep_id"]);
    assert_eq!(trace["ended"], "finished");
    let w = trace["winner"].as_u64().unwrap() as usize;
    assert_eq!(
        trace["candidates"][w]["label"],
        v["winner"]["configuration"]
    );
    let words: Vec<String> = ids.iter().map(ToString::to_string).collect();
    let (out, c) = output_json(
        trainbench(&dir.0)
            .args(["compare", "--by-config", "--json"])
            .args(&words),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let entries = c["comparison"]["entries"].as_array().unwrap();
    // By configuration: the probes (16 steps) apart from the confirmation
    // runs (32 steps), whose length differs.
    assert_eq!(entries.len(), 4, "{c}");
}

/// The winner's settings as a file, which `run --config` trains again (its
/// flags shorten it here).
fn the_saved_settings_train_again(dir: &Scratch, v: &Value) {
    let saved = v["config_file"].as_str().unwrap();
    let toml = std::fs::read_to_string(dir.0.join(saved)).unwrap();
    assert!(toml.contains("batch_size = 16"), "{toml}");
    let (out, again) = output_json(
        trainbench(&dir.0)
            .current_dir(&dir.0)
            .args(["run", "--config", "winner.toml", "--steps", "4"])
            .args(["--repeats", "1", "--json"]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(again["runs"][0]["status"], "completed", "{again}");
    assert_eq!(again["runs"][0]["batch_size"], 16, "{again}");
}

/// Device counts as an axis: data parallel over two CPU processes (DDP with
/// gloo) doubles the planted model's samples per step at the same step
/// time, so two devices win; the command that reproduces the winner says so.
#[test]
fn device_counts_are_an_axis_and_the_planted_two_win() {
    let dir = Scratch::new("tune-devices");
    // A step three times the planted 50 ms: two processes' all-reduce over
    // gloo, beside another test on two cores, may cost tens of milliseconds
    // a step, and the ratio of 2 × 150 / (150 + that) stays over 1.3 for
    // up to 80 ms of it (with 50 ms steps, up to 27 ms).
    let planted = PLANTED.replace("time.sleep(0.05)", "time.sleep(0.15)");
    std::fs::write(dir.0.join("planted.py"), planted).unwrap();
    let (out, v) = output_json(
        trainbench(&dir.0)
            .current_dir(&dir.0)
            .args([
                "tune",
                "--model",
                "planted.py:sleepy",
                "--framework",
                "pytorch",
            ])
            .args(["--input-shape", "3x8x8", "--num-classes", "5"])
            .args(["--compile", "off", "--precision", "fp32", "--threads", "1"])
            .args(["--batch-size", "4", "--devices", "1,2"])
            .args([
                "--steps",
                "8",
                "--window-steps",
                "2",
                "--repeats",
                "2",
                "--json",
            ]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let labels: Vec<&str> = v["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["configuration"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 2, "{v}");
    assert!(labels.iter().any(|l| l.contains(" ×2 ")), "{labels:?}");
    assert!(
        v["winner"]["configuration"]
            .as_str()
            .unwrap()
            .contains(" ×2 "),
        "{v}"
    );
    let command = v["winner"]["command"].as_str().unwrap();
    assert!(command.contains("--devices 2"), "{command}");
    assert!(v["ratio"].as_f64().unwrap() > 1.3, "{v}");
}

/// `--batch-size max`: the largest batch that fits is searched first (its
/// probes stored in the search's sweep), then it and its halves race.
#[test]
fn the_largest_batch_that_fits_and_its_halves_make_the_batch_axis() {
    let dir = Scratch::new("tune-max");
    let (out, v) = output_json(
        trainbench(&dir.0)
            .args(["tune", "--model", "resnet_mini", "--framework", "tch"])
            .args(["--precision", "fp32", "--threads", "1"])
            .args(["--batch-size", "max", "--batch-cap", "8"])
            .args([
                "--memory-limit",
                "4G",
                "--steps",
                "8",
                "--window-steps",
                "2",
            ])
            .args(["--repeats", "2", "--json", "--pdf"])
            .arg(dir.0.join("search.pdf")),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The report: the search's verdict and every candidate's fate, then its
    // frontier when it has two points or more.
    let said = pdf_text(&dir.0.join("search.pdf"));
    assert!(
        said.contains("Search: resnet_mini for throughput"),
        "{said}"
    );
    assert!(said.contains("the winner"), "{said}");
    if v["frontier"]["memory"].as_array().unwrap().len() >= 2 {
        assert!(said.contains("throughput against peak memory"), "{said}");
    }
    let searches = v["batch_searches"].as_array().unwrap();
    assert_eq!(searches.len(), 1, "{v}");
    assert_eq!(searches[0]["largest"], 8, "the cap fits: {v}");
    assert!(
        searches[0]["group"].as_str().unwrap().contains(" bmax "),
        "{v}"
    );
    let mut batches: Vec<i64> = v["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["settings"]["batch_size"].as_i64().unwrap())
        .collect();
    batches.sort_unstable();
    assert_eq!(batches, [2, 4, 8], "{v}");
    assert!(v["winner"]["settings"]["batch_size"].is_i64(), "{v}");
    // The probes (1, 2, 4, 8) are stored in the search's sweep; none is a
    // run of it.
    let db = rusqlite::Connection::open(dir.0.join("studio.sqlite")).unwrap();
    let probes: i64 = db
        .query_row(
            "SELECT count(*) FROM batch_probes WHERE sweep_id = ?1",
            [v["sweep_id"].as_i64().unwrap()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(probes, 4, "{v}");
    let ids: Vec<i64> = v["run_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    assert_eq!(runs_of_sweep(&dir, &v["sweep_id"]).len(), ids.len());
    carried_to_another_database(&dir, &ids);
}

/// Saved as a session and carried to another database, the search goes
/// with its runs: there they form a sweep with the trace beside it, and
/// the session's report has the search's section.
fn carried_to_another_database(dir: &Scratch, ids: &[i64]) {
    let words: Vec<String> = ids.iter().map(ToString::to_string).collect();
    let out = trainbench(&dir.0)
        .args(["session", "save", "the search"])
        .args(&words)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let file = dir.0.join("search.trainbench-session.json");
    let out = trainbench(&dir.0)
        .args(["export", "session", "the search", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let carried: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(carried["version"], 3, "a search needs version 3");
    assert_eq!(carried["searches"].as_array().unwrap().len(), 1);
    let other = Scratch::new("tune-carried");
    let (out, imported) = output_json(trainbench(&other.0).arg("import").arg(&file).arg("--json"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(imported["runs_imported"], ids.len(), "{imported}");
    let pdf = other.0.join("carried.pdf");
    let out = trainbench(&other.0)
        .args(["export", "pdf", "--session", "the search", "-o"])
        .arg(&pdf)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let said = pdf_text(&pdf);
    assert!(
        said.contains("Search: resnet_mini for throughput"),
        "{said}"
    );
    assert!(said.contains("the winner"), "{said}");
}

/// Time to accuracy: every run trains to the target (its length the
/// same cap in every round: rounds add repeats, not steps), the figure is
/// the time it took, lower wins, and the command that reproduces the
/// winner keeps the target and its evaluations.
#[test]
fn time_to_accuracy_races_runs_that_each_train_to_the_target() {
    let dir = Scratch::new("tune-tta");
    let (out, v) = output_json(
        trainbench(&dir.0)
            .args(["tune", "--model", "resnet_mini", "--framework", "tch"])
            .args(["--precision", "fp32", "--threads", "1"])
            .args(["--batch-size", "16,32", "--data", "mnist"])
            .args(["--objective", "time-to-accuracy"])
            .args(["--target-accuracy", "0.3", "--eval-every", "5"])
            .args(["--steps", "200", "--window-steps", "2"])
            .args(["--repeats", "2", "--json"]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(v["objective"], "time-to-accuracy", "{v}");
    assert_eq!(v["unit"], "s", "{v}");
    assert_eq!(v["ended"], "finished", "{v}");
    let command = v["winner"]["command"].as_str().unwrap();
    for part in ["--target-accuracy 0.3", "--eval-every 5", "--steps 200"] {
        assert!(command.contains(part), "{part}: {command}");
    }
    // Every run reached the target, within the same cap of 200 steps.
    let db = rusqlite::Connection::open(dir.0.join("studio.sqlite")).unwrap();
    let mut q = db
        .prepare(
            "SELECT r.spec_json, s.summary_json FROM runs r
             JOIN summaries s ON s.run_id = r.id WHERE r.sweep_id = ?1",
        )
        .unwrap();
    let rows: Vec<(String, String)> = q
        .query_map([v["sweep_id"].as_i64().unwrap()], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 6, "2 probes, then 2 runs each: {v}");
    for (spec, summary) in rows {
        let spec: Value = serde_json::from_str(&spec).unwrap();
        assert_eq!(spec["steps"], 200, "{spec}");
        let summary: Value = serde_json::from_str(&summary).unwrap();
        assert!(
            summary["time_to_accuracy_s"].as_f64().unwrap() > 0.0,
            "{summary}"
        );
    }
    // Lower is better: the winner's time is the runner-up's times the ratio.
    let (w, r) = (
        v["winner"]["value"].as_f64().unwrap(),
        v["runner_up"]["value"].as_f64().unwrap(),
    );
    let ratio = v["ratio"].as_f64().unwrap();
    assert!((w / r - ratio).abs() < 1e-6 * ratio, "{v}");
    assert!(
        v["tie"] == true || w < r,
        "a winner that is not a tie takes less time: {v}"
    );
}

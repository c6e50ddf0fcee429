//! What is kept of a model from a person's file after it trained, through the
//! real CLI, the studio's PyTorch environment and real SQLite files: a
//! session file carries the copy of the file, and importing it into another
//! database stores the copy and runs nothing.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use serde_json::{json, Value};

#[path = "common/mod.rs"]
mod common;

use common::{output_json, text, trainbench, Scratch};

/// A model file that leaves a mark beside itself whenever it is executed.
const MARKS: &str = r##"
import pathlib

pathlib.Path(__file__).with_name("executed").write_text("this file ran\n")

from torch import nn


def build():
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 4 * 4, 3))
"##;

/// A scratch folder holding `marks.py`.
fn with_marks(tag: &str) -> Scratch {
    let dir = Scratch::new(tag);
    std::fs::write(dir.0.join("marks.py"), MARKS).unwrap();
    dir
}

/// `trainbench run` of `marks.py:build` from inside `dir`; its JSON.
fn run_marks(dir: &Scratch, extra: &[&str]) -> (std::process::Output, Value) {
    output_json(
        trainbench(&dir.0)
            .current_dir(&dir.0)
            .args(["run", "--framework", "pytorch", "--model", "marks.py:build"])
            .args(["--input-shape", "3x4x4", "--num-classes", "3"])
            .args(["--batch-size", "2", "--steps", "3", "--json"])
            .args(extra),
    )
}

fn details(dir: &std::path::Path, id: &Value) -> Value {
    output_json(trainbench(dir).args(["show", &id.to_string(), "--json"])).1
}

/// Exported with its runs, the copy of the model file travels in the session
/// file; imported into a second database, the runs and the copy are there
/// and nothing ran (the file, which marks each execution, left no mark).
#[test]
fn a_session_file_carries_the_model_files_copy_and_importing_it_runs_nothing() {
    let source = with_marks("stored-session-source");
    let (out, v) = run_marks(&source, &["--repeats", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let id = v["runs"][0]["id"].clone();
    let second = v["runs"][1]["id"].to_string();
    let marker = source.0.join("executed");
    assert!(marker.exists(), "the run executed the file");
    std::fs::remove_file(&marker).unwrap();
    let shown = details(&source.0, &id);
    let sha = shown["spec"]["model_sha256"].as_str().unwrap().to_owned();

    let (out, _) = output_json(trainbench(&source.0).args([
        "session",
        "save",
        "mine",
        &id.to_string(),
        &second,
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let file = source.0.join("mine.json");
    let (out, _) = output_json(trainbench(&source.0).args([
        "export",
        "session",
        "mine",
        "-o",
        file.to_str().unwrap(),
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let written: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(written["version"], 2, "a file carrying a model file");
    assert_eq!(written["model_files"][0]["sha256"], json!(sha));
    assert_eq!(written["model_files"][0]["text"], json!(MARKS));
    assert_eq!(written["model_files"].as_array().unwrap().len(), 1, "once");

    // Another database, in a folder of its own, the model file still at its
    // path: importing must not run it.
    let target = Scratch::new("stored-session-target");
    let (out, imported) =
        output_json(trainbench(&target.0).args(["import", file.to_str().unwrap(), "--json"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!marker.exists(), "importing ran the model file");
    assert!(!target.0.join("executed").exists());
    assert_eq!(imported["runs_imported"], 2, "{imported}");
    let (_, runs) = output_json(trainbench(&target.0).args(["runs", "--json"]));
    let here = runs["runs"][0]["id"].clone();
    let d = details(&target.0, &here);
    assert_eq!(d["status"], "completed", "{d}");
    assert_eq!(d["spec"]["model_sha256"], json!(sha));
    assert_eq!(d["model_file"]["sha256"], json!(sha), "{d}");
    assert_eq!(d["model_file"]["kept_bytes"], json!(MARKS.len()), "{d}");
    assert!(!marker.exists(), "showing the run ran the model file");
    // Running an imported run of a person's file again is refused: a path
    // from another database is not a file they named now.
    let (out, again) =
        output_json(trainbench(&target.0).args(["rerun", &here.to_string(), "--json"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(again["error"]["field"], json!("run"), "{again}");
    assert!(
        !marker.exists(),
        "running an imported run again ran the model file"
    );
    // Nor when the session's stored configuration carries no SHA-256 for
    // the file (a session file is anybody's JSON): the model names a file.
    rusqlite::Connection::open(target.0.join("studio.sqlite"))
        .unwrap()
        .execute(
            "UPDATE runs SET spec_json = json_remove(spec_json, '$.model_sha256') WHERE id = ?1",
            [here.as_i64().unwrap()],
        )
        .unwrap();
    let (out, again) = output_json(trainbench(&target.0).args([
        "rerun",
        &here.to_string(),
        "--allow-changed",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(again["error"]["field"], json!("run"), "{again}");
    assert!(
        !marker.exists(),
        "an imported run without a hash ran the file"
    );

    // A copy that is not the file the run trained is refused, naming the run.
    let mut forged = written.clone();
    forged["model_files"][0]["text"] = json!(format!("{MARKS}# edited\n"));
    forged["session"]["uid"] = json!("d".repeat(32));
    let forged_file = source.0.join("forged.json");
    std::fs::write(&forged_file, forged.to_string()).unwrap();
    let other = Scratch::new("stored-session-forged");
    let (out, v) =
        output_json(trainbench(&other.0).args(["import", forged_file.to_str().unwrap(), "--json"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("run {id} (pytorch")), "{v}");
    assert!(message.contains("hashes to"), "{v}");
    assert!(!marker.exists());
}

/// `trainbench rerun ID` of a run trained from a model file reads the file
/// again: unchanged, it runs; changed, it is refused naming the path and the
/// SHA-256 stored and now, unless `--allow-changed` (then it trains the file
/// as it is now, with the new hash and its copy kept); gone, it is refused
/// (the kept copy is never run).
#[test]
fn running_a_stored_run_again_refuses_a_changed_or_gone_model_file_unless_allowed() {
    let dir = with_marks("stored-rerun");
    let (out, v) = run_marks(&dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let id = v["runs"][0]["id"].to_string();
    let stored = details(&dir.0, &v["runs"][0]["id"])["spec"]["model_sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    let rerun = |extra: &[&str]| {
        output_json(
            trainbench(&dir.0)
                .args(["rerun", &id, "--json"])
                .args(extra),
        )
    };

    let (out, again) = rerun(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let d = details(&dir.0, &again["runs"][0]["id"]);
    assert_eq!(d["status"], "completed", "{d}");
    assert_eq!(d["spec"]["model_sha256"], json!(stored));

    let path = dir.0.join("marks.py");
    std::fs::write(&path, format!("{MARKS}\n# edited since\n")).unwrap();
    let (out, refused) = rerun(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(refused["error"]["field"], "model", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains(&stored), "the stored hash: {message}");
    assert!(message.contains("--allow-changed"), "{message}");
    let (_, runs) = output_json(trainbench(&dir.0).args(["runs", "--json"]));
    assert_eq!(runs["runs"].as_array().unwrap().len(), 2, "nothing queued");

    let (out, allowed) = rerun(&["--allow-changed"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        allowed["notes"][0].as_str().unwrap().contains(&stored),
        "{allowed}"
    );
    let d = details(&dir.0, &allowed["runs"][0]["id"]);
    assert_eq!(d["status"], "completed", "{d}");
    let now = d["spec"]["model_sha256"].as_str().unwrap();
    assert_ne!(now, stored);
    assert!(message.contains(now), "the hash now: {message}");
    assert_eq!(d["model_file"]["sha256"], json!(now), "its copy kept: {d}");

    std::fs::remove_file(&path).unwrap();
    let (out, gone) = rerun(&["--allow-changed"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(gone["error"]["field"], "model", "{gone}");
    let message = gone["error"]["message"].as_str().unwrap();
    assert!(message.contains("cannot be run again"), "{message}");
    assert!(message.contains(&stored), "{message}");
    assert!(
        !dir.0.join("marks.py").exists(),
        "the copy is not written out"
    );
}

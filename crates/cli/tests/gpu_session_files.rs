//! The GPU session's files under hostile input, through the real CLI: a
//! named pipe or a device where `fold` and `plan --measured` read, text
//! that would break the results document, results of the wrong shape, a
//! results document that is a symbolic link or was edited by hand, and the
//! committed document checked against its record.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{text, Scratch, TRAINBENCH};
use serde_json::{json, Value};

/// The CLI run with its address space capped (so a read of `/dev/zero`
/// that regressed fails instead of filling the machine's memory) and
/// killed after a minute (so a read of a pipe that regressed fails instead
/// of hanging the suite).
fn guarded(dir: &Path, args: &[&str]) -> Output {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg("ulimit -v 4000000 && exec \"$0\" \"$@\"")
        .arg(TRAINBENCH)
        .arg("--db")
        .arg(dir.join("studio.sqlite"))
        .args(args)
        .env("OMP_NUM_THREADS", "1")
        .env("TRAINBENCH_NO_NVML", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!("{args:?} still ran after a minute: {}", text(&out));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// A session's results as `fold` reads them, with `items` as its results.
fn results_json(started: &str, host: &str, device: &str, items: Value) -> Value {
    json!({
        "format": "trainbench-gpu-session",
        "studio_git_revision": "abc123",
        "host": host,
        "session": {"started": started, "device": device, "budget_s": 530.0, "rehearse": false},
        "results": items,
    })
}

fn session_dir(root: &Path, name: &str, results: &Value) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("results.json"), results.to_string()).unwrap();
    dir
}

fn fold(scratch: &Path, dir: &Path, doc: &Path) -> Output {
    guarded(
        scratch,
        &[
            "gpu-session",
            "fold",
            "--no-import",
            "--doc",
            doc.to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
    )
}

fn refused(out: &Output, field: &str, says: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(out));
    assert!(err.contains(&format!("{field} = ")), "{}", text(out));
    assert!(err.contains(says), "{says:?}: {}", text(out));
}

#[test]
fn fold_and_plan_refuse_pipes_devices_and_folders_at_once() {
    let scratch = Scratch::new("gpu-files-pipes");
    let root = &scratch.0;
    let doc = root.join("gpu-results.md");
    std::fs::write(&doc, "# GPU results\n").unwrap();
    let fifo = root.join("pipe");
    mkfifo(&fifo);
    // results.json a pipe, a device (through a link), a folder.
    for (name, target, says) in [
        ("piped", fifo.clone(), "a named pipe"),
        ("zero", PathBuf::from("/dev/zero"), "a device"),
        ("folder", root.to_path_buf(), "a folder"),
    ] {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(&target, dir.join("results.json")).unwrap();
        refused(&fold(root, &dir, &doc), "dir", says);
    }
    // The session file beside good results a pipe.
    let good = results_json("2026-01-01 00:00 UTC", "vm", "cpu", json!([]));
    let dir = session_dir(root, "session-piped", &good);
    std::os::unix::fs::symlink(&fifo, dir.join("gpu-session.trainbench-session.json")).unwrap();
    refused(&fold(root, &dir, &doc), "dir", "a named pipe");
    // The document a pipe or a device; --against a pipe.
    let dir = session_dir(root, "good", &good);
    for (d, says) in [
        (&fifo, "a named pipe"),
        (&PathBuf::from("/dev/zero"), "a device"),
    ] {
        refused(&fold(root, &dir, d), "doc", says);
    }
    let piped = root.join("piped");
    let out = guarded(
        root,
        &[
            "gpu-session",
            "fold",
            "--no-import",
            "--doc",
            doc.to_str().unwrap(),
            "--against",
            piped.to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
    );
    refused(&out, "against", "a named pipe");
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), "# GPU results\n");
    // plan --measured a pipe or a device, not the record's folder.
    for (m, says) in [
        (&fifo, "expected the folder"),
        (&PathBuf::from("/dev/zero"), "expected the folder"),
    ] {
        let out = guarded(
            root,
            &[
                "gpu-session",
                "plan",
                "--gpu",
                "NVIDIA H200",
                "--measured",
                m.to_str().unwrap(),
            ],
        );
        refused(&out, "measured", says);
    }
}

/// The cells of a Markdown table row, split at the `|` a renderer splits
/// at (not after a backslash).
fn cells(line: &str) -> usize {
    let mut n = 1;
    let mut escaped = false;
    for c in line.chars() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '|') => n += 1,
            _ => {}
        }
    }
    n
}

#[test]
fn hostile_text_in_results_cannot_break_the_document() {
    let scratch = Scratch::new("gpu-files-text");
    let root = &scratch.0;
    let doc = root.join("gpu-results.md");
    std::fs::write(&doc, "# GPU results\n").unwrap();
    let genuine_marker = "<!-- gpu-session: 2026-02-02 10:00 UTC genuine -->";
    let forged_row = "| 2026-02-02 | abc | NVIDIA H200 | pytorch (2.11) | vit-eager: x | 8 | 1.0 | — | — | ran |";
    let hostile = format!("t\n## injected\n{genuine_marker}\n{forged_row}\n");
    let items = json!([
        {"id": "vit-jax|x", "title": hostile, "status": "ran\n# status", "batch": "64 | 8 -->",
         "reason": "r --> <!-- x", "ratio_note": "n|\r\n", "samples_per_s": 10.0},
        {"id": "vit-jax", "title": "JAX", "status": "ran", "batch": 64.0, "samples_per_s": 12.5}
    ]);
    let mut results = results_json(
        "2026-02-01 09:00 UTC\n## s",
        "evil -->\n# h",
        "NVIDIA H200",
        items,
    );
    results["studio_git_revision"] = json!("c|d\n<!-- gpu-session: a b -->");
    let dir = session_dir(root, "hostile", &results);
    // Its session file names the framework and the GPU with hostile text too.
    let session = json!({"runs": [{"id": 1, "framework": "pytorch|\n## fw",
        "hello": {"framework_version": "2 -->", "device": {"name": "NVIDIA H200"}},
        "provenance": {"nvidia_driver": "580|\n", "cuda_driver": "13.0"}}]});
    std::fs::write(
        dir.join("gpu-session.trainbench-session.json"),
        session.to_string(),
    )
    .unwrap();
    let out = fold(root, &dir, &doc);
    assert!(out.status.success(), "{}", text(&out));
    let written = std::fs::read_to_string(&doc).unwrap();
    let section = written.strip_prefix("# GPU results\n").unwrap();
    let lines: Vec<&str> = section.lines().collect();
    // Headings: the section's own; no comment opened by the text.
    let headings: Vec<_> = lines.iter().filter(|l| l.starts_with('#')).collect();
    assert_eq!(headings.len(), 1, "{written}");
    assert!(
        headings[0].starts_with("## 2026-02-01, NVIDIA H200 (580"),
        "{written}"
    );
    assert!(!written.contains("<!--"), "{written}");
    // Every table line has the header's cells: one row per item.
    let table: Vec<_> = lines.iter().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), 4, "{written}");
    assert!(table.iter().all(|l| cells(l) == 12), "{written}");
    assert!(
        table[3].contains("| vit-jax: JAX | 64 | 12.5 | "),
        "{written}"
    );
    assert!(section.contains("budget 530 s"), "{written}");
    // The record counts what ran, not the text that looks like a row.
    let record = root.join("gpu-results");
    let out = guarded(
        root,
        &[
            "gpu-session",
            "plan",
            "--json",
            "--gpu",
            "NVIDIA H200",
            "--measured",
            record.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let before = |id: &str| {
        plan["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == id)
            .unwrap()["measured_before"]
            .clone()
    };
    assert_eq!(before("vit-eager"), 0, "{plan}");
    assert_eq!(before("vit-jax"), 1, "{plan}");
    // The session the hostile text named folds once, after it.
    let genuine = results_json("2026-02-02 10:00 UTC", "genuine", "cpu", json!([]));
    let dir = session_dir(root, "genuine", &genuine);
    let out = fold(root, &dir, &doc);
    assert!(out.status.success(), "{}", text(&out));
    let written = std::fs::read_to_string(&doc).unwrap();
    assert_eq!(
        written.matches("\n## 2026-02-02, cpu: GPU session").count(),
        1,
        "{written}"
    );
    assert!(written.find("## 2026-02-01").unwrap() < written.find("## 2026-02-02").unwrap());
    let again = fold(root, &dir, &doc);
    refused(&again, "dir", "already in");
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), written);
    // Text written on the page by hand is not lost to the next fold.
    std::fs::write(&doc, format!("{written}\nA hand-written line.\n")).unwrap();
    let later = results_json("2026-02-03 10:00 UTC", "later", "cpu", json!([]));
    let dir = session_dir(root, "later", &later);
    refused(&fold(root, &dir, &doc), "doc", "is not what its record");
    assert!(std::fs::read_to_string(&doc)
        .unwrap()
        .ends_with("A hand-written line.\n"));
    assert!(!record
        .join("2026-02-03-1000-cpu-gpu-session-results.json")
        .exists());
}

/// `gpu-session render --check` passes on the committed page and its
/// record (docs/gpu-results.md and docs/gpu-results/), and fails on a
/// copy of them whose notes changed without the page.
#[test]
fn the_committed_results_page_is_what_its_record_gives() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = repo.join("docs/gpu-results.md");
    let out = guarded(
        &repo,
        &[
            "gpu-session",
            "render",
            "--check",
            "--doc",
            doc.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let scratch = Scratch::new("gpu-files-render");
    let copy = scratch.0.join("gpu-results");
    std::fs::create_dir_all(&copy).unwrap();
    for e in std::fs::read_dir(repo.join("docs/gpu-results")).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        if name.ends_with(".json") || name.ends_with(".md") {
            std::fs::copy(e.path(), copy.join(&name)).unwrap();
        }
    }
    let copied = scratch.0.join("gpu-results.md");
    std::fs::copy(&doc, &copied).unwrap();
    let check = || {
        guarded(
            &scratch.0,
            &[
                "gpu-session",
                "render",
                "--check",
                "--doc",
                copied.to_str().unwrap(),
            ],
        )
    };
    assert_eq!(check().status.code(), Some(0), "{}", text(&check()));
    let opening = copy.join("opening.md");
    let text_before = std::fs::read_to_string(&opening).unwrap();
    std::fs::write(&opening, format!("{text_before}\nA planted line.\n")).unwrap();
    let out = check();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not what its record"),
        "{}",
        text(&out)
    );
    // Written again from the record, it passes.
    let out = guarded(
        &scratch.0,
        &["gpu-session", "render", "--doc", copied.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::read_to_string(&copied)
        .unwrap()
        .contains("A planted line."));
    assert_eq!(check().status.code(), Some(0));
}

#[test]
fn results_of_the_wrong_shape_are_refused_naming_the_field() {
    let scratch = Scratch::new("gpu-files-shape");
    let root = &scratch.0;
    let doc = root.join("gpu-results.md");
    std::fs::write(&doc, "# GPU results\n").unwrap();
    let good = results_json("2026-01-01 00:00 UTC", "vm", "cpu", json!([]));
    let mut not_array = good.clone();
    not_array["results"] = json!({"id": "vit-eager"});
    let mut not_objects = good.clone();
    not_objects["results"] = json!([{"id": "vit-eager"}, "vit-timm"]);
    let mut no_session = good.clone();
    no_session["session"] = json!("yesterday");
    for (name, results, says) in [
        (
            "top",
            json!(["trainbench-gpu-session"]),
            "is not a JSON object",
        ),
        (
            "not-array",
            not_array,
            "results = {\"id\":\"vit-eager\"} (expected an array",
        ),
        (
            "not-objects",
            not_objects,
            "results[1] = \"vit-timm\" (expected an object)",
        ),
        (
            "no-session",
            no_session,
            "session = \"yesterday\" (expected an object)",
        ),
    ] {
        let dir = session_dir(root, name, &results);
        refused(&fold(root, &dir, &doc), "dir", says);
    }
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), "# GPU results\n");
}

#[test]
fn a_results_document_that_is_a_link_is_written_through_and_stays_a_link() {
    let scratch = Scratch::new("gpu-files-link");
    let root = &scratch.0;
    let real = root.join("real-results.md");
    std::fs::write(&real, "# GPU results\n").unwrap();
    let link = root.join("gpu-results.md");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let results = results_json("2026-01-01 00:00 UTC", "vm", "cpu", json!([]));
    let dir = session_dir(root, "s", &results);
    let out = fold(root, &dir, &link);
    assert!(out.status.success(), "{}", text(&out));
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_link(&link).unwrap(), real);
    let written = std::fs::read_to_string(&real).unwrap();
    assert!(
        written.starts_with("# GPU results\n\n## 2026-01-01, cpu: GPU session"),
        "{written}"
    );
    // Not twice, through the link either.
    refused(&fold(root, &dir, &link), "dir", "already in");
}

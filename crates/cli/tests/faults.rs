//! Runs that go wrong, with the real `trainbench` binary and a real SQLite
//! file: workers that print garbage, hang, exit early or are killed (the
//! scripts in `tests/fake-workers/` wrap or replace the real worker), and a
//! studio killed or interrupted mid-run, or a reader that closes the pipe
//! early. What was measured is kept and the
//! database stays sound.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;

use common::{failed_run, fake, text, wait_for_windows, Db, SMALL};

#[test]
fn a_worker_printing_garbage_is_tolerated() {
    let db = Db::new("garbage");
    let (out, v) = db.with_worker(
        &fake("garbage-then-real.sh"),
        &[&["run"], &SMALL[..], &["--json"]].concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(v["runs"][0]["status"], "completed");
}

#[test]
fn a_silent_worker_times_out() {
    let db = Db::new("hang");
    let started = Instant::now();
    let (out, v) = db.with_worker(
        &fake("hang.sh"),
        &[&["run"], &SMALL[..], &["--timeout", "2", "--json"]].concat(),
    );
    let run = failed_run(&out, &v);
    assert_eq!(run["status"], "timeout", "{run}");
    assert!(run["status_reason"]
        .as_str()
        .unwrap()
        .contains("printed nothing for 2 s"));
    assert!(started.elapsed() < Duration::from_secs(30));
    let (_, detail) = db.run(&["show", &run["id"].to_string(), "--json"]);
    assert!(
        detail["stderr_tail"]
            .as_str()
            .unwrap()
            .contains("loading..."),
        "{detail}"
    );
}

#[test]
fn a_worker_exiting_without_done_fails() {
    let db = Db::new("exit0");
    let (out, v) = db.with_worker(
        &fake("exit0-without-done.sh"),
        &[&["run"], &SMALL[..], &["--json"]].concat(),
    );
    let run = failed_run(&out, &v);
    assert_eq!(run["status"], "failed");
    assert!(
        run["status_reason"]
            .as_str()
            .unwrap()
            .contains("exited with code 0 without a done"),
        "{run}"
    );
    assert_eq!(
        run["time_to_first_step_s"], 0.5,
        "what arrived before the failure is kept"
    );
}

#[test]
fn a_worker_killed_with_sigkill_keeps_its_data() {
    let db = Db::new("sigkill");
    let studio = db
        .cmd()
        .args([
            "run",
            "--model",
            "vit_mini_patch4_32",
            "--steps",
            "100000",
            "--batch-size",
            "8",
            "--window-steps",
            "2",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed once it has stored windows, however long it took to get there
    // (a kill on a timer found no window yet on a busy machine's slow start).
    wait_for_windows(&db, 1, 2);
    let worker = common::children(studio.id())
        .into_iter()
        .next()
        .expect("the studio's worker");
    let killed = Command::new("kill")
        .args(["-KILL", &worker.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = studio.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out)));
    let run = failed_run(&out, &v);
    assert_eq!(run["status"], "failed");
    assert!(
        run["status_reason"].as_str().unwrap().contains("signal 9"),
        "{run}"
    );
    let (_, detail) = db.run(&["show", &run["id"].to_string(), "--json"]);
    assert!(
        !detail["windows"].as_array().unwrap().is_empty(),
        "windows before the kill are kept"
    );
    assert!(detail["throughput_samples_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_killed_studio_leaves_an_interrupted_run_and_a_sound_database() {
    let db = Db::new("studio-killed");
    let (out, _) = db.run(&[&["run"], &SMALL[..], &["--json"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut studio = db
        .cmd()
        .args([
            "run",
            "--model",
            "vit_mini_patch4_32",
            "--steps",
            "100000",
            "--batch-size",
            "8",
            "--window-steps",
            "2",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the second run has stored windows, then kill the studio.
    wait_for_windows(&db, 2, 2);
    studio.kill().unwrap();
    studio.wait().unwrap();
    let (out, v) = db.run(&["runs", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs[0]["status"], "completed", "the earlier run is intact");
    assert_eq!(runs[1]["status"], "interrupted");
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// Ctrl-C as a terminal sends it: SIGINT to the process.
fn interrupt(child: &std::process::Child) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn ctrl_c_cancels_the_run_and_keeps_its_data() {
    let db = Db::new("cancel");
    let studio = db
        .cmd()
        .args([
            "run",
            "--model",
            "vit_mini_patch4_32",
            "--steps",
            "100000",
            "--batch-size",
            "8",
            "--window-steps",
            "2",
            "--repeats",
            "2",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_windows(&db, 1, 2);
    interrupt(&studio);
    let out = studio.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs[0]["status"], "cancelled");
    assert!(
        runs[0]["throughput_samples_per_s"].as_f64().unwrap() > 0.0,
        "data up to the cancel is kept"
    );
    assert_eq!(runs[1]["status"], "cancelled");
    assert!(runs[1]["status_reason"]
        .as_str()
        .unwrap()
        .contains("before this run started"));
}

/// `trainbench env install` interrupted with Ctrl-C while uv installs (a
/// real install from PyPI into an empty studio home): the installer stops,
/// its staging folder is removed, and the framework is not installed.
#[test]
fn ctrl_c_cancels_an_environment_install_and_leaves_nothing() {
    let home = common::Scratch::new("install-cancel");
    // The uv the studio itself would use (setup.sh installs it).
    let uv = trainbench_app::envs::uv_program().expect("uv is not installed: run scripts/setup.sh");
    let mut install = Command::new(common::TRAINBENCH)
        .args(["env", "install", "jax", "--cpu"])
        .env("TRAINBENCH_HOME", &home.0)
        .env("TRAINBENCH_UV", &uv)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = install.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::Builder::new()
        .name("stderr".into())
        .spawn(move || {
            use std::io::BufRead;
            for l in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(l);
            }
        })
        .unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    // uv's first line of the package install: the install is under way.
    while !seen.iter().any(|l: &String| l.contains("Using Python")) {
        assert!(Instant::now() < deadline, "no installer output: {seen:?}");
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push(l);
        }
    }
    interrupt(&install);
    let out = install.wait_with_output().unwrap();
    seen.extend(rx.iter());
    let said = seen.join("\n");
    assert_ne!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("cancelled; nothing of it was kept"), "{said}");
    let envs_dir = home.0.join("envs");
    let left: Vec<String> = std::fs::read_dir(&envs_dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        left.iter().all(|n| !n.contains("jax")),
        "the cancelled install left {left:?} in {}",
        envs_dir.display()
    );
    let (_, v) = common::output_json(
        Command::new(common::TRAINBENCH)
            .args(["env", "list", "--json"])
            .env("TRAINBENCH_HOME", &home.0),
    );
    let jax = v["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["framework"] == "jax")
        .unwrap();
    assert_eq!(jax["ready"], false, "{v}");
}

/// The peak resident memory (VmHWM) of process `pid` so far, in bytes.
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn a_worker_printing_a_128_mib_line_is_cut_and_the_studio_stays_small() {
    let db = Db::new("output-bomb");
    let studio = db
        .cmd()
        .env("TRAINBENCH_WORKER_TCH", fake("output-bomb.sh"))
        .env("BOMB_MIB", "128")
        .args([&["run"], &SMALL[..], &["--json"]].concat())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = studio.id();
    let reader = std::thread::Builder::new()
        .name("studio".into())
        .spawn(move || studio.wait_with_output().unwrap())
        .unwrap();
    let mut peak = 0;
    while !reader.is_finished() {
        if let Some(p) = peak_rss(pid) {
            peak = peak.max(p);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = reader.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"][0]["status"], "completed", "{v}");
    // Two 128 MiB lines read whole would take at least 256 MiB.
    assert!(peak > 0, "the studio's memory was read");
    assert!(peak < 100 << 20, "the studio peaked at {peak} bytes");
    let (_, detail) = db.run(&["show", &v["runs"][0]["id"].to_string(), "--json"]);
    let tail = detail["stderr_tail"].as_str().unwrap_or_default();
    assert!(
        tail.len() < 256 * 1024,
        "the stored tail is {} bytes",
        tail.len()
    );
    assert!(
        tail.contains("more bytes cut"),
        "the long line is marked as cut"
    );
}

#[test]
fn a_reader_that_closes_early_ends_the_cli_quietly() {
    // `trainbench env list | head -0`: the pipe's read end is closed before
    // the CLI prints, so its first write fails with EPIPE. The listings
    // written a piece at a time (`runs --json`, `query`, `export csv`) end
    // the same way.
    let db = Db::new("pipe");
    for args in [
        &["env", "list"][..],
        &["runs", "--json"],
        &["query", "--json", "SELECT 1"],
        &["query", "--csv", "SELECT 1"],
        &["export", "csv"],
        &["export", "csv", "--json"],
        &["session", "list", "--json"],
    ] {
        let mut child = db
            .cmd()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(141), "{args:?}: {}", text(&out));
        assert!(out.stderr.is_empty(), "{args:?}: {}", text(&out));
    }
}

//! A sweep in the desktop's queue keeps the release it runs in
//! (`jax==0.6.2`) from the disk budget for its whole duration, as the CLI's
//! run loop does, not only while each run's worker is up: a budget pass
//! between two runs of the sweep (made here just before each run starts,
//! through the queue's hook) keeps it and says it is in use; once the
//! sweep's last run has ended, it is removed. Real file locks, a real
//! SQLite file, the real planner and queue, and real worker processes: the
//! release's environment is one whose `python` is a shell script that exits
//! at once (the runs fail; what matters is the release between them). Its
//! own test binary: it points `TRAINBENCH_HOME` at a scratch home.

mod common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use trainbench_app::envs::pinned;
use trainbench_app::sweep::SweepRequest;
use trainbench_app::versions::{parse_pin, requirements};
use trainbench_app::{Host, RunnerOptions, Workspace};
use trainbench_studio::queue::Queue;

const RELEASE: &str = "jax==0.6.2";

/// Each run's id and what the budget pass just before it did: the releases
/// it kept in use, and whether the release's folder was still there after.
static BEFORE_RUN: Mutex<Vec<(i64, Vec<String>, bool)>> = Mutex::new(Vec::new());

fn release_dir() -> PathBuf {
    pinned::versions_dir().join("jax-0.6.2")
}

/// A budget pass, as `trainbench env budget` or another install makes one.
fn budget_pass_before(run_id: i64) {
    let pass = pinned::evict_over_budget(&[]);
    let kept = pass
        .in_use
        .into_iter()
        .map(|(release, _)| release)
        .collect();
    let there = release_dir().is_dir();
    BEFORE_RUN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push((run_id, kept, there));
}

/// `jax==0.6.2`'s environment as an install leaves it (its marker is the
/// SHA-256 of its requirements), with a `python` that exits at once.
fn made_release() {
    let dir = release_dir();
    std::fs::create_dir_all(dir.join("bin")).expect("release folder");
    let python = dir.join("bin/python");
    std::fs::write(&python, "#!/bin/sh\nexit 3\n").expect("python");
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).expect("mode");
    std::fs::write(dir.join("lib.bin"), vec![0u8; 4096]).expect("its files");
    let pin = parse_pin(RELEASE).expect("pin").expect("a release");
    let mut sha = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sha256sum");
    sha.stdin
        .take()
        .expect("stdin")
        .write_all(requirements(pin, false).as_bytes())
        .expect("requirements");
    let out = sha.wait_with_output().expect("sha256sum output");
    let hex = String::from_utf8_lossy(&out.stdout);
    let hex = hex.split_whitespace().next().expect("a digest");
    std::fs::write(dir.join(".trainbench-ready"), hex).expect("marker");
    assert!(
        pinned::env_for(pin).ready,
        "the release counts as installed"
    );
}

#[test]
fn a_budget_pass_between_two_runs_of_a_sweep_keeps_its_release() {
    let dir = common::scratch("sweep-release");
    std::env::set_var("TRAINBENCH_HOME", dir.join("home"));
    std::env::set_var("TRAINBENCH_NO_NVML", "1");
    std::env::set_var("OMP_NUM_THREADS", "1");
    // The release's environment, over a disk budget of one byte.
    made_release();
    pinned::set_budget(1).expect("budget");

    let db = dir.join("studio.sqlite");
    let (ws, _) = Workspace::open(&db).expect("database");
    let request = SweepRequest {
        model: vec!["resnet_mini".into()],
        framework: vec![RELEASE.into()],
        batch_size: vec![8],
        steps: Some(4),
        repeats: 2,
        ..SweepRequest::default()
    };
    let plan = ws.plan(&request, &Host::open()).expect("plan");
    assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
    let (_, jobs) = ws.queue(&plan, None, "sweep release test").expect("queued");
    assert_eq!(jobs.len(), 2, "two runs");
    assert!(
        jobs.iter()
            .all(|j| j.worker.release.map(|p| p.to_string()) == Some(RELEASE.into())),
        "each run's worker runs in the release's environment"
    );

    let queue = Queue::start_with_hook(RunnerOptions::default(), budget_pass_before);
    queue.push(db, jobs).expect("pushed");
    let started = Instant::now();
    while queue.unfinished() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the queue never finished"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let before = BEFORE_RUN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    assert_eq!(
        before,
        [
            (1, vec![RELEASE.to_owned()], true),
            (2, vec![RELEASE.to_owned()], true)
        ],
        "before each run of the sweep, a budget pass keeps its release, in use"
    );
    // The sweep over: its last user's drop checked the budget again and
    // removed it (still over).
    assert!(!release_dir().exists(), "removed once the sweep had ended");
    assert!(pinned::evict_over_budget(&[]).in_use.is_empty());
}

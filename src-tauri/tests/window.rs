//! The real window, end to end: `ui/e2e/run.sh` (Xvfb, `tauri-driver` with
//! WebKitWebDriver, a desktop session's message bus) drives this build's
//! studio and libtorch worker through `ui/e2e/studio.e2e.mjs`. A test of its
//! own here so that it runs among the other tests, two at a time, instead of
//! after them: it mostly waits on the web view and its runs (TESTING.md).
//! Screenshots and the figures it prints: `test-output/e2e/`.

mod common;

use std::path::Path;
use std::process::Command;

#[test]
fn the_window_runs_compares_searches_and_reopens_a_session() {
    let studio = Path::new(env!("CARGO_BIN_EXE_trainbench-studio"));
    // The studio finds the libtorch worker beside it; built_binary says
    // which command builds it when it is missing.
    common::built_binary("trainbench-worker-tch");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("bash")
        .arg(repo.join("ui/e2e/run.sh"))
        .current_dir(&repo)
        .env("E2E_APP", studio)
        .output()
        .expect("bash starts ui/e2e/run.sh");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Its steps and figures stay in the test's output for a failure's
    // reader, and in test-output/e2e/ when it passes.
    println!("{log}");
    assert!(out.status.success(), "ui/e2e/run.sh failed: {log}");
    assert!(log.contains("e2e: passed"), "{log}");
}

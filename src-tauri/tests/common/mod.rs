//! What the desktop app's integration tests share.
#![allow(dead_code, reason = "each test file uses its own subset")]

pub mod app;
#[path = "../../../crates/cli/tests/common/sshd.rs"]
pub mod sshd;

use std::path::PathBuf;

/// A fresh folder under cargo's temporary folder for tests, named `NAME-PID`.
pub fn scratch(name: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A binary cargo built beside this test's folder (target/debug): the
/// `trainbench` CLI or the libtorch worker. `cargo test --workspace` builds both.
pub fn built_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary");
    let path = exe
        .parent()
        .and_then(std::path::Path::parent)
        .map(|d| d.join(name))
        .expect("target dir");
    assert!(
        path.is_file(),
        "{} is missing: `cargo test --workspace` builds it (or `cargo build -p trainbench-cli -p trainbench-engine-tch`)",
        path.display()
    );
    path
}

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

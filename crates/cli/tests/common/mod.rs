//! What the CLI's integration tests share: a scratch directory removed when
//! the test ends, a command's output as JSON, and a failure message showing
//! both of its streams.
#![allow(
    clippy::unwrap_used,
    dead_code,
    reason = "test helpers; each test file uses its own subset"
)]

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

pub const TRAINBENCH: &str = env!("CARGO_BIN_EXE_trainbench");

/// A fresh directory under the system's temporary directory.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("trainbench-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `trainbench --db DIR/studio.sqlite` on one thread, NVML off.
pub fn trainbench(dir: &std::path::Path) -> Command {
    let mut c = Command::new(TRAINBENCH);
    c.arg("--db")
        .arg(dir.join("studio.sqlite"))
        .env("OMP_NUM_THREADS", "1")
        .env("TRAINBENCH_NO_NVML", "1");
    c
}

/// Runs `c`; its stdout parsed as one JSON document (Null if it is not).
pub fn output_json(c: &mut Command) -> (Output, Value) {
    let out = c.output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, v)
}

pub fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

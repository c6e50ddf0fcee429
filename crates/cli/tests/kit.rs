//! The bench kit: `trainbench kit build` writes a folder that runs where the
//! studio is not installed; its `run.sh gpu-check` on this machine (no GPU)
//! says so and exits non-zero. A kit holds a libtorch worker per libtorch
//! release, and `run.sh` trains with the one that matches the machine's
//! torch (here: PyTorch 2.11, the GPU machines' release, and 2.13).
#![allow(clippy::unwrap_used, reason = "tests")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::ssh::python;
use common::{output_json, real_worker, text, worker_for_torch_2_11, Scratch, TRAINBENCH};
use serde_json::Value;

#[test]
fn kit_builds_and_its_gpu_check_reports_no_gpu_here() {
    let scratch = Scratch::new("kit");
    let kit = scratch.0.join("kit");
    let (out, manifest) = output_json(
        Command::new(TRAINBENCH)
            .args(["kit", "build", "--no-tch", "--json", "-o"])
            .arg(&kit),
    );
    assert!(out.status.success(), "{}", text(&out));
    for f in [
        "bin/trainbench",
        "run.sh",
        "manifest.json",
        "share/trainbench/workers/python/trainbench_worker/__main__.py",
        "share/trainbench/workers/python/trainbench_worker/torch_worker.py",
    ] {
        assert!(kit.join(f).is_file(), "{f} missing from the kit");
    }
    assert!(!kit.join("bin/trainbench-worker-tch").exists());
    assert_eq!(manifest["tch_worker"], "left out (--no-tch)");
    // Runs on Ubuntu 22.04 (glibc 2.35) and newer.
    let glibc = manifest["glibc_required"].as_str().unwrap();
    let minor: u32 = glibc.strip_prefix("2.").unwrap().parse().unwrap();
    assert!(minor <= 35, "needs glibc {glibc}");
    if manifest["debug_info_stripped"] == true {
        let mib = manifest["bytes"].as_f64().unwrap() / 1048576.0;
        // What a lent GPU machine takes in carried files (64 MiB in all);
        // a release kit (`make kit`) is about 30 MiB, this debug one ~45
        // (symbols stripped too).
        assert!(mib <= 64.0, "kit is {mib:.1} MiB");
    }
    // Not over a kit already there.
    let out = Command::new(TRAINBENCH)
        .args(["kit", "build", "--no-tch", "-o"])
        .arg(&kit)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("output ="));

    // On this machine: no GPU, said plainly, exit 3, nothing run — by the
    // acceptance suite and by the GPU session (which points to its rehearsal).
    let without_gpu = |suite: &str| {
        Command::new("bash")
            .arg(kit.join("run.sh"))
            .arg(suite)
            .env_remove("TRAINBENCH_NO_NVML")
            .env_remove("TRAINBENCH_HOME")
            .env_remove("TRAINBENCH_DB")
            .env("TRAINBENCH_PYTHON", "/nonexistent/python3")
            .output()
            .unwrap()
    };
    let out = without_gpu("gpu-check");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no NVIDIA GPU") && err.contains("Nothing was run"),
        "{err}"
    );
    assert!(
        !kit.join("results").exists()
            || std::fs::read_dir(kit.join("results")).unwrap().count() == 0
    );
    let out = without_gpu("gpu-session");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rehearse runs its plan on the CPU"));

    let out = Command::new("bash")
        .arg(kit.join("run.sh"))
        .arg("benchmark-everything")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("suite = benchmark-everything is not allowed: expected gpu-session, gpu-check, quick or env"));
}

/// The PyTorch 2.11 environment beside the studio's (`scripts/setup.sh --torch-2.11`).
fn python_torch_2_11() -> PathBuf {
    let studio = PathBuf::from(python("pytorch"));
    let envs = studio.ancestors().nth(3).unwrap();
    let p = envs.join("torch-2.11.0/bin/python");
    assert!(
        p.is_file(),
        "{} is missing: scripts/setup.sh --torch-2.11 makes it (make test does)",
        p.display()
    );
    p
}

/// `bash KIT/run.sh ARGS` with `py` as the machine's Python, everything in the kit.
fn kit_run(kit: &Path, py: &Path, args: &[&str]) -> std::process::Output {
    Command::new("bash")
        .arg(kit.join("run.sh"))
        .args(args)
        .env("TRAINBENCH_PYTHON", py)
        .env("OMP_NUM_THREADS", "1")
        .env_remove("TRAINBENCH_HOME")
        .env_remove("TRAINBENCH_DB")
        .env_remove("TRAINBENCH_WORKER_TCH")
        .env_remove("TRAINBENCH_RESULTS")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap()
}

#[test]
fn a_kit_holds_a_libtorch_worker_per_release_and_trains_with_the_matching_one() {
    let scratch = Scratch::new("kit-tch");
    let kit = scratch.0.join("kit");
    let (w213, w211) = (real_worker(), worker_for_torch_2_11());
    let (out, manifest) = output_json(
        Command::new(TRAINBENCH)
            .args(["kit", "build", "--json", "--tch"])
            .arg(&w213)
            .arg("--tch")
            .arg(&w211)
            .arg("-o")
            .arg(&kit),
    );
    assert!(out.status.success(), "{}", text(&out));
    let workers = manifest["tch_workers"].as_array().unwrap();
    let releases: Vec<&str> = workers
        .iter()
        .map(|w| w["libtorch"].as_str().unwrap())
        .collect();
    assert!(
        releases[0].starts_with("2.13.0") && releases[1].starts_with("2.11.0"),
        "{manifest}"
    );
    for w in workers {
        assert!(kit.join(w["path"].as_str().unwrap()).is_file(), "{w}");
    }
    // One worker per release: a second 2.13 is refused, naming the field.
    let out = Command::new(TRAINBENCH)
        .args(["kit", "build", "--tch"])
        .arg(&w213)
        .arg("--tch")
        .arg(&w213)
        .arg("-o")
        .arg(scratch.0.join("kit-twice"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("already in the kit"),
        "{}",
        text(&out)
    );

    // A machine with PyTorch 2.11: the 2.11 worker trains there, beside the
    // Python PyTorch worker in the same torch, and its runs say so.
    let out = kit_run(
        &kit,
        &python_torch_2_11(),
        &[
            "quick",
            "--steps",
            "6",
            "--window-steps",
            "2",
            "--batch-size",
            "4",
        ],
    );
    let log = text(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    assert!(log.contains("the one built for libtorch 2.11.0"), "{log}");
    let results = kit.join("results");
    let dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let session: Value =
        serde_json::from_slice(&std::fs::read(dir.join("quick.trainbench-session.json")).unwrap())
            .unwrap();
    let runs = session["runs"].as_array().unwrap();
    let tch = runs.iter().find(|r| r["framework"] == "tch").unwrap();
    let eager = runs.iter().find(|r| r["framework"] != "tch").unwrap();
    for r in [tch, eager] {
        assert_eq!(r["status"], "completed", "{r}");
        assert!(
            r["hello"]["framework_version"]
                .as_str()
                .unwrap()
                .starts_with("2.11.0"),
            "{}",
            r["hello"]
        );
    }
    assert!(
        tch["hello"]["libraries"].to_string().contains("\"0.24.0\""),
        "tch 0.24 is the release for libtorch 2.11: {}",
        tch["hello"]
    );
    assert_eq!(tch["param_count"], eager["param_count"]);

    // PyTorch 2.13: the other worker; no torch at all: left out, saying why.
    let out = kit_run(&kit, Path::new(&python("pytorch")), &["env"]);
    assert!(
        text(&out).contains("the one built for libtorch 2.13.0"),
        "{}",
        text(&out)
    );
    let out = kit_run(&kit, Path::new(&python("jax")), &["env"]);
    let log = text(&out);
    assert!(
        log.contains("tch worker left out: the kit's are built for libtorch 2.11.0, 2.13.0"),
        "{log}"
    );
}

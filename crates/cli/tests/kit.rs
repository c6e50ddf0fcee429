//! The bench kit: `trainbench kit build` writes a folder that runs where the
//! studio is not installed; its `run.sh gpu-check` on this machine (no GPU)
//! says so and exits non-zero.
#![allow(clippy::unwrap_used, reason = "tests")]

mod common;

use std::process::Command;

use common::{output_json, text, Scratch, TRAINBENCH};

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
        // a release kit (`make kit`) is about 50 MiB, this debug one ~61.
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

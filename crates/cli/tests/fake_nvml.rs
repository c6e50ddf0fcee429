//! The GPU telemetry path without a GPU: a fake `libnvidia-ml.so` (C, built
//! here from `tests/fake-nvml/fake_nvml.c`, driven by a JSON script) under the
//! real probe, runner, store, summary and PDF report, with a test-double
//! worker that reports training on `cuda:0` (`tests/fake-nvml/fake_gpu_worker.py`).
//! A stand-in for hardware CI cannot have, not for a real GPU run
//! (`make gpu-check` on a GPU machine is that).
#![allow(clippy::unwrap_used, reason = "tests")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{output_json, text, Scratch, TRAINBENCH};
use serde_json::{json, Value};

fn fake_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fake-nvml")
}

/// Builds the fake NVML library into `dir` (as the driver names it).
pub fn build_fake_nvml(dir: &Path) -> PathBuf {
    let lib = dir.join("libnvidia-ml.so.1");
    let out = Command::new("cc")
        .args([
            "-Wall", "-Wextra", "-Werror", "-O1", "-shared", "-fPIC", "-o",
        ])
        .arg(&lib)
        .arg(fake_dir().join("fake_nvml.c"))
        .arg("-lcjson")
        .output()
        .unwrap();
    assert!(out.status.success(), "cc failed: {}", text(&out));
    lib
}

/// `trainbench` with the fake NVML and the fake GPU worker as the tch worker.
fn gpu_cli(dir: &Path, lib: &Path, script: &Value, name: &str) -> Command {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, script.to_string()).unwrap();
    let mut c = Command::new(TRAINBENCH);
    c.arg("--db")
        .arg(dir.join("studio.sqlite"))
        .env_remove("TRAINBENCH_NO_NVML")
        .env("TRAINBENCH_NVML_LIB", lib)
        .env("FAKE_NVML_SCRIPT", &path)
        .env(
            "TRAINBENCH_WORKER_TCH",
            fake_dir().join("fake_gpu_worker.py"),
        )
        .env("FAKE_STEP_S", "0.03");
    c
}

fn device(name: &str) -> Value {
    json!({
        "name": name,
        "memory_total_mib": 81559, "memory_used_mib": 33000,
        "power_limit_w": 700, "power_w": 500, "utilization_percent": 97,
        "energy_start_mj": 123_000_000,
        "throttle_reasons": 1,
        "processes": [{"pid": "children", "used_mib": 30000}]
    })
}

/// Runs one configuration on the fake GPU and returns `show --json` of it.
fn run_on(dir: &Path, lib: &Path, script: &Value, name: &str, precision: &str) -> Value {
    let (out, v) = output_json(gpu_cli(dir, lib, script, name).args([
        "run",
        "--framework",
        "tch",
        "--device",
        "cuda",
        "--model",
        "vit_mini_patch4_32",
        "--batch-size",
        "64",
        "--steps",
        "81",
        "--precision",
        precision,
        "--json",
    ]));
    assert!(out.status.success(), "{}", text(&out));
    let id = v["runs"][0]["id"].as_i64().unwrap();
    let (out, shown) =
        output_json(gpu_cli(dir, lib, script, name).args(["show", &id.to_string(), "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    shown
}

#[test]
fn energy_mfu_warnings_and_missing_counters_through_the_real_runner() {
    let scratch = Scratch::new("fake-nvml");
    let dir = &scratch.0;
    let lib = build_fake_nvml(dir);

    // 1. An H100 SXM (NVML's name for it), 500 W, a working energy counter.
    let h100 = json!({"driver_version": "580.95.05", "cuda_driver_version": 13000,
                      "devices": [device("NVIDIA H100 80GB HBM3")]});
    let r = run_on(dir, &lib, &h100, "h100", "amp-fp16");
    let s = &r["summary"];
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(r["provenance"]["gpus"][0]["name"], "NVIDIA H100 80GB HBM3");
    assert_eq!(r["provenance"]["nvidia_driver"], "580.95.05");
    assert_eq!(r["provenance"]["cuda_driver"], "13.0");
    // MFU against the H100 SXM's dense fp16 peak (989 TFLOP/s).
    let tp = s["throughput_samples_per_s"].as_f64().unwrap();
    let mfu = s["mfu"].as_f64().unwrap();
    assert!((mfu - 1e10 * tp / 989e12).abs() < 1e-9, "{s}");
    assert!(s["mfu_note"].as_str().unwrap().contains("H100 SXM"), "{s}");
    // Energy from the counter's deltas: the counter follows 500 W, so energy
    // per sample is 500 W × steady time ÷ steady samples.
    let g = &s["gpu"];
    assert_eq!(g["mean_power_w"], 500.0);
    let steady_s = g["steady_s"].as_f64().unwrap();
    let steady_samples = 64.0 * 8.0 * f64::from(10 - s["windows_warmup"].as_u64().unwrap() as u32);
    let want = 500.0 * steady_s / steady_samples;
    let got = s["energy_j_per_sample"].as_f64().unwrap();
    assert!(
        (got - want).abs() / want < 0.02,
        "energy {got} J/sample, want {want}: {s}"
    );
    assert!(
        s["energy_note"]
            .as_str()
            .unwrap()
            .contains("NVML total-energy counter"),
        "{s}"
    );
    // Idle (bit 0x1) is not a slowdown; the worker's own process is not "other".
    assert_eq!(s["warnings"], json!([]), "{s}");
    assert!(g["samples"].as_u64().unwrap() >= 10, "{g}");
    // NVML's process view of the worker, and the allocator peak it reported.
    let memory = r["memory"].as_array().unwrap();
    let nvml = memory
        .iter()
        .find(|m| m["source"] == "nvml_process")
        .unwrap();
    assert_eq!(nvml["peak_bytes"], 30000u64 * 1024 * 1024);
    assert!(memory
        .iter()
        .any(|m| m["source"] == "allocator" && m["device"] == "cuda:0"));
    assert_eq!(s["peak_memory_source"], "allocator");
    assert_eq!(r["loss_scale"], 65536.0);
    let h100_id = r["id"].as_i64().unwrap();

    // 2. A GPU the peak table does not know, held back by its power cap and
    //    shared with another process.
    let mut t4 = device("Tesla T4");
    t4["throttle_reasons"] = json!(4);
    t4["processes"] =
        json!([{"pid": "children", "used_mib": 3000}, {"pid": 4242, "used_mib": 2000}]);
    let r = run_on(dir, &lib, &json!({"devices": [t4]}), "t4", "fp32");
    let s = &r["summary"];
    assert_eq!(s["mfu"], Value::Null);
    assert_eq!(
        s["mfu_note"],
        "unknown device: no dense peak on record for Tesla T4"
    );
    let codes: Vec<&str> = s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["gpu_slowdown", "other_gpu_processes"], "{s}");
    assert!(s["warnings"][0]["message"]
        .as_str()
        .unwrap()
        .contains("software power cap"));
    assert!(s["energy_j_per_sample"].as_f64().unwrap() > 0.0);
    assert_eq!(r["loss_scale"], Value::Null);
    let t4_id = r["id"].as_i64().unwrap();
    let failing = |s: &Value| -> Vec<String> {
        s["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] == "fail")
            .map(|c| c["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(failing(s), ["gpu_throttle", "gpu_shared"], "{s}");

    // 2b. Held back by its power cap alone: exactly the throttle badge.
    let mut capped = device("NVIDIA H100 80GB HBM3");
    capped["throttle_reasons"] = json!(4);
    let r = run_on(dir, &lib, &json!({"devices": [capped]}), "capped", "fp32");
    assert_eq!(failing(&r["summary"]), ["gpu_throttle"], "{}", r["summary"]);

    // 3. A counter that wraps (every 0.5 s at 500 W), and 4. none at all:
    //    energy is "not measured", with the reason.
    let mut wraps = device("NVIDIA H100 PCIe");
    wraps["energy_wrap_mj"] = json!(250_000);
    let r = run_on(dir, &lib, &json!({"devices": [wraps]}), "wrap", "tf32");
    let s = &r["summary"];
    assert_eq!(s["energy_j_per_sample"], Value::Null, "{s}");
    assert!(
        s["energy_note"]
            .as_str()
            .unwrap()
            .starts_with("not measured: the energy counter of gpu:0 went backwards"),
        "{s}"
    );
    assert!(s["mfu_note"].as_str().unwrap().contains("H100 PCIe"), "{s}");
    let mut none = device("NVIDIA H100 NVL");
    none["energy_start_mj"] = Value::Null;
    let r = run_on(dir, &lib, &json!({"devices": [none]}), "none", "amp-bf16");
    let s = &r["summary"];
    assert_eq!(s["energy_j_per_sample"], Value::Null, "{s}");
    assert_eq!(
        s["energy_note"],
        "not measured: NVML gives no energy counter for gpu:0"
    );
    assert_eq!(s["gpu"]["mean_power_w"], 500.0);
    let none_id = r["id"].as_i64().unwrap();

    // The comparison and the PDF carry the warnings and the not-measured notes.
    let ids = [h100_id, t4_id, none_id].map(|i| i.to_string());
    let script = dir.join("h100.json");
    let (out, c) = output_json(
        gpu_cli(dir, &lib, &h100, "h100")
            .arg("compare")
            .args(&ids)
            .arg("--json"),
    );
    assert!(out.status.success(), "{}", text(&out));
    let warnings = c["comparison"]["warnings"].to_string();
    assert!(
        warnings.contains(&format!("run {t4_id}: 1 other process(es) used gpu:0")),
        "{warnings}"
    );
    let pdf = dir.join("gpu.pdf");
    let out = gpu_cli(dir, &lib, &h100, "h100")
        .args(["export", "pdf"])
        .args(&ids)
        .arg("-o")
        .arg(&pdf)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let txt = Command::new("pdftotext")
        .args(["-layout"])
        .arg(&pdf)
        .arg("-")
        .output()
        .unwrap();
    let txt = String::from_utf8_lossy(&txt.stdout);
    for needle in [
        "Energy and utilisation",
        "H100 SXM",
        "gpu_slowdown",
        "other_gpu_processes",
        "NVML gives no energy",
        "500 W",
    ] {
        assert!(
            txt.contains(needle),
            "{needle} missing from the PDF:\n{txt}"
        );
    }
    assert!(script.exists());
}

#[test]
fn gpu_check_says_no_gpu_and_exits_non_zero_without_one() {
    let scratch = Scratch::new("gpu-check-none");
    let out = common::trainbench(&scratch.0)
        .args(["gpu-check", "--out"])
        .arg(scratch.0.join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no NVIDIA GPU") && err.contains("Nothing was run"),
        "{err}"
    );
    assert!(!scratch.0.join("out").exists());
}

#[test]
fn gpu_check_runs_the_suite_checks_it_and_writes_report_and_session() {
    let scratch = Scratch::new("gpu-check-fake");
    let dir = &scratch.0;
    let lib = build_fake_nvml(dir);
    let script = json!({"devices": [device("NVIDIA H100 80GB HBM3")]});
    let out_dir = dir.join("results");
    let suite = |extra: &[&str]| {
        let mut c = gpu_cli(dir, &lib, &script, "h100");
        c.args([
            "gpu-check",
            "--framework",
            "tch",
            "--model",
            "vit_mini_patch4_32,resnet_mini",
            "--precision",
            "fp32,amp-fp16",
            "--steps",
            "81",
            "--out",
        ])
        .arg(&out_dir)
        .args(extra);
        c
    };
    let out = suite(&[]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", text(&out));
    // 2 models × 2 precisions on the one GPU; no TensorFlow or PyTorch
    // environment was named, so the compile and XLA runs say why they did not run.
    assert!(stdout.contains("every check passed"), "{stdout}");
    assert!(
        stdout.contains("XLA run: not run: tensorflow is not among the frameworks checked"),
        "{stdout}"
    );
    let checks: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("checks.json")).unwrap()).unwrap();
    let runs = checks["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    for r in runs {
        for c in r["checks"].as_array().unwrap() {
            assert_ne!(c["verdict"], "fail", "{c}");
        }
        let scale = r["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["key"] == "loss_scaling")
            .unwrap();
        let want = if r["precision"] == "amp-fp16" {
            "pass"
        } else {
            "not_applicable"
        };
        assert_eq!(scale["verdict"], want, "{r}");
    }
    let txt = Command::new("pdftotext")
        .arg(out_dir.join("report.pdf"))
        .arg("-")
        .output()
        .unwrap();
    let txt = String::from_utf8_lossy(&txt.stdout);
    assert!(txt.contains("GPU acceptance checks"), "{txt}");
    assert!(txt.contains("Every check passed"), "{txt}");
    // The session file brings the runs, with this machine's provenance, into
    // another studio's database.
    let home = dir.join("workstation");
    std::fs::create_dir_all(&home).unwrap();
    let (o, v) = output_json(
        common::trainbench(&home)
            .arg("import")
            .arg(out_dir.join("gpu-check.trainbench-session.json"))
            .arg("--json"),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(v["runs_imported"], 4, "{v}");
    let (o, shown) = output_json(common::trainbench(&home).args(["show", "1", "--json"]));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        shown["provenance"]["gpus"][0]["name"],
        "NVIDIA H100 80GB HBM3"
    );
    assert!(shown["origin"]["hostname"].is_string(), "{shown}");

    // An implausible MFU (a worker claiming 1 PFLOP per sample) fails the suite.
    let out = suite(&[])
        .env("FAKE_FLOPS_PER_SAMPLE", "1e15")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stdout.contains("mfu: FAIL") && stdout.contains("outside (0, 1]"),
        "{stdout}"
    );
}

/// `tune --objective energy` on the fake GPU: the fake worker's step takes
/// the same time at any batch and the fake GPU draws the same 500 W, so
/// joules per sample fall as the batch grows — the largest batch is the
/// planted answer, found from the energy counter through the real runner
/// and summary. On the CPU the objective is refused, saying why.
#[test]
fn the_energy_objective_finds_the_batch_that_spends_least_per_sample() {
    let scratch = Scratch::new("fake-nvml-tune");
    let dir = &scratch.0;
    let lib = build_fake_nvml(dir);
    let h100 = json!({"driver_version": "580.95.05", "cuda_driver_version": 13000,
                      "devices": [device("NVIDIA H100 80GB HBM3")]});
    let (out, v) = output_json(gpu_cli(dir, &lib, &h100, "tune").args([
        "tune",
        "--framework",
        "tch",
        "--device",
        "cuda",
        "--model",
        "vit_mini_patch4_32",
        "--precision",
        "fp32",
        "--batch-size",
        "16,64",
        "--objective",
        "energy",
        "--steps",
        "48",
        "--repeats",
        "2",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(v["ended"], "finished", "{v}");
    assert_eq!(v["winner"]["settings"]["batch_size"], 64, "{v}");
    assert_eq!(v["runner_up"]["settings"]["batch_size"], 16, "{v}");
    // Lower is better: the winner spends about a quarter of the runner-up's
    // joules per sample.
    let ratio = v["ratio"].as_f64().unwrap();
    assert!((0.15..0.4).contains(&ratio), "{ratio}: {v}");
    assert!(
        v["verdict"].as_str().unwrap().contains("energy per sample"),
        "{v}"
    );
    let joules = v["winner"]["value"].as_f64().unwrap();
    assert!(joules > 0.0 && joules.is_finite(), "{v}");

    let cpu = Scratch::new("fake-nvml-tune-cpu");
    let out = common::trainbench(&cpu.0)
        .args([
            "tune",
            "--framework",
            "tch",
            "--model",
            "resnet_mini",
            "--objective",
            "energy",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("on a GPU only"), "{}", text(&out));
}

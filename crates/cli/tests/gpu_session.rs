//! The GPU session's plan rehearsed on this CPU: through a kit built here
//! (as a lent GPU machine would run it), with real workers and the real timm
//! and Hugging Face peers, then folded into a results document; a budget too
//! short for the plan still leaves its outputs; no GPU and bad input are
//! said plainly.
#![allow(clippy::unwrap_used, reason = "tests")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::ssh::python;
use common::{output_json, real_worker, text, trainbench, Scratch, TRAINBENCH};
use serde_json::{json, Value};

fn results(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap()
}

fn item<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == id)
        .unwrap_or_else(|| panic!("{id} missing from {r}"))
}

/// The one folder the kit's run.sh wrote under `results`.
fn only_folder(results: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.pop().unwrap()
}

/// As when the kit is carried to another machine: the folder of libtorch
/// its workers were built against is not there, so a worker loads the
/// machine's own `torch/lib`, which run.sh names in LD_LIBRARY_PATH (and the
/// kit's home has no studio PyTorch environment to find it in).
fn as_if_carried_elsewhere(kit: &Path) {
    for w in std::fs::read_dir(kit.join("bin")).unwrap() {
        let worker = w.unwrap().path().join("trainbench-worker-tch");
        if worker.is_file() {
            let out = Command::new("patchelf")
                .args(["--set-rpath", "/nonexistent/built-elsewhere/torch/lib"])
                .arg(&worker)
                .output()
                .expect("patchelf (scripts/setup.sh --test installs it)");
            assert!(out.status.success(), "{}", text(&out));
        }
    }
}

/// The two items the planted record shows unmeasured ran first, the
/// cheaper first (allowances 30 and 35 s), and the log said why.
fn check_order(r: &Value, log: &str) {
    let order: Vec<&str> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(order[..2], ["resnet-folder", "gpt2-jax"], "{log}");
    assert!(
        log.contains("order: the 2 items never measured on cpu first"),
        "{log}"
    );
}

/// A record (the folder of sessions' results, as `gpu-session fold` keeps
/// them) with one earlier rehearsal in which every item of the plan but
/// `unmeasured` ran, on the "GPU" a rehearsal's order is matched by: `cpu`.
fn planted_record(dir: &Path, unmeasured: &[&str]) -> PathBuf {
    let (out, plan) =
        output_json(trainbench(dir).args(["gpu-session", "plan", "--rehearse", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    let results: Vec<Value> = plan["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let id = i["id"].as_str().unwrap();
            let status = if unmeasured.contains(&id) {
                "skipped"
            } else {
                "ran"
            };
            json!({"id": id, "title": i["title"], "status": status, "batch": 8})
        })
        .collect();
    let record = dir.join("record");
    std::fs::create_dir_all(&record).unwrap();
    let session = json!({"format": "trainbench-gpu-session", "studio_git_revision": "abc",
        "host": "vm", "session": {"started": "2026-11-26 12:00 UTC", "device": "cpu", "rehearse": true},
        "results": results});
    std::fs::write(
        record.join("2026-11-26-1200-cpu-gpu-session-results.json"),
        session.to_string(),
    )
    .unwrap();
    record
}

#[test]
fn the_whole_plan_rehearsed_through_a_kit_with_peers_then_folded() {
    let scratch = Scratch::new("gpu-session-kit");
    let kit = scratch.0.join("kit");
    // A record where every item but two ran before on this "GPU" (the
    // rehearsal's is `cpu`): the kit carries it, and the session measures
    // those two first.
    let record = planted_record(&scratch.0, &["gpt2-jax", "resnet-folder"]);
    // The kit takes the libtorch worker that matches this machine's torch.
    let out = Command::new(TRAINBENCH)
        .args(["kit", "build", "--tch"])
        .arg(real_worker())
        .arg("--measured")
        .arg(&record)
        .arg("-o")
        .arg(&kit)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(kit
        .join("share/trainbench/workers/python/trainbench_peers/__main__.py")
        .is_file());
    as_if_carried_elsewhere(&kit);
    let res = scratch.0.join("results");
    // As on a lent machine: the kit registers the machine's Python (here
    // the studio's PyTorch environment, with timm and transformers).
    // A budget no rehearsal nears (250 s alone, 890 s beside a second suite).
    let out = Command::new("bash")
        .arg(kit.join("run.sh"))
        .args(["gpu-session", "3000", "--rehearse"])
        .env("TRAINBENCH_PYTHON", python("pytorch"))
        .env("TRAINBENCH_RESULTS", &res)
        .env("OMP_NUM_THREADS", "1")
        .env_remove("TRAINBENCH_HOME")
        .env_remove("TRAINBENCH_DB")
        .env_remove("TRAINBENCH_WORKER_TCH")
        .output()
        .unwrap();
    let log = text(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    let dir = only_folder(&res);
    // At most eight files: what a lent machine gives back.
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "checks.json",
            "gpu-session.trainbench-session.json",
            "report.pdf",
            "results.json",
            "results.md",
            "session.log"
        ],
        "{log}"
    );
    let r = results(&dir);
    check_order(&r, &log);
    for id in [
        "vit-eager",
        "vit-timm",
        "vit-tch",
        "vit-eager-bf16",
        "vit-tch-bf16",
        "resnet-tch",
        "vit-eager-max",
        "vit-timm-max",
        "resnet-eager",
        "resnet-timm",
        "gpt2-eager",
        "gpt2-hf",
        "gpt2-hf-tanh",
        "vit-compile-max",
        "bert-eager",
        "resnet-folder",
        "vit-tune",
        "gpt2-tune",
    ] {
        assert_eq!(item(&r, id)["status"], "ran", "{id}: {}", item(&r, id));
    }
    // JAX is not in this Python: its items say so.
    let jax = item(&r, "vit-jax");
    assert_eq!(jax["status"], "skipped");
    assert!(
        jax["reason"]
            .as_str()
            .unwrap()
            .contains("jax is not installed"),
        "{jax}"
    );
    check_ratios(&r);
    check_searches(&r, &dir);
    check_activations(&r);
    // The batch search started at 8 and ran at the cap, 32; the peer and
    // torch.compile took the batch it found.
    assert_eq!(item(&r, "vit-eager-max")["batch"], 32);
    assert_eq!(item(&r, "vit-timm-max")["batch"], 32);
    assert_eq!(item(&r, "vit-compile-max")["batch"], 32);
    // Each studio run projected (rehearsing: to two threads of this CPU;
    // on a GPU: to the twin GPU, which a session there checks).
    let projected = &item(&r, "resnet-eager")["projected"][0];
    assert_eq!(projected["to"], "the same CPU, 2 threads", "{projected}");
    let measured = item(&r, "resnet-eager")["samples_per_s"].as_f64().unwrap();
    assert!(
        (projected["low"].as_f64().unwrap() - measured).abs() < 1e-6 * measured,
        "{projected}"
    );
    let md = std::fs::read_to_string(dir.join("results.md")).unwrap();
    assert!(
        md.contains("| vit-timm | vit_mini_patch4_32 fp32 b8, timm peer | ran | 8 |"),
        "{md}"
    );
    assert!(std::fs::read(dir.join("report.pdf"))
        .unwrap()
        .starts_with(b"%PDF"));

    fold_twice(&scratch.0, &dir);
}

/// Hugging Face's GPT-2 at its default activation, then with F.gelu's tanh
/// form: each peer says which it trained with.
fn check_activations(r: &Value) {
    for (id, activation) in [
        ("gpt2-hf", "gelu_new"),
        ("gpt2-hf-tanh", "gelu_pytorch_tanh"),
    ] {
        let peer = &item(r, id)["peer"];
        assert_eq!(peer["activation"], activation, "{id}: {peer}");
        assert!(
            peer["practice"].as_array().unwrap().iter().any(|p| p
                .as_str()
                .unwrap()
                .starts_with(&format!("activation {activation}: "))),
            "{id}: {peer}"
        );
    }
}

/// Every peer has the studio's parameter count and batch and a ratio studio
/// ÷ peer; every libtorch item the same as its PyTorch eager item and the
/// ratio tch ÷ eager.
fn check_ratios(r: &Value) {
    // Every peer has the studio's parameter count and batch, and a ratio.
    for (peer, studio) in [
        ("vit-timm", "vit-eager"),
        ("vit-timm-max", "vit-eager-max"),
        ("resnet-timm", "resnet-eager"),
        ("gpt2-hf", "gpt2-eager"),
        ("gpt2-hf-tanh", "gpt2-eager"),
    ] {
        let (p, s) = (item(r, peer), item(r, studio));
        assert_eq!(p["params"], s["params"], "{peer}");
        assert_eq!(p["batch"], s["batch"], "{peer}");
        let x = p["ratio"].as_f64().unwrap_or_else(|| panic!("{peer}: {p}"));
        let expected = s["samples_per_s"].as_f64().unwrap() / p["samples_per_s"].as_f64().unwrap();
        assert!(
            (x - expected).abs() < 1e-9,
            "{peer}: {x} against {expected}"
        );
    }
    // The libtorch worker beside PyTorch eager: the same parameters, batch
    // and precision, and the ratio tch ÷ eager.
    for (tch, eager) in [
        ("vit-tch", "vit-eager"),
        ("vit-tch-bf16", "vit-eager-bf16"),
        ("resnet-tch", "resnet-eager"),
    ] {
        let (t, e) = (item(r, tch), item(r, eager));
        assert_eq!(t["params"], e["params"], "{tch}");
        assert_eq!(t["batch"], e["batch"], "{tch}");
        assert_eq!(t["ratio_of"], format!("÷ {eager}"), "{t}");
        let x = t["ratio"].as_f64().unwrap_or_else(|| panic!("{tch}: {t}"));
        let expected = t["samples_per_s"].as_f64().unwrap() / e["samples_per_s"].as_f64().unwrap();
        assert!((x - expected).abs() < 1e-9, "{tch}: {x} against {expected}");
    }
}

/// The two searches: every candidate of the kit's frameworks (PyTorch and
/// the libtorch worker; JAX is not in its Python) ran, a winner was found,
/// and its rate is held against the fastest single configuration of the
/// same model, precision and size that ran before it in the session; the
/// session file carries both searches.
fn check_searches(r: &Value, dir: &Path) {
    for (id, candidates, singles) in [
        (
            "vit-tune",
            4,
            &["vit-eager", "vit-tch", "vit-eager-max", "vit-compile-max"][..],
        ),
        ("gpt2-tune", 2, &["gpt2-eager"][..]),
    ] {
        let t = item(r, id);
        let tune = &t["tune"];
        assert_eq!(tune["candidates"], candidates, "{id}: {t}");
        assert_eq!(tune["refused"], 0, "{id}: {t}");
        assert!(tune["winner"].is_string(), "{id}: {t}");
        let best = singles
            .iter()
            .map(|s| item(r, s))
            .max_by(|a, b| {
                let rate = |v: &Value| v["samples_per_s"].as_f64().unwrap();
                rate(a).total_cmp(&rate(b))
            })
            .unwrap();
        assert_eq!(tune["best_before"]["item"], best["id"], "{id}: {t}");
        assert_eq!(
            t["ratio_of"],
            format!(
                "÷ best single configuration, {} (this session)",
                best["id"].as_str().unwrap()
            )
        );
        let expected =
            t["samples_per_s"].as_f64().unwrap() / best["samples_per_s"].as_f64().unwrap();
        assert!(
            (t["ratio"].as_f64().unwrap() - expected).abs() < 1e-9,
            "{id}: {t}"
        );
        // Every probe and confirmation run is the session's; the winner's first.
        assert!(
            t["run_ids"].as_array().unwrap().len() > candidates,
            "{id}: {t}"
        );
        assert!(
            t["ratio_note"].as_str().unwrap().starts_with("search: "),
            "{t}"
        );
    }
    let file: Value = serde_json::from_slice(
        &std::fs::read(dir.join("gpu-session.trainbench-session.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(file["searches"].as_array().unwrap().len(), 2);
}

/// Every run id the results name, once.
fn stored_runs(r: &Value) -> usize {
    let mut ids: Vec<i64> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| {
            i["run_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len()
}

/// Folded into a results document with the session imported; not twice.
fn fold_twice(scratch: &Path, dir: &Path) {
    // Folded into a results document, the session imported.
    let doc = scratch.join("gpu-results.md");
    std::fs::write(&doc, "# GPU results\n").unwrap();
    let (out, folded) = output_json(
        trainbench(scratch)
            .args(["gpu-session", "fold", "--json", "--doc"])
            .arg(&doc)
            .arg(dir),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(folded["rows"], 25);
    // Twelve single runs and the searches' runs (as many as each needed).
    let runs = stored_runs(&results(dir));
    assert!(runs > 12 + 6, "{runs}");
    assert_eq!(folded["imported_runs"], runs);
    let written = std::fs::read_to_string(&doc).unwrap();
    assert!(written.starts_with("# GPU results\n\n## "), "{written}");
    assert!(written.contains("(CPU rehearsal)"));
    assert!(written.contains("timm ("), "{written}");
    assert!(
        written.contains("| pytorch (2.13.0) | resnet-eager: "),
        "{written}"
    );
    assert!(written.contains(" (÷ vit-eager) | ran"), "{written}");
    // timm's own ViT in the studio's harness, beside the studio's ViT and timm's loop.
    assert!(
        written.contains("vit-timm-harness: timm:vit_tiny_patch16_224"),
        "{written}"
    );
    // Not twice.
    let out = trainbench(scratch)
        .args(["gpu-session", "fold", "--doc"])
        .arg(&doc)
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already in"));
    assert_eq!(std::fs::read_to_string(&doc).unwrap(), written);
}

#[test]
fn a_budget_too_short_for_the_plan_still_writes_its_outputs() {
    let scratch = Scratch::new("gpu-session-short");
    let out_dir = scratch.0.join("out");
    // 25 s less the 6 s kept for the outputs: the first item (allowed 15 s)
    // starts; the batch search (75 s) and what follows cannot.
    let out = trainbench(&scratch.0)
        .args([
            "gpu-session",
            "--rehearse",
            "--framework",
            "pytorch",
            "--budget",
            "25",
            "--only",
            "vit-eager,vit-eager-max,vit-timm-max,gpt2-eager",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    let log = text(&out);
    let r = results(&out_dir);
    let first = item(&r, "vit-eager");
    assert!(
        first["status"] == "ran" || first["status"] == "cut",
        "{log}"
    );
    let search = item(&r, "vit-eager-max");
    assert_eq!(search["status"], "skipped", "{log}");
    assert!(
        search["reason"]
            .as_str()
            .unwrap()
            .contains("s left of the budget"),
        "{search}"
    );
    let peer = item(&r, "vit-timm-max");
    assert_eq!(peer["status"], "skipped");
    assert!(
        peer["reason"]
            .as_str()
            .unwrap()
            .contains("needs the batch found by vit-eager-max"),
        "{peer}"
    );
    let md = std::fs::read_to_string(out_dir.join("results.md")).unwrap();
    assert_eq!(md.matches("| skipped |").count(), 3, "{md}");
    let said = std::fs::read_to_string(out_dir.join("session.log")).unwrap();
    assert!(said.contains("gpu-session: done in"), "{said}");
    assert!(out_dir.join("checks.json").is_file() || first["status"] == "cut");
}

/// JAX beside a plain Flax loop (the kit's Python above has no JAX).
#[test]
fn jax_is_held_against_a_plain_flax_loop() {
    let scratch = Scratch::new("gpu-session-jax");
    let out_dir = scratch.0.join("out");
    let out = trainbench(&scratch.0)
        .args([
            "gpu-session",
            "--rehearse",
            "--framework",
            "jax",
            "--only",
            "vit-jax,vit-flax",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = results(&out_dir);
    let (studio, flax) = (item(&r, "vit-jax"), item(&r, "vit-flax"));
    assert_eq!(flax["status"], "ran", "{flax}");
    assert_eq!(flax["params"], studio["params"], "{flax}");
    assert_eq!(flax["peer"]["library"], "flax", "{flax}");
    assert!(flax["ratio"].as_f64().unwrap() > 0.0, "{flax}");
}

#[test]
fn no_gpu_and_bad_input_are_said_plainly() {
    let scratch = Scratch::new("gpu-session-input");
    let out = trainbench(&scratch.0)
        .args(["gpu-session", "--out"])
        .arg(scratch.0.join("none"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rehearse runs its plan on the CPU"));
    assert!(!scratch.0.join("none").exists());
    for (args, says) in [
        (vec!["--budget", "0"], "budget = 0 is not allowed"),
        (
            vec!["--only", "everything"],
            "only = everything is not allowed: expected item ids among vit-eager",
        ),
        (
            vec!["--framework", "tensorflow"],
            "framework = tensorflow is not allowed",
        ),
        (
            vec!["--measured", "/nonexistent/gpu-results"],
            "measured = /nonexistent/gpu-results is not allowed",
        ),
    ] {
        let out = trainbench(&scratch.0)
            .args(["gpu-session", "--rehearse"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out)
        );
    }
    // The plan's order on a GPU model the record has no rows for: as
    // written, with the row every GPU has first.
    let record = planted_record(&scratch.0, &["vit-jax"]);
    let (out, plan) = output_json(
        trainbench(&scratch.0)
            .args([
                "gpu-session",
                "plan",
                "--json",
                "--gpu",
                "NVIDIA H200",
                "--measured",
            ])
            .arg(&record),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(plan["items"][0]["id"], "vit-eager", "{plan}");
    assert!(
        plan["order"].as_str().unwrap().contains("as planned"),
        "{plan}"
    );
    // With a record but no GPU here and none named: which GPU's rows?
    let out = trainbench(&scratch.0)
        .args(["gpu-session", "plan", "--measured"])
        .arg(&record)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("gpu = (none) is not allowed"),
        "{}",
        text(&out)
    );
    // An item that fails is said, and the session goes on to its outputs.
    let out_dir = scratch.0.join("failing");
    let out = trainbench(&scratch.0)
        .args([
            "gpu-session",
            "--rehearse",
            "--framework",
            "pytorch@missing",
            "--only",
            "vit-eager,vit-timm",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = results(&out_dir);
    let failed = item(&r, "vit-eager");
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(
        failed["reason"].as_str().unwrap().contains("missing"),
        "{failed}"
    );
    assert_eq!(
        item(&r, "vit-timm")["reason"],
        "its studio run vit-eager failed"
    );
    assert!(out_dir.join("results.md").is_file() && out_dir.join("session.log").is_file());

    let out = trainbench(&scratch.0)
        .args(["gpu-session", "fold"])
        .arg(&scratch.0)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("dir = "),
        "{}",
        text(&out)
    );
}

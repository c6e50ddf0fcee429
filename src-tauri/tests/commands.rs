//! The desktop app's commands through Tauri's mock runtime and real IPC
//! requests: a real SQLite file, real tch workers training a tiny model on the
//! CPU, the real queue thread. Only the window is mocked (no webview here; the
//! real window is driven over WebDriver in `ui/e2e`).

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tauri::ipc::{Channel, InvokeResponseBody};
use trainbench_studio::queue::LiveUpdate;

use common::app::{assert_error, open_app, open_app_without_worker, request, scratch};

#[test]
fn wizard_choices_and_plans_use_the_runners_rules() {
    let dir = scratch("plan");
    let app = open_app(&dir);
    let info = app.ok("app_info", json!({}));
    assert_eq!(info["machine"]["gpus"], json!([]));
    assert!(info["machine"]["gpu_unavailable"]
        .as_str()
        .is_some_and(|s| s.contains("no NVIDIA GPU")));
    assert!(info["machine"]["cpu_cores"].as_u64().unwrap_or(0) >= 1);
    let vit = info["models"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["name"] == "vit_base_patch16_224"))
        .expect("ViT-B/16 in the catalogue")
        .clone();
    // timm's ViT-B/16 has 86.6 M parameters; FLOPs are forward + backward.
    let params = vit["param_count"].as_f64().unwrap_or(0.0);
    assert!((86.0e6..87.0e6).contains(&params), "{params}");
    assert!(vit["flops_per_sample"].as_f64().unwrap_or(0.0) > 3.0 * 17.0e9);
    let tch = &info["frameworks"][0];
    assert_eq!(tch["key"], "tch");
    assert_eq!(tch["installed"], true, "{tch}");

    // 2 models × 2 precisions × 2 repeats, one combination refused on the CPU.
    let plan = app.ok(
        "plan",
        json!({"request": request(json!({
            "model": ["resnet_mini", "vit_mini_patch4_32"],
            "precision": ["fp32", "amp-fp16"],
            "repeats": 2
        }))}),
    );
    assert_eq!(plan["repeats"], 2);
    let rejected = plan["rejected"].as_array().expect("rejected");
    assert!(!rejected.is_empty(), "{plan}");
    assert!(rejected.iter().all(|r| r["field"] == "precision"), "{plan}");
    assert_eq!(
        plan["runs"].as_u64(),
        Some(2 * plan["configurations"].as_array().map_or(0, Vec::len) as u64)
    );

    // A bad value in a field every combination shares.
    let plan = app.ok(
        "plan",
        json!({"request": request(json!({"batch_size": [0]}))}),
    );
    assert_eq!(plan["rejected"][0]["field"], "batch_size", "{plan}");
    let plan = app.ok(
        "plan",
        json!({"request": request(json!({"price": "No Such Cloud"}))}),
    );
    assert_eq!(plan["rejected"][0]["field"], "price");
    assert_eq!(plan["rejected"][0]["label"], serde_json::Value::Null);

    // Starting a sweep that cannot run stores nothing.
    let e = app.err(
        "start_sweep",
        json!({"request": request(json!({"precision": ["amp-fp16"]})), "skipRejected": false}),
    );
    assert_error(&e, "bad_input", &["precision"]);
    assert_eq!(
        e["field"], "precision",
        "the field at fault crosses typed: {e}"
    );
    let e = app.err(
        "start_sweep",
        json!({"request": request(json!({"price": "No Such Cloud"})), "skipRejected": true}),
    );
    assert_error(&e, "bad_input", &["price = No Such Cloud", "expected"]);
    assert_eq!(app.ok("list_runs", json!({}))["runs"], json!([]));

    // A malformed request names what is wrong (serde's error, as a string).
    assert!(app
        .call("plan", json!({"request": {"model": "x"}}))
        .is_err());
}

#[test]
fn a_sweep_runs_streams_progress_compares_and_is_saved() {
    let dir = scratch("sweep");
    let app = open_app(&dir);
    let started = app.ok(
        "start_sweep",
        json!({"request": request(json!({"precision": ["fp32", "amp-bf16"]})), "skipRejected": false}),
    );
    let ids: Vec<i64> = started["run_ids"]
        .as_array()
        .expect("run ids")
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    assert_eq!(ids.len(), 2);

    // Watch the first run through a channel, as the live view does.
    let raw: Arc<Mutex<Vec<Value>>> = Arc::default();
    let raw_sink = raw.clone();
    let channel = Channel::<LiveUpdate>::new(move |body| {
        if let InvokeResponseBody::Json(s) = body {
            if let Ok(v) = serde_json::from_str::<Value>(&s) {
                raw_sink.lock().expect("lock").push(v);
            }
        }
        Ok(())
    });
    let snapshot = app
        .studio()
        .queue
        .watch(ids[0], channel)
        .expect("the queue knows the run");
    assert_eq!(snapshot.run_id, ids[0]);
    app.wait_idle(Duration::from_secs(300));

    let raw = raw.lock().expect("lock").clone();
    assert!(!raw.is_empty(), "no progress reached the channel");
    let last = raw.last().expect("last update");
    assert_eq!(last["phase"], "finished", "{last}");
    assert_eq!(last["status"], "completed", "{last}");
    let points: usize = raw
        .iter()
        .map(|u| u["points"].as_array().map_or(0, Vec::len))
        .sum();
    // 24 steps in windows of 4 → 6 windows, each sent exactly once.
    assert_eq!(points, 6, "{raw:?}");
    // The live step count is each stored window's last step, as the CLI's
    // bar counts (one rule: core's Event::steps_finished); the run ends at
    // its total.
    let live_steps: Vec<u64> = raw
        .iter()
        .flat_map(|u| u["points"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["step"].as_u64())
        .collect();
    let stored = app.ok("run_detail", json!({"runId": ids[0]}));
    let stored_steps: Vec<u64> = stored["detail"]["windows"]
        .as_array()
        .expect("windows")
        .iter()
        .filter_map(|w| Some(w["first_step"].as_u64()? + w["steps"].as_u64()? - 1))
        .collect();
    assert_eq!(live_steps, stored_steps, "{raw:?}");
    assert_eq!(stored_steps.last(), Some(&24));
    assert_eq!(
        (last["step"].as_u64(), last["total_steps"].as_u64()),
        (Some(24), Some(24)),
        "{last}"
    );
    let telemetry: usize = raw
        .iter()
        .map(|u| u["telemetry"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(telemetry > 0, "CPU telemetry (RSS) expected without a GPU");
    assert!(raw
        .iter()
        .any(|u| u["steady_samples_per_s"].as_f64().is_some_and(|t| t > 0.0)));

    // Runs table: both completed, with headline numbers.
    let runs = app.ok("list_runs", json!({}))["runs"].take();
    let runs = runs.as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["status"], "completed", "{r}");
        assert!(r["throughput"].as_f64().is_some_and(|t| t > 0.0), "{r}");
        assert!(
            r["peak_memory_bytes"].as_u64().is_some_and(|m| m > 0),
            "{r}"
        );
    }
    let detail = app.ok("run_detail", json!({"runId": ids[1]}));
    assert_eq!(detail["detail"]["precision"], "amp-bf16");
    assert!(detail["detail"]["provenance"]["cpu_cores"]
        .as_u64()
        .is_some());
    assert_eq!(
        detail["detail"]["windows"].as_array().map(Vec::len),
        Some(6)
    );

    // Compare the two against the first.
    let view = app.ok(
        "compare",
        json!({"runIds": ids, "grouping": "runs", "baseline": ids[0]}),
    );
    let entries = view["comparison"]["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 2);
    assert_eq!(view["colours"].as_array().map(Vec::len), Some(2));
    assert_eq!(view["comparison"]["baseline"], 0);
    assert!(entries[1]["metrics"]["throughput"]["delta_vs_baseline"]
        .as_f64()
        .is_some());
    assert_eq!(view["throughput_curves"].as_array().map(Vec::len), Some(2));
    let decisions = view["comparison"]["decisions"]
        .as_array()
        .expect("decisions");
    assert_eq!(decisions.len(), 5);
    let e = app.err(
        "compare",
        json!({"runIds": [ids[0]], "grouping": "runs", "baseline": null}),
    );
    assert_error(&e, "bad_input", &["at least 2"]);

    // Save, rename, reopen; then export and import into a second studio.
    let settings = json!({"grouping": "runs", "charts": ["throughput", "loss_over_time"], "hidden_series": []});
    let e = app.err(
        "save_session",
        json!({"name": "  ", "runIds": ids, "baseline": ids[0], "settings": settings}),
    );
    assert_error(&e, "bad_input", &["name"]);
    let saved = app.ok(
        "save_session",
        json!({"name": "fp32 vs bf16", "runIds": ids, "baseline": ids[0], "settings": settings}),
    );
    let sid = saved["id"].as_i64().expect("session id");
    app.ok(
        "rename_session",
        json!({"id": sid, "name": "CPU precisions"}),
    );
    let opened = app.ok("open_session", json!({"id": sid}));
    assert_eq!(opened["name"], "CPU precisions");
    assert_eq!(
        opened["settings"]["charts"],
        json!(["throughput", "loss_over_time"])
    );
    let e = app.err("open_session", json!({"id": 9999}));
    assert_error(&e, "not_found", &["9999"]);

    let pdf = dir.join("report.pdf");
    let w = app.ok(
        "export_pdf",
        json!({"selection": {"session_id": sid, "run_ids": [], "grouping": "runs", "baseline": null, "settings": null}, "path": pdf}),
    );
    assert!(w["bytes"].as_u64().unwrap_or(0) > 10_000, "{w}");
    assert!(std::fs::read(&pdf).expect("pdf").starts_with(b"%PDF-"));
    let csv = dir.join("runs.csv");
    app.ok("export_csv", json!({"runIds": [], "path": csv}));
    assert_eq!(
        std::fs::read_to_string(&csv).expect("csv").lines().count(),
        3
    );
    let e = app.err(
        "export_csv",
        json!({"runIds": [], "path": dir.join("missing/runs.csv")}),
    );
    assert_error(&e, "bad_input", &["output", "does not exist"]);
    let file = dir.join("session.json");
    app.ok("export_session", json!({"id": sid, "path": file}));

    let other = open_app(&scratch("import"));
    let broken = other.dir.join("broken.json");
    let text = std::fs::read_to_string(&file).expect("session file");
    std::fs::write(&broken, &text.as_bytes()[..text.len() / 2]).expect("write");
    let e = other.err("import_session", json!({"path": broken}));
    assert_error(&e, "bad_input", &["broken.json"]);
    assert_eq!(other.ok("list_sessions", json!({})), json!([]));
    assert_eq!(other.ok("list_runs", json!({}))["runs"], json!([]));
    let imported = other.ok("import_session", json!({"path": file}));
    assert_eq!(imported["session_created"], true);
    assert_eq!(imported["runs_imported"], 2);
    let again = other.ok("import_session", json!({"path": file}));
    assert_eq!(again["session_created"], false);
    let runs = other.ok("list_runs", json!({}))["runs"].take();
    assert_eq!(runs.as_array().map(Vec::len), Some(2));
    assert!(runs[0]["imported_from"].is_string(), "{runs}");

    // Deleting asks in the UI; here: a session, then runs.
    app.ok("delete_session", json!({"id": sid}));
    assert_eq!(app.ok("list_sessions", json!({})), json!([]));
    assert_eq!(app.ok("delete_runs", json!({"runIds": [ids[0]]})), 1);
    let runs = app.ok("list_runs", json!({}))["runs"].take();
    assert_eq!(runs.as_array().map(Vec::len), Some(1));
}

#[test]
fn runs_can_be_cancelled_queued_or_running() {
    let dir = scratch("cancel");
    let app = open_app(&dir);
    let started = app.ok(
        "start_sweep",
        json!({"request": request(json!({"steps": 100000, "repeats": 2})), "skipRejected": false}),
    );
    let ids: Vec<i64> = started["run_ids"]
        .as_array()
        .expect("ids")
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    assert_eq!(ids.len(), 2);
    // The second is still queued: cancelling it now means it never starts.
    app.ok("cancel_run", json!({"runId": ids[1]}));
    // Wait until the first trains, then cancel it.
    let start = Instant::now();
    loop {
        let q = app.ok("queue_entries", json!({}));
        let first = q
            .as_array()
            .and_then(|q| q.iter().find(|e| e["run_id"] == ids[0]).cloned())
            .expect("queued");
        if first["phase"] == "training" && first["step"].as_u64().unwrap_or(0) > 0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "never started training: {q}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    app.ok("cancel_run", json!({"runId": ids[0]}));
    app.wait_idle(Duration::from_secs(60));
    let runs = app.ok("list_runs", json!({}))["runs"].take();
    for r in runs.as_array().expect("runs") {
        assert_eq!(r["status"], "cancelled", "{r}");
    }
    let e = app.err("cancel_run", json!({"runId": ids[0]}));
    assert_error(&e, "not_found", &["not queued or running"]);

    // Closing the window with runs unfinished: the UI asks, then `quit`
    // cancels everything and returns once each run is stored.
    let started = app.ok(
        "start_sweep",
        json!({"request": request(json!({"steps": 100000, "repeats": 2})), "skipRejected": false}),
    );
    assert_eq!(app.ok("unfinished_runs", json!({})), 2);
    app.ok("quit", json!({}));
    assert_eq!(app.ok("unfinished_runs", json!({})), 0);
    for id in started["run_ids"].as_array().expect("ids") {
        let d = app.ok("run_detail", json!({"runId": id}));
        assert_eq!(d["detail"]["status"], "cancelled", "{d}");
    }
}

#[test]
fn settings_refuse_bad_values_and_keep_what_was_there() {
    let dir = scratch("settings");
    let app = open_app(&dir);
    // Remote hosts: refused before anything connects, naming the field.
    let host = |name: &str, url: &str| json!({"request": {"name": name, "url": url, "pythons": [], "env": [], "slurm": false, "partition": null}});
    assert_error(
        &app.err("add_host", host("gpu1", "gpu1.example.org:22")),
        "bad_input",
        &["url = gpu1.example.org:22 is not allowed", "ssh://"],
    );
    assert_error(
        &app.err("add_host", host("no spaces", "ssh://gpu1")),
        "bad_input",
        &["name = \"no spaces\" is not allowed"],
    );
    assert_error(
        &app.err("remove_host", json!({"name": "nowhere-host"})),
        "bad_input",
        &["host = nowhere-host is not allowed"],
    );
    let e = app.err(
        "plan",
        json!({"request": request(json!({"host": "nowhere-host"}))}),
    );
    assert_error(&e, "bad_input", &["host = nowhere-host is not allowed"]);
    let before = app.ok("settings", json!({}));
    let e = app.err("set_database", json!({"path": dir}));
    assert_error(&e, "bad_input", &["database", "not a folder"]);
    assert_eq!(app.ok("settings", json!({})), before);
    let e = app.err(
        "set_database",
        json!({"path": "/proc/no-such-dir/x.sqlite"}),
    );
    assert_eq!(e["code"], "store", "{e}");
    assert_eq!(app.ok("settings", json!({})), before);

    let other = dir.join("other.sqlite");
    let after = app.ok("set_database", json!({"path": other}));
    assert_eq!(after["database"], other.display().to_string());
    let saved: Value =
        serde_json::from_slice(&std::fs::read(dir.join("studio.json")).expect("settings file"))
            .expect("settings JSON");
    assert_eq!(saved["database"], other.display().to_string());
    assert_eq!(
        app.ok("set_theme", json!({"theme": "dark"}))["theme"],
        "dark"
    );
    assert!(app.call("set_theme", json!({"theme": "purple"})).is_err());

    let row = json!({"offering": "Test Cloud 1x L4", "devices": 1, "device": "NVIDIA L4",
        "usd_per_hour": 0.8, "usd_per_device_hour": 0.8, "as_of": "2026-11-01", "source": "https://example.com/pricing"});
    let prices = app.ok("save_price", json!({"row": row}));
    assert!(prices.as_array().is_some_and(|p| p
        .iter()
        .any(|p| p["row"]["offering"] == "Test Cloud 1x L4" && p["by_user"] == true)));
    let mut bad = row.clone();
    bad["usd_per_hour"] = json!(-1.0);
    assert_error(
        &app.err("save_price", json!({"row": bad})),
        "bad_input",
        &["usd_per_hour = -1", "above 0"],
    );
    let mut bad = row.clone();
    bad["as_of"] = json!("last week");
    assert_error(
        &app.err("save_price", json!({"row": bad})),
        "bad_input",
        &["as_of", "YYYY-MM-DD"],
    );
    // The CLI's rules are the same (core's PriceRow::validate): a month is a
    // date, a zero price is not a price.
    let mut month = row.clone();
    month["as_of"] = json!("2026-11");
    assert!(app.ok("save_price", json!({"row": month})).is_array());
    let mut free = row.clone();
    free["usd_per_device_hour"] = json!(0.0);
    assert_error(
        &app.err("save_price", json!({"row": free})),
        "bad_input",
        &["usd_per_device_hour = 0", "above 0"],
    );
}

/// A person's tiny PyTorch model file, and one whose function raises.
const OWN_MODEL: &str = r#"
from torch import nn


def build():
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5)
    )


def broken():
    raise RuntimeError("the layer sizes do not fit")
"#;

/// The trainable parameters PyTorch itself counts on what `build()` returns,
/// in the studio's PyTorch environment.
fn pytorch_counts(dir: &std::path::Path) -> u64 {
    let env = trainbench_app::envs::resolve(trainbench_core::Framework::Pytorch, None)
        .expect("the PyTorch environment");
    let out = std::process::Command::new(&env.python)
        .current_dir(dir)
        .env("OMP_NUM_THREADS", "1")
        .args([
            "-c",
            "import tiny; print(sum(p.numel() for p in tiny.build().parameters() if p.requires_grad))",
        ])
        .output()
        .expect("python runs");
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{text} {}", String::from_utf8_lossy(&out.stderr)))
}

/// The wizard's "Your model": library names found as a person types, and a
/// model file built by the PyTorch worker and counted when they ask.
#[test]
fn own_models_are_searched_and_described_through_the_commands() {
    let dir = scratch("own-model");
    let app = open_app_without_worker(&dir);
    let found = app.ok("search_models", json!({"text": "resnet"}));
    let has = |list: &str, name: &str| {
        found[list]
            .as_array()
            .is_some_and(|l| l.iter().any(|n| n == name))
    };
    assert!(has("timm", "timm:resnet18"), "{found}");
    assert!(has("hf", "hf:resnet"), "{found}");
    assert!(has("keras", "keras:ResNet50"), "{found}");
    assert!(
        found["builtin"]
            .as_array()
            .is_some_and(|l| l.iter().any(|m| m["name"] == "resnet_mini")),
        "{found}"
    );
    assert_eq!(found["libraries_note"], Value::Null, "{found}");

    std::fs::write(dir.join("tiny.py"), OWN_MODEL).expect("model file");
    let file = dir.join("tiny.py").display().to_string();
    let own = |function: &str, extra: Value| {
        let mut r = request(json!({
            "model": [format!("{file}:{function}")], "framework": ["pytorch"],
            "input_shape": "3x8x8", "num_classes": 5
        }));
        if let (Some(r), Some(e)) = (r.as_object_mut(), extra.as_object()) {
            r.extend(e.clone());
        }
        json!({ "request": r })
    };
    // The wizard's whole request: settings that do not shape the model (a
    // GPU precision, a batch search, two devices) do not stop the check.
    let d = app.ok(
        "describe_model",
        own(
            "build",
            json!({"precision": ["amp-fp16"], "batch_size": [], "batch_max": true, "devices": [2]}),
        ),
    );
    // 3·4·9 + 4 and 4·5 + 5, as PyTorch counts them.
    assert_eq!(d["param_count"], json!(137), "{d}");
    assert_eq!(d["param_count"], json!(pytorch_counts(&dir)), "{d}");
    assert_eq!(d["framework"], "pytorch");
    assert_eq!(d["trained_as"], "image");
    assert_eq!(d["input"], json!([3, 8, 8]), "{d}");
    assert!(d["flops_per_sample"].as_f64().unwrap_or(0.0) > 0.0, "{d}");
    assert!(
        d["flops_method"]
            .as_str()
            .is_some_and(|m| m.contains("FlopCounterMode")),
        "{d}"
    );

    // Added, the reference is planned like a catalogue model (the file read
    // and hashed, not run); a file that is not there is named.
    let plan = app.ok("plan", own("build", json!({})));
    assert_eq!(plan["rejected"], json!([]), "{plan}");
    assert_eq!(plan["runs"], 1, "{plan}");
    let plan = app.ok(
        "plan",
        own("build", json!({"model": ["/nowhere/gone.py:build"]})),
    );
    assert_eq!(plan["rejected"][0]["field"], "model", "{plan}");

    // The person's error is theirs: the file named, their traceback.
    let e = app.err("describe_model", own("broken", json!({})));
    assert_error(
        &e,
        "bad_input",
        &[
            "tiny.py:broken",
            "Traceback",
            "in broken",
            "RuntimeError: the layer sizes do not fit",
        ],
    );
    assert_eq!(e["field"], "model", "{e}");
    // What is missing is named before anything runs.
    let e = app.err("describe_model", own("build", json!({"input_shape": null})));
    assert_eq!(e["field"], "input_shape", "{e}");
    let e = app.err(
        "describe_model",
        own("build", json!({"input_shape": "3x8x9"})),
    );
    assert_error(&e, "bad_input", &["input_shape = 3x8x9", "square"]);
}

//! A sweep over environment variables (`--env`): each alternative is its
//! own configuration (key and label), the worker really runs with it (XLA
//! writes what `XLA_FLAGS` asks for) and states what it saw in its hello;
//! variables outside the frameworks' families are refused naming the field,
//! before anything is stored.

mod common;

use common::{output_json, text, trainbench, Db};
use serde_json::Value;

fn runs(db: &Db) -> Vec<Value> {
    let (_, v) = output_json(trainbench(db.dir()).args(["runs", "--json"]));
    v["runs"].as_array().cloned().unwrap_or_default()
}

fn seen(db: &Db, id: i64) -> Vec<String> {
    let (out, v) = output_json(trainbench(db.dir()).args(["show", &id.to_string(), "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    v["hello"]["settings_env"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|p| {
                    format!(
                        "{}={}",
                        p[0].as_str().unwrap_or(""),
                        p[1].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn two_settings_are_two_configurations_and_each_run_states_what_it_saw() {
    let db = Db::new("settings-sweep");
    let (out, v) = output_json(
        trainbench(db.dir())
            .args([
                "run",
                "--framework",
                "pytorch,tch",
                "--model",
                "resnet_mini",
            ])
            .args(["--steps", "4", "--batch-size", "4", "--window-steps", "2"])
            .args(["--env", "TORCH_CPP_LOG_LEVEL=ERROR; XLA_FLAGS=--a=1 --b=2"])
            .args(["--env", "default", "--json"])
            // Inherited from the caller, not set by the run: stated too.
            .env("TF_CPP_MIN_LOG_LEVEL", "2")
            // Terraform's, not TensorFlow's: never recorded.
            .env("TF_VAR_secret", "do-not-record"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let listed = v["runs"].as_array().unwrap();
    assert_eq!(listed.len(), 4, "{v}");
    let stored = runs(&db);
    let labels: std::collections::BTreeSet<&str> = stored
        .iter()
        .map(|r| r["configuration"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels.len(),
        4,
        "every alternative is its own configuration: {labels:?}"
    );
    // Compared by configuration: four entries, not two with two runs each.
    let ids: Vec<String> = stored.iter().map(|r| r["id"].to_string()).collect();
    let (out, c) = output_json(
        trainbench(db.dir())
            .arg("compare")
            .args(&ids)
            .args(["--by-config", "--json"]),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        c["comparison"]["entries"].as_array().map(Vec::len),
        Some(4),
        "{c}"
    );
    for r in &stored {
        let id = r["id"].as_i64().unwrap();
        let label = r["configuration"].as_str().unwrap_or_default();
        let saw = seen(&db, id);
        assert!(
            saw.contains(&"TF_CPP_MIN_LOG_LEVEL=2".to_owned()),
            "#{id}: {saw:?}"
        );
        assert!(
            saw.iter().all(|s| !s.starts_with("TF_VAR_")),
            "#{id}: {saw:?}"
        );
        if r["env"]["TORCH_CPP_LOG_LEVEL"] == "ERROR" {
            assert!(
                label.contains("TORCH_CPP_LOG_LEVEL=ERROR XLA_FLAGS=--a=1 --b=2"),
                "{label}"
            );
            assert!(
                saw.contains(&"TORCH_CPP_LOG_LEVEL=ERROR".to_owned()),
                "#{id}: {saw:?}"
            );
            assert!(
                saw.contains(&"XLA_FLAGS=--a=1 --b=2".to_owned()),
                "#{id}: {saw:?}"
            );
        } else {
            assert!(r["env"].as_object().is_some_and(|e| e.is_empty()), "{r}");
            assert!(!label.contains("XLA_FLAGS"), "{label}");
            assert!(
                saw.iter().all(|s| !s.starts_with("XLA_FLAGS")),
                "#{id}: {saw:?}"
            );
        }
    }
    // `show` says both: what the run set and what the worker saw.
    let first = stored
        .iter()
        .find(|r| r["env"]["TORCH_CPP_LOG_LEVEL"] == "ERROR")
        .unwrap()["id"]
        .to_string();
    let out = trainbench(db.dir())
        .args(["show", &first])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("variables set:     TORCH_CPP_LOG_LEVEL=ERROR XLA_FLAGS=--a=1 --b=2"),
        "{shown}"
    );
    assert!(shown.contains("worker saw:        "), "{shown}");
}

#[test]
fn xla_really_receives_the_flags_the_run_sets() {
    // A flag XLA does not know stops it at start ("Unknown flags in
    // XLA_FLAGS"): proof that the run's XLA_FLAGS reach XLA, without a flag
    // that writes files (those are refused).
    let db = Db::new("settings-xla");
    let (out, v) = output_json(
        trainbench(db.dir())
            .args(["run", "--framework", "jax", "--model", "resnet_mini"])
            .args(["--steps", "2", "--batch-size", "4", "--window-steps", "1"])
            .args(["--env", "XLA_FLAGS=--xla_no_such_flag_for_this_test=1"])
            .arg("--json"),
    );
    assert_ne!(out.status.code(), Some(2), "refused: {}", text(&out));
    assert_eq!(v["runs"][0]["status"], "failed", "{v}");
    let id = v["runs"][0]["id"].to_string();
    let (_, shown) = output_json(trainbench(db.dir()).args(["show", &id, "--json"]));
    assert!(
        shown.to_string().contains("xla_no_such_flag_for_this_test"),
        "XLA did not name the flag: {shown}"
    );
}

#[test]
fn variables_outside_the_frameworks_families_or_that_load_code_or_take_a_place_are_refused() {
    let db = Db::new("settings-refused");
    for (alt, says) in [
        ("LD_PRELOAD=/tmp/evil.so", "frameworks' own families"),
        ("PYTHONSTARTUP=/tmp/evil.py", "frameworks' own families"),
        ("OMP_NUM_THREADS=4", "threads"),
        ("XLA_FLAGS", "NAME=VALUE"),
        (
            "NCCL_NET_PLUGIN=libevil.so",
            "NCCL loads the library it names",
        ),
        ("TORCH_LOGS_OUT=log.txt", "load code or write files"),
        ("TORCHINDUCTOR_CACHE_DIR=cache", "takes a place"),
        (
            "XLA_FLAGS=--xla_dump_to=dump",
            "compiler flag that takes a place",
        ),
        ("PYTORCH_CUDA_ALLOC_CONF=/tmp/x", "not a path"),
        ("TF_ENABLE_ONEDNN_OPTS=0\u{202e}1", "bidirectional"),
    ] {
        let (out, v) = output_json(
            trainbench(db.dir())
                .args(["run", "--model", "resnet_mini", "--steps", "2", "--json"])
                .args(["--env", alt]),
        );
        assert_eq!(out.status.code(), Some(2), "{alt}: {}", text(&out));
        assert_eq!(v["error"]["field"], "env", "{alt}: {v}");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{alt}: {message}");
    }
    assert!(runs(&db).is_empty(), "nothing was stored");
}

#[test]
fn a_thread_count_sweep_is_one_configuration_per_count() {
    let db = Db::new("settings-threads");
    let (out, _) = output_json(
        trainbench(db.dir())
            .args(["run", "--framework", "tch", "--model", "resnet_mini"])
            .args(["--steps", "4", "--batch-size", "4", "--window-steps", "2"])
            .args(["--threads", "1,2", "--json"]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stored = runs(&db);
    assert_eq!(stored.len(), 2, "{stored:?}");
    for r in &stored {
        let id = r["id"].as_i64().unwrap();
        let label = r["configuration"].as_str().unwrap_or_default();
        let (_, shown) =
            output_json(trainbench(db.dir()).args(["show", &id.to_string(), "--json"]));
        let threads = shown["hello"]["threads"].as_u64().unwrap();
        let words = if threads == 1 {
            "1 thread"
        } else {
            "2 threads"
        };
        assert!(
            label.ends_with(words),
            "#{id} trained with {threads}: {label}"
        );
    }
    let (out, v) = output_json(
        trainbench(db.dir())
            .args(["run", "--model", "resnet_mini", "--steps", "2", "--json"])
            .args(["--threads", "1,0"]),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "threads", "{v}");
}

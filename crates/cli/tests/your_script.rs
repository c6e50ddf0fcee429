//! A person's own training loop (`run --script PATH.py -- ARGS`) through the
//! real CLI, the studio's PyTorch and JAX environments and a real SQLite
//! file, on the CPU: the script, with `import trainbench` and a call after
//! each step, runs alone as before; run by the studio it reports windows,
//! evaluations and its parameter count; its arguments are a sweep axis; a
//! step limit ends it; what it gets wrong is a failed run with its own
//! traceback; run again after it changed, it is refused; what cannot run is
//! refused before anything is queued.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use serde_json::{json, Value};

#[path = "common/mod.rs"]
mod common;

use common::{output_json, text, trainbench, Scratch};
use trainbench_app::envs;

/// A plain PyTorch loop with the three added lines; `--fail-at N` raises.
const TORCH_SCRIPT: &str = r#"
import argparse

import torch
from torch import nn

import trainbench

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=31)
p.add_argument("--lr", type=float, default=1e-2)
p.add_argument("--fail-at", type=int, default=0)
args = p.parse_args()

torch.manual_seed(0)
# 16*32 + 32 + 32*4 + 4 = 676 parameters.
model = trainbench.model(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)))
opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))
print("the script prints to its stdout as it always did")
for step in range(args.steps):
    if step + 1 == args.fail_at:
        raise ValueError(f"the script's own failure at step {step + 1}")
    i = (step * 8) % 64
    loss = nn.functional.cross_entropy(model(x[i : i + 8]), y[i : i + 8])
    opt.zero_grad()
    loss.backward()
    opt.step()
    trainbench.step(samples=8, loss=loss, lr=args.lr)
with torch.no_grad():
    accuracy = (model(x).argmax(1) == y).float().mean().item()
trainbench.evaluate(accuracy=accuracy, samples=64)
print(f"done: accuracy {accuracy:.3f}")
"#;

/// A JAX loop: parameters as a pytree, jitted step.
const JAX_SCRIPT: &str = r#"
import jax
import jax.numpy as jnp

import trainbench

params = {"w": jnp.zeros((8, 3)), "b": jnp.zeros(3)}  # 27 parameters
trainbench.model(params)
x = jax.random.normal(jax.random.PRNGKey(0), (32, 8))
y = jnp.arange(32) % 3


@jax.jit
def step(p):
    def loss_fn(p):
        logits = x @ p["w"] + p["b"]
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(32), y])

    loss, g = jax.value_and_grad(loss_fn)(p)
    return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), loss


for _ in range(21):
    params, loss = step(params)
    trainbench.step(samples=32, loss=loss)
"#;

const NEVER_REPORTS: &str = "print('a loop without trainbench.step')\n";

fn scratch(tag: &str) -> Scratch {
    let dir = Scratch::new(tag);
    std::fs::write(dir.0.join("train.py"), TORCH_SCRIPT).unwrap();
    std::fs::write(dir.0.join("train_jax.py"), JAX_SCRIPT).unwrap();
    std::fs::write(dir.0.join("silent.py"), NEVER_REPORTS).unwrap();
    dir
}

fn run(dir: &Scratch, args: &[&str]) -> (std::process::Output, Value) {
    output_json(
        trainbench(&dir.0)
            .current_dir(&dir.0)
            .args(["run", "--json"])
            .args(args),
    )
}

fn details(dir: &Scratch, id: &Value) -> Value {
    output_json(trainbench(&dir.0).args(["show", &id.to_string(), "--json"])).1
}

fn windows(dir: &Scratch, id: &Value) -> Vec<(i64, i64, Option<f64>)> {
    let db = rusqlite::Connection::open(dir.0.join("studio.sqlite")).unwrap();
    let mut stmt = db
        .prepare("SELECT steps, samples, lr FROM windows WHERE run_id = ?1 ORDER BY idx")
        .unwrap();
    stmt.query_map([id.as_i64().unwrap()], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

#[test]
fn a_pytorch_script_runs_alone_as_before_and_reports_its_steps_to_the_studio() {
    let dir = scratch("script-torch");
    // Alone: the calls do nothing; the script runs to its end.
    let python = envs::resolve("pytorch".parse().unwrap(), None)
        .unwrap()
        .python;
    let alone = std::process::Command::new(python)
        .arg(dir.0.join("train.py"))
        .args(["--steps", "3"])
        .env("PYTHONPATH", envs::package_dir())
        .env("OMP_NUM_THREADS", "1")
        .output()
        .unwrap();
    assert!(alone.status.success(), "{}", text(&alone));
    assert!(String::from_utf8_lossy(&alone.stdout).contains("done: accuracy"));

    // Run by the studio: 31 steps, windows of 5 after the first step.
    let (out, v) = run(&dir, &["--script", "train.py", "--window-steps", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let id = &v["runs"][0]["id"];
    let d = details(&dir, id);
    assert_eq!(d["status"], "completed", "{d}");
    assert_eq!(d["param_count"], json!(676), "{d}");
    let absolute = format!("script:{}", dir.0.join("train.py").display());
    assert_eq!(d["spec"]["model"], json!(absolute), "{d}");
    assert_eq!(
        d["model_file"]["kept_bytes"],
        json!(TORCH_SCRIPT.len()),
        "{d}"
    );
    assert_eq!(d["hello"]["batch_size"], json!(8), "{d}");
    let w = windows(&dir, id);
    assert_eq!(w.len(), 6, "steps 2–31 in windows of 5: {w:?}");
    assert!(
        w.iter()
            .all(|&(s, n, lr)| s == 5 && n == 40 && lr == Some(1e-2)),
        "{w:?}"
    );
    assert!(d["throughput_samples_per_s"].as_f64().unwrap() > 0.0, "{d}");
    assert_eq!(
        d["batch_size"],
        json!(8),
        "the batch its first step trained on: {d}"
    );
    assert!(d["best_accuracy"].as_f64().unwrap() >= 0.0, "{d}");

    // Arguments are a sweep axis; --steps ends the script early.
    let (out, v) = run(
        &dir,
        &[
            "--script",
            "train.py",
            "--window-steps",
            "5",
            "--steps",
            "11",
            "--script-args",
            "--lr 1e-3",
            "--script-args",
            "--lr 3e-3",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{v}");
    for (r, (lr, given)) in runs.iter().zip([(1e-3, "1e-3"), (3e-3, "3e-3")]) {
        let d = details(&dir, &r["id"]);
        assert_eq!(d["spec"]["script_args"], json!(["--lr", given]), "{d}");
        assert_eq!(
            d["configuration"],
            json!(format!("pytorch train.py --lr {given}")),
            "{d}"
        );
        assert_eq!(
            d["epoch_time_s"],
            Value::Null,
            "the script's data has no size the studio knows: {d}"
        );
        let w = windows(&dir, &r["id"]);
        assert_eq!(
            w.len(),
            2,
            "11 steps: the first, then two windows of 5: {w:?}"
        );
        assert!(w.iter().all(|x| x.2 == Some(lr)), "{w:?}");
    }
}

#[test]
fn a_jax_script_reports_its_steps_and_its_parameter_tree() {
    let dir = scratch("script-jax");
    let (out, v) = run(
        &dir,
        &[
            "--script",
            "train_jax.py",
            "--framework",
            "jax",
            "--window-steps",
            "4",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let id = &v["runs"][0]["id"];
    let d = details(&dir, id);
    assert_eq!(d["status"], "completed", "{d}");
    assert_eq!(d["param_count"], json!(27), "{d}");
    assert_eq!(d["framework"], json!("jax"), "{d}");
    let w = windows(&dir, id);
    assert_eq!(w.len(), 5, "steps 2–21 in windows of 4: {w:?}");
    assert!(
        w.iter()
            .all(|&(s, n, lr)| s == 4 && n == 128 && lr.is_none()),
        "{w:?}"
    );

    // What the script sets itself is not shown as the harness's defaults.
    let sql = format!(
        "SELECT precision, compile, parallel, data, batch_size FROM q_runs WHERE run_id = {id}"
    );
    let (out, q) = output_json(trainbench(&dir.0).args(["query", &sql, "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        q["rows"][0],
        json!([null, null, null, null, 32]),
        "none of the script's own settings, and the batch its first step trained on: {q}"
    );
    let out = trainbench(&dir.0)
        .args(["show", &id.to_string()])
        .output()
        .expect("show");
    let shown = text(&out);
    assert!(
        shown.contains(
            "train_jax.py (precision, compile mode and data as the script sets them) batch 32"
        ),
        "{shown}"
    );
}

#[test]
fn what_a_script_gets_wrong_is_a_failed_run_and_what_cannot_run_is_refused() {
    let dir = scratch("script-wrong");
    let (out, v) = run(&dir, &["--script", "train.py", "--", "--fail-at", "4"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let d = details(&dir, &v["runs"][0]["id"]);
    assert_eq!(d["status"], "failed", "{d}");
    let reason = d["status_reason"].as_str().unwrap_or_default().to_owned() + &d.to_string();
    for needed in [
        "train.py raised ValueError",
        "the script's own failure at step 4",
        "train.py\\\", line ",
    ] {
        assert!(reason.contains(needed), "{needed}: {d}");
    }

    let (out, v) = run(&dir, &["--script", "silent.py"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let d = details(&dir, &v["runs"][0]["id"]);
    assert!(
        d.to_string().contains("never called trainbench.step"),
        "{d}"
    );

    // Run again after the script changed: refused, naming it, unless allowed.
    let mut changed = TORCH_SCRIPT.to_owned();
    changed.push_str("# edited after the run\n");
    std::fs::write(dir.0.join("train.py"), changed).unwrap();
    let (out, v) = output_json(trainbench(&dir.0).args(["rerun", "1", "--json"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], json!("model"), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("changed since run 1"),
        "{v}"
    );

    // Refused before anything is queued, naming the field.
    for (args, field) in [
        (
            vec!["--script", "train.py", "--batch-size", "8"],
            "batch_size",
        ),
        (
            vec!["--script", "train.py", "--precision", "amp-bf16"],
            "precision",
        ),
        (
            vec!["--script", "train.py", "--framework", "tch"],
            "framework",
        ),
        (vec!["--script", "absent.py"], "model"),
        (vec!["--script", "train.sh"], "model"),
        (
            vec!["--model", "resnet_mini", "--", "--lr", "1"],
            "script_args",
        ),
        (
            vec![
                "--script",
                "train.py",
                "--script-args",
                "'--lr",
                "--steps",
                "3",
            ],
            "script_args",
        ),
    ] {
        let (out, v) = run(&dir, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert_eq!(v["error"]["field"], json!(field), "{args:?}: {v}");
    }
    let (out, v) =
        output_json(trainbench(&dir.0).args(["describe", "--model", "script:train.py", "--json"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], json!("model"), "{v}");
    let runs = output_json(trainbench(&dir.0).args(["runs", "--json"])).1;
    assert_eq!(
        runs["runs"].as_array().map(Vec::len),
        Some(2),
        "only the two failed runs were stored: {runs}"
    );
}

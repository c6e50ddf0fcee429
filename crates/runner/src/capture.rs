//! A model from a person's file for the libtorch worker: captured with
//! TorchScript in the studio's PyTorch environment when its run starts
//! (`python -m trainbench_worker pytorch capture`: the file's SHA-256
//! checked, its function called, `torch.jit.script`, else `torch.jit.trace`
//! on an example input of the run's shape), the module saved in a folder of
//! the run's own that is removed when the run ends, and the worker started
//! with `--capture FILE` naming the record ([`TorchScriptCapture`]).
//!
//! The file runs here only because a run that names it starts now: the spec
//! carries the path and the hash the plan read, and the capture refuses
//! other bytes, as the PyTorch worker does.

use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use trainbench_core::models::{ModelConfig, TorchScriptCapture};
use trainbench_core::protocol::ErrorClass;
use trainbench_core::spec::CheckedSpec;
use trainbench_core::Framework;

use crate::{envs, WorkerCommand};

/// The folder of one run's capture, removed when the run is done with it.
pub(crate) type CaptureDir = trainbench_files::OwnedDir;

/// What the capture step answers on its one stdout line.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Answer {
    Captured {
        param_count: u64,
        flops_per_sample: Option<f64>,
        flops_method: Option<String>,
        method: String,
    },
    Refused {
        message: String,
    },
}

/// Why a run did not start: the reason stored with it, and its class.
pub(crate) type NotCaptured = (String, ErrorClass);

/// For the libtorch worker (`worker.plan_for` is `None`) and a file model:
/// the model captured, the worker's command with `--capture FILE`, and the
/// folder to keep until the worker ends. Anything else: `None`.
pub(crate) async fn prepare(
    run_id: i64,
    worker: &WorkerCommand,
    spec: &CheckedSpec,
    limit: Duration,
) -> Result<Option<(WorkerCommand, CaptureDir)>, NotCaptured> {
    let ModelConfig::File(f) = &spec.spec.model_config else {
        return Ok(None);
    };
    if worker.plan_for.is_some() {
        return Ok(None);
    }
    let internal = |m: String| (m, ErrorClass::Internal);
    let env = envs::resolve(Framework::Pytorch, None).map_err(|e| {
        (
            format!(
                "framework = tch: the model file {} is captured with TorchScript in the studio's PyTorch environment, which is not ready here ({e}); install it with `trainbench env install pytorch`",
                f.model.short()
            ),
            ErrorClass::Unsupported,
        )
    })?;
    // A folder made here (mode 0700), never one that was there: another
    // user could make one of this name first and place links in it.
    let prefix = format!("trainbench-capture-{}-{run_id}", std::process::id());
    let dir = trainbench_files::private_dir(&std::env::temp_dir(), &prefix)
        .map_err(|e| internal(format!("cannot make the capture's folder: {e}")))?;
    let guard = CaptureDir::new(dir.clone());
    let module = dir.join("model.pt");
    let python = envs::worker_command(&env);
    let plan = spec.spec.worker_plan_json(Framework::Pytorch);
    let line = ask(&python, &module, &plan, limit)
        .await
        .map_err(internal)?;
    let answer: Answer = serde_json::from_str(&line).map_err(|e| {
        internal(format!(
            "the TorchScript capture answered what the studio cannot read ({e}): {line}"
        ))
    })?;
    let record = match answer {
        Answer::Refused { message } => return Err((message, ErrorClass::BadConfig)),
        Answer::Captured {
            param_count,
            flops_per_sample,
            flops_method,
            method,
        } => TorchScriptCapture {
            path: module.display().to_string(),
            method,
            param_count,
            flops_per_sample,
            flops_method,
        },
    };
    let record_path = dir.join("capture.json");
    let text = serde_json::to_string(&record).map_err(|e| internal(e.to_string()))?;
    std::fs::write(&record_path, text)
        .map_err(|e| internal(format!("cannot write {}: {e}", record_path.display())))?;
    let mut with = worker.clone();
    with.args
        .extend(["--capture".to_owned(), record_path.display().to_string()]);
    Ok(Some((with, guard)))
}

/// Runs the capture step and returns its answer line, or why there is none.
async fn ask(
    python: &WorkerCommand,
    module: &std::path::Path,
    plan: &str,
    limit: Duration,
) -> Result<String, String> {
    let mut child = Command::new(&python.program)
        .args(["-m", "trainbench_worker", "pytorch", "capture", "--out"])
        .arg(module)
        .envs(python.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", python.program.display()))?;
    if let Some(mut input) = child.stdin.take() {
        // A step that exits before reading says why on stderr.
        let _ = input.write_all(plan.as_bytes()).await;
        let _ = input.shutdown().await;
    }
    let out = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .map_err(|_| {
            format!(
                "the TorchScript capture did not finish within {} s",
                limit.as_secs()
            )
        })?
        .map_err(|e| format!("the TorchScript capture could not be read: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(line) if out.status.success() => Ok(line.to_owned()),
        _ => Err(format!(
            "the TorchScript capture failed: {}",
            envs::last_line(&out.stderr)
        )),
    }
}

//! A model file trained by the libtorch worker (`--framework tch`): the
//! studio captures it with TorchScript in its PyTorch environment when the
//! run starts (`torch.jit.script`, else `torch.jit.trace`), the worker loads
//! the capture as a trainable module and trains it with the parameter count
//! of the PyTorch module; a module TorchScript cannot capture fails the run
//! with both of TorchScript's reasons, naming the file and the function.

use serde_json::{json, Value};

use crate::common::{output_json, text, trainbench, Scratch};

const NETS: &str = r##"
import numpy as np
from torch import nn


def conv():
    # 3*8*9 + 8 = 224, the batch norm's 2*8 = 16 (its running statistics are
    # buffers) and 8*5 + 5 = 45: 285 trainable parameters.
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5)
    )


def _flat(*xs):
    return xs[0].flatten(1)


class ViaTrace(nn.Module):
    """torch.jit.script refuses the variadic helper; torch.jit.trace follows it.
    Two of its layers share one weight (tied): counted and trained once."""

    def __init__(self):
        super().__init__()
        self.down = nn.Linear(3 * 8 * 8, 8)
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)
        self.b.weight = self.a.weight
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        return self.head(self.b(self.a(self.down(_flat(x)))))


def via_trace():
    return ViaTrace()


class ThroughNumpy(nn.Module):
    """Leaves the tensors: a trace would keep one input as a constant."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3 * 8 * 8, 5)

    def forward(self, x):
        return self.fc(x.new_tensor(np.asarray(x.flatten(1).tolist(), dtype="float32")))


def through_numpy():
    return ThroughNumpy()
"##;

fn with_nets(tag: &str) -> Scratch {
    let dir = Scratch::new(tag);
    std::fs::write(dir.0.join("nets.py"), NETS).unwrap();
    dir
}

fn run_tch(dir: &Scratch, models: &str) -> (std::process::Output, Value) {
    output_json(
        trainbench(&dir.0)
            .current_dir(&dir.0)
            .args(["run", "--framework", "tch", "--model", models])
            .args(["--input-shape", "3x8x8", "--num-classes", "5"])
            .args(["--batch-size", "2", "--steps", "4", "--json"]),
    )
}

fn details(dir: &Scratch, id: &Value) -> Value {
    output_json(trainbench(&dir.0).args(["show", &id.to_string(), "--json"])).1
}

#[test]
fn a_model_file_trains_in_the_libtorch_worker_from_its_torchscript_capture() {
    let dir = with_nets("file-model-tch");
    // The PyTorch module's own count (sum of p.numel() over its trainable
    // parameters), from the PyTorch environment; nothing trains.
    let (out, described) = output_json(
        trainbench(&dir.0)
            .current_dir(&dir.0)
            .args([
                "describe",
                "--framework",
                "pytorch",
                "--model",
                "nets.py:conv",
            ])
            .args(["--input-shape", "3x8x8", "--num-classes", "5", "--json"]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(described["param_count"], json!(285), "{described}");

    let (out, v) = run_tch(&dir, "nets.py:conv,nets.py:via_trace");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{v}");
    for (run, (function, params, method)) in runs.iter().zip([
        ("conv", 285, "torch.jit.script"),
        // 192*8 + 8, a's 8*8 + 8, b's own bias 8 and 8*5 + 5.
        ("via_trace", 1544 + 72 + 8 + 45, "torch.jit.trace"),
    ]) {
        let d = details(&dir, &run["id"]);
        assert_eq!(d["status"], "completed", "{function}: {d}");
        assert_eq!(d["framework"], "tch", "{d}");
        assert_eq!(d["param_count"], json!(params), "{function}: {d}");
        let execution = d["hello"]["execution"].as_str().unwrap();
        assert!(execution.contains(method), "{function}: {execution}");
        assert!(d["throughput_samples_per_s"].as_f64().unwrap() > 0.0, "{d}");
        assert!(
            d["hello"]["flops_method"]
                .as_str()
                .unwrap()
                .contains("FlopCounterMode"),
            "{d}"
        );
        // Stored as the PyTorch worker's model-file runs are: the absolute
        // reference, its SHA-256 and the bytes under it.
        let absolute = format!("{}:{function}", dir.0.join("nets.py").display());
        assert_eq!(d["spec"]["model"], json!(absolute), "{d}");
        let sha = d["spec"]["model_sha256"].as_str().unwrap();
        assert_eq!(d["model_file"]["sha256"], json!(sha), "{d}");
        assert_eq!(d["model_file"]["kept_bytes"], json!(NETS.len()), "{d}");
    }
}

#[test]
fn a_model_torchscript_cannot_capture_fails_its_tch_run_saying_why() {
    let dir = with_nets("file-model-tch-refused");
    let (out, v) = run_tch(&dir, "nets.py:through_numpy");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let d = details(&dir, &v["runs"][0]["id"]);
    assert_eq!(d["status"], "failed", "{d}");
    assert_eq!(d["error_class"], "bad_config", "{d}");
    assert_eq!(d["param_count"], Value::Null, "nothing trained: {d}");
    let error = d["status_reason"].as_str().unwrap_or_default();
    for words in [
        "TorchScript could not capture",
        "through_numpy()",
        "nets.py",
        "torch.jit.script said",
        "torch.jit.trace said",
        "TracerWarning",
        "framework pytorch trains it",
    ] {
        assert!(error.contains(words), "no {words:?} in {error}");
    }

    // `describe` counts in Python; for tch it says so, naming the field.
    let (out, e) = output_json(
        trainbench(&dir.0)
            .current_dir(&dir.0)
            .args(["describe", "--framework", "tch", "--model", "nets.py:conv"])
            .args(["--input-shape", "3x8x8", "--num-classes", "5", "--json"]),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(e["error"]["field"], "framework", "{e}");
}

//! A model from a person's own file (`--model PATH.py:FUNCTION`) through the
//! real CLI, the studio's PyTorch, TensorFlow and JAX environments and a real
//! SQLite file, on the
//! CPU: it trains with the parameter count of the object it returns and FLOPs
//! counted; what the file gets wrong is a failed run naming the file and what
//! was expected (with the person's traceback); a file changed after the studio
//! read it is refused by the worker; what cannot run is refused before
//! anything is queued. `torchscript`: the same files in the libtorch worker.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use serde_json::{json, Value};

#[path = "common/mod.rs"]
mod common;
#[path = "your_model_file/torchscript.rs"]
mod torchscript;

use common::{output_json, text, trainbench, Scratch};

const MODELS: &str = r##"
import torch
from torch import nn


def image():
    # 3*8*9 + 8 = 224 and 8*5 + 5 = 45: 269 parameters.
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5)
    )


class Next(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16)
        self.head = nn.Linear(16, 100)

    def forward(self, x):
        return self.head(self.embed(x))


def tokens():
    return Next()


class Attends(nn.Module):
    """Token embeddings attending to each other (no projections), then a head."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.head = nn.Linear(16, 50)

    def forward(self, x):
        h = self.embed(x).unsqueeze(1)  # (batch, heads = 1, tokens, width): the fused kernel's shape
        return self.head(torch.nn.functional.scaled_dot_product_attention(h, h, h).squeeze(1))


def attends():
    return Attends()


def broken():
    return helper_that_is_not_there()


def not_a_module():
    return {"weights": 1}


def seven_classes():
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 7))


def mnist():
    return nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 10))


def rewrites_itself():
    with open(__file__, "a") as f:
        f.write("# changed while the sweep ran\n")
    return image()
"##;

/// A scratch folder holding `models.py`.
fn with_models(tag: &str) -> Scratch {
    let dir = Scratch::new(tag);
    std::fs::write(dir.0.join("models.py"), MODELS).unwrap();
    dir
}

/// `trainbench run` of `models` (from inside the scratch folder, so that the
/// relative path is made absolute) with `extra` flags; its JSON.
fn run(dir: &Scratch, models: &str, extra: &[&str]) -> (std::process::Output, Value) {
    output_json(
        trainbench(&dir.0)
            .current_dir(&dir.0)
            .args(["run", "--framework", "pytorch", "--model", models])
            .args(["--batch-size", "2", "--steps", "4", "--json"])
            .args(extra),
    )
}

fn details(dir: &Scratch, id: &Value) -> Value {
    output_json(trainbench(&dir.0).args(["show", &id.to_string(), "--json"])).1
}

#[test]
fn a_model_file_trains_with_its_own_parameter_count_and_counted_flops() {
    let dir = with_models("file-model");
    let (out, v) = run(
        &dir,
        "models.py:image",
        &["--input-shape", "3x8x8", "--num-classes", "5"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let d = details(&dir, &v["runs"][0]["id"]);
    assert_eq!(d["status"], "completed", "{d}");
    assert_eq!(d["param_count"], json!(269));
    let absolute = format!("{}:image", dir.0.join("models.py").display());
    assert_eq!(
        d["spec"]["model"],
        json!(absolute),
        "the path is stored absolute"
    );
    let sha = d["spec"]["model_sha256"].as_str().unwrap();
    assert_eq!(sha.len(), 64);
    // The store keeps the bytes that trained, under their hash.
    assert_eq!(d["model_file"]["sha256"], json!(sha), "{d}");
    assert_eq!(d["model_file"]["kept_bytes"], json!(MODELS.len()), "{d}");
    let db = rusqlite::Connection::open(dir.0.join("studio.sqlite")).unwrap();
    let kept: Vec<u8> = db
        .query_row(
            "SELECT bytes FROM model_files WHERE sha256 = ?1",
            [sha],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, MODELS.as_bytes());
    let flops = d["hello"]["flops_per_sample"].as_f64().unwrap();
    // Counted, not assumed: the convolution's 8·8 positions × 8 filters × 27
    // MACs twice (forward, weight gradient: the input needs no gradient), the
    // linear layer's 40 MACs three times; 2 FLOPs a MAC.
    assert_eq!(flops, 2.0 * (2.0 * 64.0 * 8.0 * 27.0 + 3.0 * 40.0), "{d}");
    assert!(d["hello"]["flops_method"]
        .as_str()
        .unwrap()
        .contains("FlopCounterMode"));

    let (out, v) = run(
        &dir,
        "models.py:tokens",
        &["--input-shape", "tokens:12", "--vocab-size", "100"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let d = details(&dir, &v["runs"][0]["id"]);
    assert_eq!(d["status"], "completed", "{d}");
    assert_eq!(d["param_count"], json!(100 * 16 + 16 * 100 + 100));

    // A data set that fixes the input: held-out accuracy, time to accuracy.
    let (out, v) = run(
        &dir,
        "models.py:mnist",
        &["--data", "mnist", "--target-accuracy", "0.5"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let d = details(&dir, &v["runs"][0]["id"]);
    assert_eq!(d["status"], "completed", "{d}");
    assert!(d["best_accuracy"].as_f64().unwrap() > 0.0, "{d}");
}

#[test]
fn what_a_model_file_gets_wrong_is_a_failed_run_naming_the_file_and_what_was_expected() {
    let dir = with_models("file-model-wrong");
    let (out, v) = run(
        &dir,
        "models.py:broken,models.py:absent,models.py:not_a_module,models.py:seven_classes",
        &["--input-shape", "3x8x8", "--num-classes", "5"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4, "{v}");
    let expected = [
        (
            "broken",
            vec![
                "calling broken()",
                "NameError",
                "helper_that_is_not_there",
                "models.py\", line ",
                ", in broken\n    return helper_that_is_not_there()",
            ],
        ),
        (
            "absent",
            vec!["define a function absent()", "broken, image"],
        ),
        (
            "not_a_module",
            vec!["returned builtins.dict", "expected a torch.nn.Module"],
        ),
        (
            "seven_classes",
            vec!["returned shape (2, 7)", "(batch, num_classes) = (2, 5)"],
        ),
    ];
    for (run, (function, words)) in runs.iter().zip(expected) {
        let d = details(&dir, &run["id"]);
        assert_eq!(d["status"], "failed", "{function}: {d}");
        let error = d["status_reason"].as_str().unwrap_or_default();
        assert!(error.contains("models.py"), "{function}: {error}");
        assert!(
            !error.contains("file_models.py"),
            "only the person's frames: {error}"
        );
        for w in words {
            assert!(error.contains(w), "{function}: no {w:?} in {error}");
        }
    }
}

#[test]
fn a_model_file_changed_after_the_studio_read_it_is_refused_by_the_worker() {
    let dir = with_models("file-model-changed");
    let (out, v) = run(
        &dir,
        "models.py:rewrites_itself",
        &[
            "--input-shape",
            "3x8x8",
            "--num-classes",
            "5",
            "--repeats",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let runs = v["runs"].as_array().unwrap();
    let first = details(&dir, &runs[0]["id"]);
    assert_eq!(first["status"], "completed", "{first}");
    let second = details(&dir, &runs[1]["id"]);
    assert_eq!(second["status"], "failed", "{second}");
    let error = second["status_reason"].as_str().unwrap_or_default();
    assert!(
        error.contains("changed after the studio read it"),
        "{error}"
    );
}

#[test]
fn a_model_file_that_cannot_run_is_refused_before_anything_is_queued() {
    let dir = with_models("file-model-refused");
    for (framework, model, extra, field) in [
        (
            "pytorch",
            "models.py:image",
            vec!["--num-classes", "5"],
            "input_shape",
        ),
        (
            "pytorch",
            "models.py:image",
            vec!["--input-shape", "3x8x4", "--num-classes", "5"],
            "input_shape",
        ),
        (
            "pytorch",
            "models.py:image",
            vec!["--input-shape", "3x8x8"],
            "num_classes",
        ),
        (
            "pytorch",
            "gone.py:image",
            vec!["--input-shape", "3x8x8", "--num-classes", "5"],
            "model",
        ),
        (
            "pytorch",
            "models.py:2x",
            vec!["--input-shape", "3x8x8", "--num-classes", "5"],
            "model",
        ),
        (
            "pytorch",
            "resnet_mini",
            vec!["--model-name", "net"],
            "model_name",
        ),
        (
            "pytorch",
            "models.py:image,models.py:mnist",
            vec![
                "--input-shape",
                "3x8x8",
                "--num-classes",
                "5",
                "--model-name",
                "net",
            ],
            "model_name",
        ),
        (
            "pytorch",
            "models.py:image",
            vec![
                "--input-shape",
                "3x8x8",
                "--num-classes",
                "5",
                "--model-name",
                "timm:net",
            ],
            "model_name",
        ),
    ] {
        let (out, v) = output_json(
            trainbench(&dir.0)
                .current_dir(&dir.0)
                .args([
                    "run",
                    "--framework",
                    framework,
                    "--model",
                    model,
                    "--steps",
                    "2",
                    "--json",
                ])
                .args(&extra),
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "{model} {extra:?}: {}",
            text(&out)
        );
        assert_eq!(v["error"]["field"], field, "{model} {extra:?}: {v}");
    }
    let (_, runs) = output_json(trainbench(&dir.0).args(["runs", "--json"]));
    assert!(
        runs["runs"].as_array().is_none_or(Vec::is_empty),
        "nothing is stored: {runs}"
    );
}

/// The same small network written for Keras …
const KERAS_NET: &str = r##"
import keras


def keras_net():
    return keras.Sequential(
        [
            keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(5),
        ]
    )
"##;

/// … and for Flax (linen).
const FLAX_NET: &str = r##"
from flax import linen


class FlaxNet(linen.Module):
    @linen.compact
    def __call__(self, x):
        x = linen.relu(linen.Conv(8, (3, 3))(x))
        return linen.Dense(5)(x.mean(axis=(1, 2)))


def flax_net():
    return FlaxNet()
"##;

/// … and for Flax NNX (a module that holds its own state).
const NNX_NET: &str = r##"
from flax import nnx


class NnxNet(nnx.Module):
    def __init__(self, rngs):
        self.conv = nnx.Conv(3, 8, (3, 3), rngs=rngs)
        self.out = nnx.Linear(8, 5, rngs=rngs)

    def __call__(self, x):
        return self.out(nnx.relu(self.conv(x)).mean(axis=(1, 2)))


def nnx_net():
    return NnxNet(nnx.Rngs(0))
"##;

/// A Keras file in TensorFlow and Flax files (linen and NNX) in JAX train (fed NHWC) with the
/// same parameter count as the PyTorch network of the same shape; JAX's FLOPs
/// are XLA's cost analysis. Named alike (`--model-name net`) they compare as
/// one model; a PyTorch "net" of another size is warned about.
#[test]
fn a_keras_file_and_flax_files_linen_and_nnx_train_in_their_own_frameworks() {
    let dir = with_models("file-model-keras-flax");
    std::fs::write(dir.0.join("keras_net.py"), KERAS_NET).unwrap();
    std::fs::write(dir.0.join("flax_net.py"), FLAX_NET).unwrap();
    std::fs::write(dir.0.join("nnx_net.py"), NNX_NET).unwrap();
    let mut ids = Vec::new();
    for (framework, model, classes) in [
        ("tensorflow", "keras_net.py:keras_net", "5"),
        ("jax", "flax_net.py:flax_net", "5"),
        ("jax", "nnx_net.py:nnx_net", "5"),
        ("pytorch", "models.py:seven_classes", "7"),
    ] {
        let (out, v) = output_json(
            trainbench(&dir.0)
                .current_dir(&dir.0)
                .args(["run", "--framework", framework, "--model", model])
                .args(["--input-shape", "3x8x8", "--num-classes", classes])
                .args([
                    "--model-name",
                    "net",
                    "--batch-size",
                    "2",
                    "--steps",
                    "4",
                    "--json",
                ]),
        );
        assert_eq!(out.status.code(), Some(0), "{model}: {}", text(&out));
        ids.push(v["runs"][0]["id"].to_string());
        if framework == "pytorch" {
            continue;
        }
        let d = details(&dir, &v["runs"][0]["id"]);
        assert_eq!(d["model"], "net", "{d}");
        assert!(d["spec"]["model"].as_str().unwrap().ends_with(model), "{d}");
        assert_eq!(d["status"], "completed", "{model}: {d}");
        assert_eq!(d["param_count"], json!(269), "{model}");
        if framework == "jax" {
            assert!(
                d["hello"]["flops_per_sample"].as_f64().unwrap() > 0.0,
                "{d}"
            );
            assert!(d["hello"]["flops_method"].as_str().unwrap().contains("XLA"));
        }
    }
    let (out, c) = output_json(
        trainbench(&dir.0).args(["compare", &ids[0], &ids[1], &ids[2], &ids[3], "--json"]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let entries = c["comparison"]["entries"].as_array().unwrap();
    assert!(entries.iter().all(|e| e["model"] == "net"), "{c}");
    let warnings: Vec<&str> = c["comparison"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let counts: Vec<&&str> = warnings
        .iter()
        .filter(|w| w.contains("parameters"))
        .collect();
    assert_eq!(
        counts.len(),
        1,
        "only the PyTorch net differs: {warnings:?}"
    );
    assert!(counts[0].contains("1351 parameters"), "{warnings:?}");
    assert!(
        counts[0].contains("the versions of net are not the same network"),
        "{warnings:?}"
    );
    let (out, v) = output_json(
        trainbench(&dir.0)
            .current_dir(&dir.0)
            .args([
                "run",
                "--framework",
                "jax",
                "--model",
                "flax_net.py:flax_net",
            ])
            .args([
                "--input-shape",
                "3x8x8",
                "--num-classes",
                "5",
                "--precision",
                "amp-bf16",
                "--json",
            ]),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "precision", "{v}");
}

/// `describe` builds a model from a file once and counts it; nothing trains
/// and nothing is stored.
#[test]
fn describe_counts_a_model_file_before_anything_trains() {
    let dir = with_models("file-model-describe");
    let (out, d) = output_json(trainbench(&dir.0).current_dir(&dir.0).args([
        "describe",
        "--model",
        "models.py:image",
        "--input-shape",
        "3x8x8",
        "--num-classes",
        "5",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(d["param_count"], json!(269), "{d}");
    assert_eq!(
        d["flops_per_sample"],
        json!(2.0 * (2.0 * 64.0 * 8.0 * 27.0 + 3.0 * 40.0))
    );
    assert_eq!(d["trained_as"], "image");
    // Fused attention is counted: Q·Kᵀ and A·V, 8·8·16 MACs each, three
    // passes, 2 FLOPs a MAC; the head's 8·16·50 MACs likewise.
    let (out, d) = output_json(trainbench(&dir.0).current_dir(&dir.0).args([
        "describe",
        "--model",
        "models.py:attends",
        "--input-shape",
        "tokens:8",
        "--vocab-size",
        "50",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        d["flops_per_sample"],
        json!(6.0 * (2.0 * 8.0 * 8.0 * 16.0 + 8.0 * 16.0 * 50.0)),
        "{d}"
    );
    assert_eq!(d["trained_as"], "decoder");
    let (out, d) = output_json(trainbench(&dir.0).current_dir(&dir.0).args([
        "describe",
        "--model",
        "models.py:not_a_module",
        "--input-shape",
        "3x8x8",
        "--num-classes",
        "5",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(d["error"]["field"], "model", "{d}");
    assert!(
        !dir.0.join("studio.sqlite").exists() || {
            let (_, runs) = output_json(trainbench(&dir.0).args(["runs", "--json"]));
            runs["runs"].as_array().is_none_or(Vec::is_empty)
        }
    );
}

//! Library models (`timm:NAME`, `hf:MODEL_TYPE?…`, `keras:NAME`) through the
//! real CLI, the runner, the studio's PyTorch and TensorFlow environments and
//! a real SQLite file, on the CPU: each trains in the harness and is stored
//! completed, with the parameter count the library itself gives (and, in
//! PyTorch, FLOPs counted on the model);
//! an unknown name is refused before anything trains, with the closest name.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use std::process::Command;

use serde_json::{json, Value};
use trainbench_app::envs;

#[path = "common/mod.rs"]
mod common;

use common::{output_json, text, trainbench, Scratch};

/// The studio's PyTorch environment's Python (a missing one fails the test).
fn python() -> std::path::PathBuf {
    let e = envs::resolve("pytorch".parse().unwrap(), None)
        .unwrap_or_else(|e| panic!("pytorch: {e} — run `make setup`"));
    assert!(e.ready, "the PyTorch environment is not installed");
    e.python
}

/// The trainable parameters of the model `code` builds (as `m`), counted by
/// the library's own objects in the studio's PyTorch environment.
fn library_count(code: &str) -> u64 {
    library_figure(&format!(
        "{code}\nv = sum(p.numel() for p in m.parameters() if p.requires_grad)"
    ))
    .parse()
    .unwrap()
}

/// What `code` sets as `v`, run in the studio's PyTorch environment.
fn library_figure(code: &str) -> String {
    let script = format!("import torch\ntorch.manual_seed(0)\n{code}\nprint(v)");
    let out = Command::new(python())
        .args(["-c", &script])
        .env("OMP_NUM_THREADS", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Trains `model` with `extra` flags for 4 steps at batch 2 and returns the
/// stored run's details.
fn train(dir: &Scratch, model: &str, extra: &[&str]) -> Value {
    let (out, v) = output_json(
        trainbench(&dir.0)
            .args(["run", "--framework", "pytorch", "--model", model])
            .args(["--batch-size", "2", "--steps", "4", "--json"])
            .args(extra),
    );
    assert_eq!(out.status.code(), Some(0), "{model}: {}", text(&out));
    let run = &v["runs"][0];
    assert_eq!(run["status"], "completed", "{model}: {run}");
    let (_, d) = output_json(trainbench(&dir.0).args(["show", &run["id"].to_string(), "--json"]));
    assert_eq!(d["status"], "completed", "{model}");
    let flops = d["hello"]["flops_per_sample"].as_f64().unwrap();
    assert!(flops > 0.0, "{model}: {flops}");
    let method = d["hello"]["flops_method"].as_str().unwrap_or_default();
    assert!(method.contains("FlopCounterMode"), "{model}: {method}");
    d
}

const LLAMA: &str = "hf:llama?hidden_size=64&num_hidden_layers=2&num_attention_heads=4&intermediate_size=128&vocab_size=1000";
const BERT: &str = "hf:bert?hidden_size=64&num_hidden_layers=2&num_attention_heads=4&intermediate_size=128&vocab_size=1000";

#[test]
fn a_timm_model_trains_at_64_px_with_timms_parameter_count() {
    let dir = Scratch::new("timm-model");
    let d = train(&dir, "timm:convnext_atto", &["--image-size", "64"]);
    let count = library_count(
        "import timm\nm = timm.create_model('convnext_atto', pretrained=False, num_classes=1000)",
    );
    assert_eq!(d["param_count"], json!(count));
    assert_eq!(d["hello"]["param_count"], json!(count));
    // Training FLOPs are about three forwards (PyTorch's counter alone, on
    // the forward, at 64 px): a depthwise layer's weight gradient is counted
    // per group, not once per channel (which made them 8.3 forwards).
    let forward: f64 = library_figure(
        "import timm\nfrom torch.utils.flop_counter import FlopCounterMode\n\
         m = timm.create_model('convnext_atto', pretrained=False, num_classes=1000)\n\
         with FlopCounterMode(display=False) as c:\n    m(torch.randn(2, 3, 64, 64))\n\
         v = c.get_total_flops() / 2",
    )
    .parse()
    .unwrap();
    let training = d["hello"]["flops_per_sample"].as_f64().unwrap();
    let ratio = training / forward;
    assert!(
        (2.5..3.2).contains(&ratio),
        "{training} ÷ {forward} = {ratio}"
    );
}

/// A residual network at 32 px ends in a one-pixel map: its FLOPs are
/// counted on two samples (at one, batch norm has one value per channel and
/// cannot train), so it trains, as on CIFAR-10.
#[test]
fn a_timm_resnet_at_32_px_is_counted_and_trains() {
    let dir = Scratch::new("timm-resnet-32");
    let d = train(&dir, "timm:test_resnet", &["--image-size", "32"]);
    assert_eq!(d["spec"]["image_size"], 32, "{d}");
}

#[test]
fn a_shrunk_llama_trains_on_next_tokens_with_transformers_parameter_count() {
    let dir = Scratch::new("hf-llama");
    let d = train(&dir, LLAMA, &["--seq-len", "32"]);
    let count = library_count(
        "from transformers import AutoConfig, AutoModelForCausalLM\n\
         c = AutoConfig.for_model('llama', hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=1000)\n\
         m = AutoModelForCausalLM.from_config(c)",
    );
    assert_eq!(d["param_count"], json!(count));
}

#[test]
fn a_shrunk_bert_trains_on_sequence_classes_with_transformers_parameter_count() {
    let dir = Scratch::new("hf-bert");
    let d = train(&dir, BERT, &["--seq-len", "32"]);
    let count = library_count(
        "from transformers import AutoConfig, AutoModelForSequenceClassification\n\
         c = AutoConfig.for_model('bert', hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=1000, num_labels=2)\n\
         m = AutoModelForSequenceClassification.from_config(c)",
    );
    assert_eq!(d["param_count"], json!(count));
    // A classifier's samples are not counted in tokens.
    assert_eq!(d["tokens_per_s"], Value::Null, "{d}");
}

#[test]
fn an_unknown_timm_name_is_refused_before_anything_trains_with_the_closest_name() {
    let dir = Scratch::new("timm-unknown");
    let (out, v) = output_json(trainbench(&dir.0).args([
        "run",
        "--framework",
        "pytorch",
        "--model",
        "timm:convnxt_atto",
        "--batch-size",
        "2",
        "--steps",
        "2",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "model", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("convnext_atto"), "{message}");
    let (_, runs) = output_json(trainbench(&dir.0).args(["runs", "--json"]));
    assert!(
        runs["runs"].as_array().is_none_or(Vec::is_empty),
        "nothing is stored: {runs}"
    );
}

#[test]
fn library_models_are_for_pytorch_only_and_malformed_names_name_the_field() {
    let dir = Scratch::new("library-refusals");
    for (framework, model, field) in [
        ("jax", "timm:resnet18", "framework"),
        ("tch", "hf:bert", "framework"),
        ("pytorch", "hf:llama?hidden_size", "model"),
        ("pytorch", "timm:conv next", "model"),
    ] {
        let (out, v) = output_json(trainbench(&dir.0).args([
            "run",
            "--framework",
            framework,
            "--model",
            model,
            "--steps",
            "2",
            "--json",
        ]));
        assert_eq!(out.status.code(), Some(2), "{model}: {}", text(&out));
        assert_eq!(v["error"]["field"], field, "{model}: {v}");
    }
}

/// What Keras's own `model.summary()` says of a `keras.applications`
/// architecture's trainable parameters, in the studio's TensorFlow
/// environment.
fn keras_trainable_params(name: &str, size: u32, classes: u32) -> u64 {
    let e = envs::resolve("tensorflow".parse().unwrap(), None)
        .unwrap_or_else(|e| panic!("tensorflow: {e} — run `make setup`"));
    let script = format!(
        "import keras\nm = keras.applications.{name}(weights=None, input_shape=({size}, {size}, 3), classes={classes})\n\
         lines = []\nm.summary(print_fn=lambda s, line_break=True: lines.append(s))\n\
         print(next(l for l in '\\n'.join(lines).splitlines() if 'Trainable params' in l))"
    );
    let out = Command::new(&e.python)
        .args(["-c", &script])
        .env("OMP_NUM_THREADS", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    let digits: String = line
        .split(':')
        .nth(1)
        .unwrap()
        .split('(')
        .next()
        .unwrap()
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

/// `keras:NAME` trains a `keras.applications` architecture (no weights) in
/// the TensorFlow worker at a tiny input, with the trainable parameter count
/// Keras itself gives; `describe` counts the same; `models --search` lists
/// it; an unknown name is refused with the closest name, and another
/// framework on the field `framework`.
#[test]
fn a_keras_application_trains_in_tensorflow_with_keras_parameter_count() {
    let dir = Scratch::new("keras-application");
    let keras = keras_trainable_params("MobileNetV3Small", 32, 10);
    let (out, v) = output_json(trainbench(&dir.0).args([
        "run",
        "--framework",
        "tensorflow",
        "--model",
        "keras:MobileNetV3Small",
        "--image-size",
        "32",
        "--num-classes",
        "10",
        "--batch-size",
        "2",
        "--steps",
        "3",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (_, d) =
        output_json(trainbench(&dir.0).args(["show", &v["runs"][0]["id"].to_string(), "--json"]));
    assert_eq!(d["status"], "completed", "{d}");
    assert_eq!(d["param_count"], json!(keras), "{d}");
    // A convolutional network: the run's execution line says nothing of an
    // attention it does not have (its traits, set when it was built).
    let execution = d["hello"]["execution"].as_str().expect("execution");
    assert!(execution.contains("tf.function"), "{execution}");
    assert!(!execution.contains("attention"), "{execution}");

    let (out, described) = output_json(trainbench(&dir.0).args([
        "describe",
        "--model",
        "keras:MobileNetV3Small",
        "--image-size",
        "32",
        "--num-classes",
        "10",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(described["param_count"], json!(keras), "{described}");
    assert_eq!(described["framework"], "tensorflow", "{described}");
    // The input it was counted at, as channels × height × width.
    assert_eq!(described["input"], json!([3, 32, 32]), "{described}");

    let (out, found) =
        output_json(trainbench(&dir.0).args(["models", "--search", "mobilenetv3", "--json"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let names = found["keras"].as_array().unwrap();
    assert!(names.contains(&json!("keras:MobileNetV3Small")), "{found}");

    for (framework, model, field, says) in [
        (
            "tensorflow",
            "keras:MobileNetV3Smal",
            "model",
            "MobileNetV3Small",
        ),
        (
            "pytorch",
            "keras:MobileNetV3Small",
            "framework",
            "tensorflow for the library model",
        ),
    ] {
        let (out, v) = output_json(trainbench(&dir.0).args([
            "run",
            "--framework",
            framework,
            "--model",
            model,
            "--steps",
            "2",
            "--json",
        ]));
        assert_eq!(out.status.code(), Some(2), "{model}: {}", text(&out));
        assert_eq!(v["error"]["field"], field, "{v}");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(says),
            "{v}"
        );
    }
}

//! A person's model on real data, through the real CLI, the studio's
//! PyTorch and TensorFlow environments and a real SQLite file, on the CPU:
//! library names (timm, Keras) and a model file on an image folder of real
//! digits, evaluated on its held-out split; a shrunk Hugging Face decoder and
//! a file language model on the text corpus, the decoder to a target loss;
//! and each data set a model cannot train on refused before anything runs,
//! naming the field.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use std::path::{Path, PathBuf};

use serde_json::Value;

#[path = "common/mod.rs"]
mod common;

use common::{output_json, text, trainbench, Scratch};

/// A PyTorch model file: a small image classifier and a byte-level
/// language model (embeddings straight to next-token logits).
const NET: &str = r#"
from torch import nn


def classifier():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10)
    )


class Bigram(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(256, 32)
        self.out = nn.Linear(32, 256)

    def forward(self, x):
        return self.out(self.emb(x))


def bigram():
    return Bigram()
"#;

/// A shrunk GPT-2 whose vocabulary holds the corpus's 256 byte values.
const GPT2: &str = "hf:gpt2?n_layer=2&n_embd=64&n_head=2&vocab_size=256";

/// 10 class folders of real MNIST digits, tinted, as PNG and JPEG files (32
/// training and 8 held-out images each).
fn digits(dir: &Path) -> PathBuf {
    common::image_folder(&dir.join("digits"), &["--per-class", "40", "--size", "36"])
}

/// Runs `args` and returns the stored run, checked completed on `data`.
fn trained(dir: &Scratch, args: &[&str], data: &str) -> Value {
    let (out, v) = output_json(
        trainbench(&dir.0)
            .args(["run", "--threads", "1", "--json"])
            .args(args),
    );
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
    let run = v["runs"][0].clone();
    assert_eq!(run["status"], "completed", "{args:?}: {run}");
    assert_eq!(run["data"], data, "{run}");
    run
}

#[test]
fn library_and_file_models_train_on_an_image_folder_and_are_evaluated() {
    let dir = Scratch::new("your-data-images");
    let folder = digits(&dir.0);
    let data = format!("folder:{}", folder.display());
    std::fs::write(dir.0.join("net.py"), NET).unwrap();
    let file = format!("{}:classifier", dir.0.join("net.py").display());
    for args in [
        &[
            "--framework",
            "pytorch",
            "--model",
            "timm:test_vit",
            "--image-size",
            "32",
        ][..],
        &[
            "--framework",
            "pytorch",
            "--model",
            &file,
            "--input-shape",
            "3x32x32",
        ][..],
        &[
            "--framework",
            "tensorflow",
            "--model",
            "keras:MobileNetV3Small",
            "--image-size",
            "32",
        ][..],
    ] {
        let run = trained(
            &dir,
            &[
                args,
                &["--data", &data, "--batch-size", "16", "--epochs", "1"],
            ]
            .concat(),
            "folder",
        );
        // The classes are the folder's, counted by the studio; each epoch
        // ends with an evaluation on the held-out images.
        let (_, shown) =
            output_json(trainbench(&dir.0).args(["show", &run["id"].to_string(), "--json"]));
        assert_eq!(shown["spec"]["num_classes"], 10, "{args:?}: {shown}");
        assert_eq!(shown["spec"]["image_size"], 32, "{args:?}");
        let accuracy = run["best_accuracy"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&accuracy), "{args:?}: {run}");
        assert!(run["param_count"].as_u64().unwrap() > 0, "{run}");
    }
}

#[test]
fn library_and_file_decoders_train_on_the_text_corpus_to_a_target_loss() {
    let dir = Scratch::new("your-data-text");
    // Byte-level tokens start at a loss of ln 256 ≈ 5.5 nats; 3.5 is only
    // reached by a model that learns the text (2.2 after 150 steps here).
    let run = trained(
        &dir,
        &[
            "--framework",
            "pytorch",
            "--model",
            GPT2,
            "--seq-len",
            "64",
            "--data",
            "text",
            "--batch-size",
            "8",
            "--steps",
            "150",
            "--target-loss",
            "3.5",
        ],
        "text",
    );
    assert_eq!(run["target_reached"], true, "{run}");
    assert!(run["time_to_loss_s"].as_f64().unwrap() > 0.0, "{run}");
    assert!(run["best_loss"].as_f64().unwrap() < 3.5, "{run}");
    // Tokens per second: the decoder's 64 positions a sample, which only
    // its worker knew it to be (an encoder's samples are not counted so).
    assert_eq!(run["tokens_per_sample"], 64, "{run}");
    let rate = run["throughput_samples_per_s"].as_f64().unwrap();
    let tokens = run["tokens_per_s"].as_f64().unwrap();
    assert!((tokens / rate - 64.0).abs() < 1e-6, "{run}");
    std::fs::write(dir.0.join("net.py"), NET).unwrap();
    let file = format!("{}:bigram", dir.0.join("net.py").display());
    let run = trained(
        &dir,
        &[
            "--framework",
            "pytorch",
            "--model",
            &file,
            "--input-shape",
            "tokens:64",
            "--vocab-size",
            "256",
            "--data",
            "text",
            "--batch-size",
            "16",
            "--steps",
            "40",
        ],
        "text",
    );
    assert!(run["best_loss"].as_f64().unwrap() < 5.5, "{run}");
    assert!(run["tokens_per_s"].as_f64().unwrap() > 0.0, "{run}");
}

#[test]
fn data_a_model_cannot_train_on_is_refused_before_anything_runs_naming_the_field() {
    let dir = Scratch::new("your-data-refused");
    std::fs::write(dir.0.join("net.py"), NET).unwrap();
    let classifier = format!("{}:classifier", dir.0.join("net.py").display());
    let bigram = format!("{}:bigram", dir.0.join("net.py").display());
    let folder = format!("folder:{}", digits(&dir.0).display());
    let cases: [(&[&str], &str, &str); 7] = [
        (
            &["--model", "timm:test_vit", "--data", "mnist"],
            "data",
            "synthetic, cifar10 or folder",
        ),
        (
            &[
                "--model",
                "timm:test_vit",
                "--data",
                "cifar10:/tmp",
                "--image-size",
                "64",
            ],
            "image_size",
            "expected 32 (what data set cifar10 has)",
        ),
        (
            &[
                "--model",
                "hf:bert?num_hidden_layers=1",
                "--seq-len",
                "32",
                "--data",
                "text",
            ],
            "data",
            "an encoder classifies sequences",
        ),
        (
            &[
                "--model",
                "hf:gpt2?n_layer=1&vocab_size=100",
                "--seq-len",
                "32",
                "--data",
                "text",
            ],
            "vocab_size",
            "256 or more with data = text",
        ),
        (
            &["--model", "hf:gpt2?n_layer=1", "--data", &folder],
            "data",
            "synthetic or text",
        ),
        (
            &[
                "--model",
                &classifier,
                "--input-shape",
                "1x32x32",
                "--data",
                &folder,
                "--num-classes",
                "10",
            ],
            "in_channels",
            "expected 3",
        ),
        (
            &[
                "--model",
                &bigram,
                "--input-shape",
                "tokens:64",
                "--vocab-size",
                "100",
                "--data",
                "text",
            ],
            "vocab_size",
            "256 or more",
        ),
    ];
    for (args, field, words) in cases {
        let (out, v) = output_json(
            trainbench(&dir.0)
                .args(["run", "--framework", "pytorch", "--steps", "2", "--json"])
                .args(args),
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert_eq!(v["error"]["field"], field, "{args:?}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains(words), "{args:?}: {message}");
    }
    let (_, runs) = output_json(trainbench(&dir.0).args(["runs", "--json"]));
    assert!(
        runs["runs"].as_array().is_none_or(Vec::is_empty),
        "nothing is stored: {runs}"
    );
}

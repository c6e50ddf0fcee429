//! Library models (`timm:NAME`, `hf:MODEL_TYPE?…` of a PyTorch environment,
//! `keras:NAME` of a TensorFlow one) asked of the environment's worker
//! (`python -m trainbench_worker FRAMEWORK models`): whether
//! the installed libraries have the names, before anything trains, and which
//! names match a search (one short process per question; nothing is built);
//! and a library or file model built once and counted (`describe`).

use std::io::Write;
use std::process::{Command, Stdio};

use serde::Deserialize;
use trainbench_core::models::LibraryConfig;

use crate::WorkerCommand;

/// Why the worker's environment could not answer.
#[derive(Debug, thiserror::Error)]
pub enum LibraryAskError {
    #[error("cannot start {program}: {reason}")]
    Start { program: String, reason: String },
    #[error("the framework's worker did not answer about the model: {0}")]
    Answer(String),
}

/// A library model the installed library refuses: the field at fault and
/// the worker's message (with the closest names).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LibraryRefusal {
    pub field: String,
    pub message: String,
}

/// Library names matching a search, at most 50 of each library.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct LibraryNames {
    #[serde(default)]
    pub timm: Vec<String>,
    #[serde(default)]
    pub hf: Vec<String>,
    #[serde(default)]
    pub keras: Vec<String>,
    /// Each listed name's family: timm's module (`resnet`,
    /// `vision_transformer`), `decoder` or `encoder` for a transformers
    /// model type the studio trains, keras.applications' module.
    #[serde(default)]
    pub families: std::collections::BTreeMap<String, String>,
}

/// A library model counted at its defaults (`params`), or why it could not
/// be built (`error`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CountedModel {
    pub name: String,
    #[serde(default)]
    pub family: Option<String>,
    #[serde(default)]
    pub params: Option<u64>,
    #[serde(default)]
    pub error: Option<String>,
}

fn ask_worker(
    cmd: &WorkerCommand,
    command: &[&str],
    extra: &[&str],
    stdin: &str,
) -> Result<String, LibraryAskError> {
    let mut child = Command::new(&cmd.program)
        .args(["-m", "trainbench_worker"])
        .args(command)
        .args(extra)
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| LibraryAskError::Start {
            program: cmd.program.display().to_string(),
            reason: e.to_string(),
        })?;
    if let Some(mut input) = child.stdin.take() {
        // A worker that exits before reading says why on stderr.
        let _ = input.write_all(stdin.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| LibraryAskError::Answer(e.to_string()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(line) if out.status.success() => Ok(line.to_owned()),
        _ => Err(LibraryAskError::Answer(super::last_line(&out.stderr))),
    }
}

/// A library model asked about, with the data set it is to train on (an
/// `hf:` encoder has no labels in the text corpus, which only the library
/// knows it to be).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct AskedModel<'a> {
    #[serde(flatten)]
    pub config: &'a LibraryConfig,
    pub data: &'a str,
}

/// For each of `models`: `None` when the libraries of `framework`'s worker
/// have it (and it can train on its data), else why not.
pub fn check_library_models(
    cmd: &WorkerCommand,
    framework: &str,
    models: &[AskedModel<'_>],
) -> Result<Vec<Option<LibraryRefusal>>, LibraryAskError> {
    let input =
        serde_json::to_string(models).map_err(|e| LibraryAskError::Answer(e.to_string()))?;
    let line = ask_worker(cmd, &[framework, "models"], &[], &input)?;
    let answers: Vec<Option<LibraryRefusal>> =
        serde_json::from_str(&line).map_err(|e| LibraryAskError::Answer(format!("{e}: {line}")))?;
    if answers.len() != models.len() {
        return Err(LibraryAskError::Answer(format!(
            "{} answers for {} models",
            answers.len(),
            models.len()
        )));
    }
    Ok(answers)
}

/// The library names of `framework`'s worker containing `text`
/// (case-insensitive), at most `limit` of each library: timm and Hugging
/// Face in PyTorch, Keras in TensorFlow.
pub fn search_library_models(
    cmd: &WorkerCommand,
    framework: &str,
    text: &str,
    limit: usize,
) -> Result<LibraryNames, LibraryAskError> {
    let limit = limit.to_string();
    let extra = ["--search", text, "--limit", &limit];
    let line = ask_worker(cmd, &[framework, "models"], &extra, "")?;
    serde_json::from_str(&line).map_err(|e| LibraryAskError::Answer(format!("{e}: {line}")))
}

/// The parameter counts of library `names` at their defaults, counted by
/// `framework`'s worker (`models --sizes`: on PyTorch's meta device for timm
/// and transformers, so no weights are allocated; keras builds each).
pub fn count_library_models(
    cmd: &WorkerCommand,
    framework: &str,
    names: &[String],
) -> Result<Vec<CountedModel>, LibraryAskError> {
    let input = serde_json::to_string(names).map_err(|e| LibraryAskError::Answer(e.to_string()))?;
    let line = ask_worker(cmd, &[framework, "models"], &["--sizes"], &input)?;
    serde_json::from_str(&line).map_err(|e| LibraryAskError::Answer(format!("{e}: {line}")))
}

/// A library model or a model from a person's file, built once by its
/// framework's worker (nothing trains): what it counted, or why it refused.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Described {
    Counted {
        param_count: u64,
        /// `None` where the framework gave no count (MFU not measured).
        flops_per_sample: Option<f64>,
        flops_method: Option<String>,
        /// How the harness trains it: `image`, `bert` (classified tokens),
        /// `decoder` (next tokens).
        family: String,
        /// One sample's shape as the harness feeds it (channels × height ×
        /// width, or tokens: a decoder's one more, the last one's next).
        input: Option<Vec<u64>>,
    },
    Refused {
        field: String,
        message: String,
    },
}

/// Builds the model of `plan_json` (a worker plan) in `framework`'s worker
/// (`python -m trainbench_worker FRAMEWORK describe`) and counts it.
pub fn describe_model(
    cmd: &WorkerCommand,
    framework: &str,
    plan_json: &str,
) -> Result<Described, LibraryAskError> {
    let line = ask_worker(cmd, &[framework, "describe"], &[], plan_json)?;
    serde_json::from_str(&line).map_err(|e| LibraryAskError::Answer(format!("{e}: {line}")))
}

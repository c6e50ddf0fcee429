//! `trainbench run`'s flags and its TOML file, merged into one sweep request:
//! several comma-separated values for one flag (or a TOML array) make a sweep,
//! the cross product of every list.

use std::path::PathBuf;

use clap::Args;
use trainbench_app::first_run;
use trainbench_app::sweep::SweepRequest;
use trainbench_core::batch_search::parse_memory;
use trainbench_core::Framework;

use crate::error::{bad, CliError};
use crate::script_flags::{self, toml_str};

#[derive(Args, Clone, Default)]
#[command(allow_negative_numbers = true)]
pub struct RunArgs {
    /// TOML file with the same keys as the flags (snake_case; lists make a
    /// sweep); a flag given on the command line wins over the file.
    #[arg(long, value_name = "FILE.toml")]
    pub config: Option<PathBuf>,
    /// Model(s), comma-separated for a sweep: a catalogue name (`trainbench
    /// models` lists them), timm:NAME, hf:MODEL_TYPE[?key=value&…], or
    /// PATH.py:FUNCTION — your own file, whose FUNCTION returns a
    /// torch.nn.Module, a keras.Model or a Flax linen module (with
    /// --input-shape and --num-classes). Default: resnet_mini.
    #[arg(long, value_name = "M[,M…]")]
    pub model: Option<String>,
    /// Your own training script (PATH.py), which reports its steps with
    /// `import trainbench` and `trainbench.step(samples=N, loss=loss)`; its
    /// arguments follow `--`. It runs in --framework's Python environment
    /// (pytorch, tensorflow or jax) and sets its own model, data, batch and
    /// precision. Not with --model. Default: none.
    #[arg(long, value_name = "PATH.py", conflicts_with = "model")]
    pub script: Option<String>,
    /// Arguments of --script to compare, one alternative per flag, written as
    /// on a command line: `--script-args '--lr 1e-3' --script-args '--lr
    /// 3e-3'`. Not with arguments after `--`. Default: those after `--`.
    #[arg(long = "script-args", value_name = "ARGS", allow_hyphen_values = true)]
    pub script_args: Vec<String>,
    /// The arguments --script runs with (everything after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub script_argv: Vec<String>,
    /// tch (PyTorch's C++ core, libtorch, driven from Rust), pytorch,
    /// tensorflow or jax; FRAMEWORK@NAME for a registered environment
    /// (`trainbench env`). Comma-separated for a sweep. Default: tch.
    #[arg(long, value_name = "F[@ENV][,…]")]
    pub framework: Option<String>,
    /// fp32, tf32 (GPU matrix units, fp32 storage), amp-bf16 or amp-fp16
    /// (automatic mixed precision). Comma-separated for a sweep. Default: fp32.
    #[arg(long, value_name = "P[,P…]")]
    pub precision: Option<String>,
    /// off (each framework's default: eager tch/PyTorch, a tf.function graph,
    /// jax.jit), on or max-autotune (torch.compile, pytorch only), xla
    /// (tensorflow only). Comma-separated for a sweep. Default: off.
    #[arg(long, value_name = "C[,C…]")]
    pub compile: Option<String>,
    /// cpu, cuda or cuda:N. Default: the first GPU NVML sees, else cpu.
    #[arg(long, value_name = "cpu|cuda:N")]
    pub device: Option<String>,
    /// Devices each run trains on (data parallel, --batch-size per device),
    /// whole numbers ≥ 1, comma-separated for a sweep (1,2,4 measures
    /// scaling). Default: 1.
    #[arg(long, value_name = "N[,N…]")]
    pub devices: Option<String>,
    /// With --devices ≥ 2: ddp (a full replica per device) or fsdp (PyTorch
    /// only: parameters, gradients and optimizer state sharded). Default: ddp.
    #[arg(long, value_name = "ddp|fsdp")]
    pub parallel: Option<String>,
    /// Batch per device: whole numbers ≥ 1 (comma-separated for a
    /// sweep), or `max` for the largest power of two that fits (probed, each
    /// probe in a fresh worker; on the CPU within --memory-limit). Default: 64.
    #[arg(long, value_name = "B[,B…]|max")]
    pub batch_size: Option<String>,
    /// With --batch-size max: the largest batch to try, a whole number ≥ 1.
    /// Default: 65536.
    #[arg(long, value_name = "N")]
    pub batch_cap: Option<u32>,
    /// With --batch-size max: the first batch to try, a whole number ≥ 1
    /// (doubling up from it; halving down when it does not fit), to skip the
    /// probes of batches known to fit. Default: 1.
    #[arg(long, value_name = "N")]
    pub batch_from: Option<u32>,
    /// Resident memory a worker's processes may use, e.g. 8G, 8GiB or 512MiB:
    /// a worker over it is stopped (out of memory). Needed by --batch-size max
    /// on the CPU. Default: no limit.
    #[arg(long, value_name = "SIZE")]
    pub memory_limit: Option<String>,
    /// Training steps, a whole number ≥ 1 (not with --epochs). Default: 100
    /// (the quick benchmark — no model, length or data given — trains 5 epochs).
    #[arg(long, value_name = "S")]
    pub steps: Option<i64>,
    /// Passes over the training data, a whole number ≥ 1 (not with --steps).
    /// Default: none (--steps applies).
    #[arg(long, value_name = "E")]
    pub epochs: Option<i64>,
    /// Run on a remote host of the studio's list (`trainbench host add`)
    /// instead of this machine. Default: this machine.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Machines each run spans, with --devices devices each (on a Slurm host,
    /// a host with peers, or a Ray cluster), 1 to 4096. Default: 1.
    #[arg(long, value_name = "N")]
    pub nodes: Option<i64>,
    /// synthetic (random tensors in memory: no data loading measured), mnist
    /// (the MNIST sample), cifar10:DIR, text or text:FILE (byte-level tokens,
    /// decoder models), folder:DIR (JPEG/PNG images in train/<class>/ and
    /// val/<class>/, or <class>/). Default: synthetic (mnist for the quick
    /// benchmark).
    #[arg(long, value_name = "SOURCE")]
    pub data: Option<String>,
    /// Workers that decode and augment an image folder while training runs
    /// (DataLoader processes, tf.data parallel calls, JAX decoding threads),
    /// 0 to 64; 0: the training thread decodes. Only with --data folder:DIR.
    /// One number for a run; `tune` searches a comma list. Default: 2.
    #[arg(long, value_name = "N[,N…]", value_delimiter = ',')]
    pub loader_workers: Vec<i64>,
    /// Classes of the classification head, a whole number ≥ 1 (fixed by the
    /// data set for mnist, cifar10 and an image folder). Default: the model's.
    #[arg(long, value_name = "C")]
    pub num_classes: Option<i64>,
    /// Tokens per sequence of a text model (BERT, the decoders), a whole number
    /// ≥ 1. Default: the model's.
    #[arg(long, value_name = "T")]
    pub seq_len: Option<i64>,
    /// Pixels per side of an image model's input (ViT: a multiple of its
    /// patch size; ResNet: at least 32, or 8 for the small ones); FLOPs and
    /// MFU follow it. Not with mnist or cifar10 (their size is fixed).
    /// Default: the model's (224 for the ImageNet models).
    #[arg(long, value_name = "PX")]
    pub image_size: Option<i64>,
    /// What a model from your file (PATH.py:FUNCTION) takes: CxSxS images
    /// (channels × height × width, square: 3x224x224), fed NCHW to PyTorch,
    /// or tokens:N (sequences of N token ids, with --vocab-size). Not with
    /// mnist or cifar10 (they fix it). Default: the catalogue model's input
    /// (a model from your file needs it).
    #[arg(long, value_name = "CxSxS|tokens:N")]
    pub input_shape: Option<String>,
    /// What a library or file model is called in tables and comparisons: a
    /// PyTorch file and a Keras file of one architecture named alike compare
    /// as one model (their parameter counts compared, a difference warned).
    /// Default: the model's reference.
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// With --input-shape tokens:N: token ids run from 0 to this − 1.
    /// Default: none (needed with tokens:N).
    #[arg(long, value_name = "V")]
    pub vocab_size: Option<i64>,
    /// Held-out accuracy to reach, a fraction in (0, 1], e.g. 0.95: the time to
    /// reach it is measured and the run stops there unless
    /// --no-stop-at-target. Default: none (0.95 for the quick benchmark).
    #[arg(long, value_name = "A")]
    pub target_accuracy: Option<f64>,
    /// Evaluate on the held-out split every this many steps, a whole number
    /// ≥ 1. Default: once per epoch and at the end.
    #[arg(long, value_name = "STEPS")]
    pub eval_every: Option<i64>,
    /// A held-out loss to reach, a number > 0 (time-to-loss; per token for a
    /// decoder on --data text); the run stops there unless
    /// --no-stop-at-target. Default: none.
    #[arg(long, value_name = "L")]
    pub target_loss: Option<f64>,
    /// Keep training after the target is reached. Default: stop there.
    #[arg(long)]
    pub no_stop_at_target: bool,
    /// AdamW peak learning rate, a number > 0. Default: 1e-3 (2e-3 for the
    /// quick benchmark).
    #[arg(long, value_name = "LR")]
    pub lr: Option<f64>,
    /// Steps per timing window, a whole number ≥ 1: throughput is measured
    /// per window and the warm-up windows are left out. Default: 10.
    #[arg(long, value_name = "K")]
    pub window_steps: Option<i64>,
    /// CPU threads a framework may use for its operators, a whole number ≥ 1.
    /// Default: the framework's own choice (OMP_NUM_THREADS where set).
    /// Several (`1,2,4`) make a thread-count sweep, each its own configuration.
    #[arg(long, value_name = "T[,T…]", value_delimiter = ',')]
    pub threads: Vec<i64>,
    /// Environment variables to compare, one alternative per flag, e.g.
    /// `--env 'XLA_FLAGS=--xla_cpu_multi_thread_eigen=false' --env default`:
    /// NAME=VALUE, several joined by `;`; `default` sets none. Only the
    /// frameworks' own variables (XLA_…, TF_…, JAX_…, PYTORCH_…, TORCH_…,
    /// CUDNN_…, NCCL_…, ONEDNN_…); each run states in its hello what it ran
    /// with. Default: none set.
    #[arg(long = "env", value_name = "NAME=VALUE[;…]")]
    pub env: Vec<String>,
    /// cuDNN's benchmark mode (torch.backends.cudnn.benchmark) for pytorch
    /// and tch on a GPU: `on`, `off`, or `on,off` to compare them. Default:
    /// the worker's own (on for a convolutional network).
    #[arg(long, value_name = "on|off[,…]", value_delimiter = ',', value_parser = on_off)]
    pub cudnn_benchmark: Vec<bool>,
    /// Times each configuration runs, a whole number ≥ 1, interleaved (A B A B …) so that
    /// drift in the machine hits every configuration alike. Default: 1.
    #[arg(long, value_name = "R")]
    pub repeats: Option<u32>,
    /// An offering of the price table (`trainbench prices`) for cost per
    /// epoch. Default: none (no cost shown).
    #[arg(long, value_name = "OFFERING")]
    pub price: Option<String>,
    /// Samples in one epoch, for epoch time and cost per epoch where the
    /// data has no size of its own (synthetic data), a whole number ≥ 1.
    /// Default: the data set's own size; on synthetic data ImageNet-1k's
    /// 1,281,167 training images for an image model, and no epoch (no cost
    /// per epoch) for a text model.
    #[arg(long, value_name = "SAMPLES")]
    pub epoch_size: Option<i64>,
    /// After the timed part, profile a few steps with the framework's own
    /// profiler: top operators and categories by self time. Default: off.
    #[arg(long)]
    pub profile: bool,
    /// Print what each configuration's worker would be started with (command
    /// and stdin, one JSON line each) and run nothing.
    #[arg(long)]
    pub print_plan: bool,
    /// Seconds a worker may stay silent before the run is stopped as
    /// `timeout`, a number > 0. Default: 600.
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Print one JSON document (errors too, as {"error": {code, field, message}}).
    #[arg(long)]
    pub json: bool,
}

fn list(s: &str) -> Vec<String> {
    s.split(',')
        .map(|x| x.trim().to_owned())
        .filter(|x| !x.is_empty())
        .collect()
}

pub(crate) fn ints(field: &str, s: &str) -> Result<Vec<i64>, CliError> {
    list(s)
        .iter()
        .map(|x| {
            x.parse::<i64>().map_err(|_| {
                bad(
                    field,
                    format!(
                        "{field} = {x} is not allowed: expected whole numbers, comma-separated"
                    ),
                )
            })
        })
        .collect()
}

/// `on` / `off` (also true / false) as a flag's value.
/// A run's loader workers: one number (a list is `tune`'s axis).
fn one_loader_count(given: &[i64]) -> Result<Option<i64>, CliError> {
    match given {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        many => {
            let text: Vec<String> = many.iter().map(ToString::to_string).collect();
            Err(bad(
                "loader_workers",
                format!(
                    "loader_workers = {} is not allowed: expected one number from 0 to 64 (`trainbench tune --loader-workers {}` searches several)",
                    text.join(","),
                    text.join(",")
                ),
            ))
        }
    }
}

fn on_off(s: &str) -> Result<bool, String> {
    match s.trim() {
        "on" | "true" => Ok(true),
        "off" | "false" => Ok(false),
        other => Err(format!(
            "cudnn_benchmark = {other} is not allowed: expected on or off"
        )),
    }
}

/// A `--config` file's TOML table.
fn read_config(path: &std::path::Path) -> Result<toml::Table, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        bad(
            "config",
            format!("config = {} cannot be read: {e}", path.display()),
        )
    })?;
    let table: toml::Table = text.parse().map_err(|e| {
        bad(
            "config",
            format!("config = {} is not valid TOML: {e}", path.display()),
        )
    })?;
    Ok(table)
}

/// The settings of a TOML config file, each where the flags left it unset.
fn apply_config_file(a: &mut RunArgs, path: &std::path::Path) -> Result<(), CliError> {
    apply_settings(a, &read_config(path)?, &path.display().to_string())
}

/// Run settings with the config file's keys (from the file, or the MCP
/// server's `start_run`), each where the flags left it unset; `origin` says
/// where a refused value came from.
pub fn apply_settings(a: &mut RunArgs, table: &toml::Table, origin: &str) -> Result<(), CliError> {
    for (key, value) in table {
        let s = toml_str(value);
        let num = |field: &str| {
            s.parse::<i64>().map_err(|_| {
                bad(
                    field,
                    format!(
                        "{field} = {s} (in {}) is not allowed: expected a whole number",
                        origin
                    ),
                )
            })
        };
        let argv = a.script_argv.is_empty();
        if script_flags::from_config(key, value, &mut a.script, &mut a.script_args, argv) {
            continue;
        }
        match key.as_str() {
            "model" => a.model = a.model.take().or(Some(s)),
            "framework" => a.framework = a.framework.take().or(Some(s)),
            "precision" => a.precision = a.precision.take().or(Some(s)),
            "compile" => a.compile = a.compile.take().or(Some(s)),
            "device" => a.device = a.device.take().or(Some(s)),
            "devices" => a.devices = a.devices.take().or(Some(s)),
            "parallel" => a.parallel = a.parallel.take().or(Some(s)),
            "batch_size" => a.batch_size = a.batch_size.take().or(Some(s)),
            "batch_cap" => {
                a.batch_cap = a.batch_cap.take().or(Some(u32::try_from(num("batch_cap")?).map_err(|_| {
                    bad("batch_cap", format!("batch_cap = {s} is not allowed: expected a whole number ≥ 1"))
                })?))
            }
            "batch_from" => {
                a.batch_from = a.batch_from.take().or(Some(u32::try_from(num("batch_from")?).map_err(|_| {
                    bad("batch_from", format!("batch_from = {s} is not allowed: expected a whole number ≥ 1"))
                })?))
            }
            "image_size" => a.image_size = a.image_size.take().or(Some(num("image_size")?)),
            "input_shape" => a.input_shape = a.input_shape.take().or(Some(s)),
            "model_name" => a.model_name = a.model_name.take().or(Some(s)),
            "vocab_size" => a.vocab_size = a.vocab_size.take().or(Some(num("vocab_size")?)),
            "memory_limit" => a.memory_limit = a.memory_limit.take().or(Some(s)),
            "data" => a.data = a.data.take().or(Some(s)),
            "host" => a.host = a.host.take().or(Some(s)),
            "nodes" => a.nodes = a.nodes.take().or(Some(num("nodes")?)),
            "steps" => a.steps = a.steps.take().or(Some(num("steps")?)),
            "epochs" => a.epochs = a.epochs.take().or(Some(num("epochs")?)),
            "num_classes" => a.num_classes = a.num_classes.take().or(Some(num("num_classes")?)),
            "loader_workers" if a.loader_workers.is_empty() => a.loader_workers = vec![num("loader_workers")?],
            "loader_workers" => {}
            "seq_len" => a.seq_len = a.seq_len.take().or(Some(num("seq_len")?)),
            "window_steps" => a.window_steps = a.window_steps.take().or(Some(num("window_steps")?)),
            "eval_every" => a.eval_every = a.eval_every.take().or(Some(num("eval_every")?)),
            "threads" if a.threads.is_empty() => {
                a.threads = s
                    .split(',')
                    .map(|t| {
                        t.trim().parse::<i64>().map_err(|_| {
                            bad("threads", format!("threads = {t} (in {}) is not allowed: expected whole numbers ≥ 1", origin))
                        })
                    })
                    .collect::<Result<_, _>>()?
            }
            "threads" => {}
            // Each element one alternative (a value may hold commas).
            "env" if a.env.is_empty() => {
                a.env = match value.as_array() {
                    Some(list) => list.iter().map(toml_str).collect(),
                    None => vec![s],
                }
            }
            "env" => {}
            "cudnn_benchmark" if a.cudnn_benchmark.is_empty() => {
                a.cudnn_benchmark = s
                    .split(',')
                    .map(|v| on_off(v).map_err(|m| bad("cudnn_benchmark", m)))
                    .collect::<Result<_, _>>()?
            }
            "cudnn_benchmark" => {}
            "repeats" => a.repeats = a.repeats.take().or(Some(u32::try_from(num("repeats")?).map_err(|_| bad("repeats", format!("repeats = {s} is not allowed: expected a whole number ≥ 1")))?)),
            "target_accuracy" => {
                a.target_accuracy = a.target_accuracy.take().or(Some(s.parse().map_err(|_| {
                    bad("target_accuracy", format!("target_accuracy = {s} is not allowed: expected a number in (0, 1]"))
                })?))
            }
            "target_loss" => {
                a.target_loss = a.target_loss.take().or(Some(s.parse().map_err(|_| {
                    bad("target_loss", format!("target_loss = {s} is not allowed: expected a number > 0"))
                })?))
            }
            "price" => a.price = a.price.take().or(Some(s)),
            "epoch_size" => a.epoch_size = a.epoch_size.take().or(Some(num("epoch_size")?)),
            "profile" => {
                a.profile = a.profile
                    || value.as_bool().ok_or_else(|| {
                        bad("profile", format!("profile = {s} (in {}) is not allowed: expected true or false", origin))
                    })?
            }
            "lr" => {
                a.lr = a.lr.take().or(Some(s.parse().map_err(|_| {
                    bad("lr", format!("lr = {s} is not allowed: expected a number > 0"))
                })?))
            }
            other => {
                return Err(bad(other, format!("{other} (in {}) is not a run setting: expected one of host, nodes, model, framework, precision, compile, device, devices, parallel, batch_size, batch_cap, batch_from, memory_limit, steps, epochs, data, loader_workers, num_classes, seq_len, image_size, input_shape, vocab_size, target_accuracy, target_loss, eval_every, lr, window_steps, threads, env, cudnn_benchmark, model_name, repeats, price, epoch_size, profile, script, script_args", origin)))
            }
        }
    }
    Ok(())
}

/// Flags and config file merged, lists split, defaults filled.
/// The flags with the TOML file's settings where the flags left them unset.
pub fn with_config_file(a: &RunArgs) -> Result<RunArgs, CliError> {
    let mut a = a.clone();
    if let Some(path) = a.config.clone() {
        apply_config_file(&mut a, &path)?;
    }
    Ok(a)
}

pub fn merge_config(a: &RunArgs) -> Result<SweepRequest, CliError> {
    let a = with_config_file(a)?;
    // The quick default (`trainbench_app::first_run`): a small model on the
    // MNIST sample, to 95 % (reached within 5 epochs at lr 2e-3).
    let quick = a.model.is_none()
        && a.script.is_none()
        && a.steps.is_none()
        && a.epochs.is_none()
        && a.data.is_none();
    let (steps, epochs) = match (a.steps, a.epochs) {
        (None, None) if quick => (None, Some(first_run::QUICK_EPOCHS)),
        // A script runs as long as it runs, unless --steps ends it sooner.
        (None, None) if a.script.is_some() => (None, None),
        (None, None) => (Some(100), None),
        other => other,
    };
    let batch_text = a.batch_size.as_deref().unwrap_or("64");
    let batch_max = batch_text.trim() == "max";
    if !batch_max && batch_text.split(',').any(|b| b.trim() == "max") {
        return Err(bad(
            "batch_size",
            format!(
                "batch_size = {batch_text} is not allowed: expected whole numbers, or max alone"
            ),
        ));
    }
    let memory_limit_bytes = match a.memory_limit.as_deref() {
        None => None,
        Some(m) => Some(parse_memory(m).ok_or_else(|| {
            bad(
                "memory_limit",
                format!(
                    "memory_limit = {m} is not allowed: expected a size such as 8G, 8GiB or 512MiB"
                ),
            )
        })?),
    };
    let mut req = SweepRequest {
        model: list(a.model.as_deref().unwrap_or("resnet_mini")),
        framework: list(a.framework.as_deref().unwrap_or(Framework::Tch.as_str())),
        precision: list(a.precision.as_deref().unwrap_or("fp32")),
        compile: list(a.compile.as_deref().unwrap_or("off")),
        devices: ints("devices", a.devices.as_deref().unwrap_or("1"))?,
        parallel: a.parallel.clone(),
        batch_size: if batch_max {
            Vec::new()
        } else {
            ints("batch_size", batch_text)?
        },
        device: a.device.clone(),
        steps,
        epochs,
        data: a.data.clone().unwrap_or_else(|| {
            if quick {
                "mnist".into()
            } else {
                "synthetic".into()
            }
        }),
        loader_workers: one_loader_count(&a.loader_workers)?,
        host: a.host.clone(),
        nodes: a.nodes,
        num_classes: a.num_classes,
        seq_len: a.seq_len,
        image_size: a.image_size,
        input_shape: a.input_shape.clone(),
        model_name: a.model_name.clone(),
        vocab_size: a.vocab_size,
        target_accuracy: a
            .target_accuracy
            .or(quick.then_some(first_run::QUICK_TARGET)),
        target_loss: a.target_loss,
        eval_every_steps: a.eval_every,
        stop_at_target: !a.no_stop_at_target,
        window_steps: a.window_steps,
        threads: a.threads.clone(),
        env: a.env.clone(),
        cudnn_benchmark: a.cudnn_benchmark.clone(),
        lr: a.lr.or(quick.then_some(first_run::QUICK_LR)),
        repeats: i64::from(a.repeats.unwrap_or(1)),
        price: a.price.clone(),
        epoch_size: a.epoch_size,
        profile: a.profile,
        batch_max,
        batch_cap: a.batch_cap,
        batch_from: a.batch_from,
        memory_limit_bytes,
        ..SweepRequest::default()
    };
    let flags = script_flags::ScriptFlags {
        script: a.script.as_deref(),
        script_args: &a.script_args,
        script_argv: &a.script_argv,
        framework_given: a.framework.is_some(),
        batch_size: a.batch_size.as_deref(),
    };
    script_flags::apply(&flags, &mut req)?;
    Ok(req)
}

/// `--timeout` as the silence a worker is allowed (600 s unless given).
pub fn silence_timeout(a: &RunArgs) -> Result<std::time::Duration, CliError> {
    match a.timeout.unwrap_or(600.0) {
        t if t.is_finite() && t > 0.0 => Ok(std::time::Duration::from_secs_f64(t)),
        t => Err(bad(
            "timeout",
            format!("timeout = {t} is not allowed: expected seconds > 0"),
        )),
    }
}

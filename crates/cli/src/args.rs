//! Command-line and TOML arguments. Several comma-separated values for one
//! flag (or a TOML array) make a sweep: the cross product of every list.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use trainbench_app::sweep::SweepRequest;
use trainbench_core::batch_search::parse_memory;
use trainbench_core::Framework;

use crate::error::{bad, CliError};

#[derive(Parser)]
#[command(
    name = "trainbench",
    version,
    about = "TrainBench Studio, headless: measured training benchmarks"
)]
pub struct Cli {
    /// SQLite database (default: $TRAINBENCH_DB, else ~/.local/share/trainbench/trainbench.sqlite).
    #[arg(long, global = true)]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run a benchmark (a sweep when a flag has several comma-separated values).
    Run(Box<RunArgs>),
    /// Parameter count and FLOPs per training sample of a model.
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
        #[arg(long)]
        json: bool,
    },
    /// Every stored run with its headline numbers.
    Runs {
        #[arg(long)]
        json: bool,
    },
    /// One run in full: configuration, summary, provenance, errors.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Runs side by side: intervals, deltas against a baseline, the winner of
    /// each metric, scaling, warnings.
    Compare {
        ids: Vec<String>,
        /// The run to compute deltas against (default: the first).
        #[arg(long)]
        baseline: Option<i64>,
        /// One entry per configuration (its repeats together) instead of per run.
        #[arg(long)]
        by_config: bool,
        #[arg(long)]
        json: bool,
    },
    /// Why A is faster than B: the gap in time per sample split over the
    /// parts of the step (data, forward, backward, communication, optimizer)
    /// from the two runs' step breakdowns.
    Explain {
        a: i64,
        b: i64,
        /// Each side is its run's configuration, its repeats averaged.
        #[arg(long)]
        by_config: bool,
        #[arg(long)]
        json: bool,
    },
    /// Saved comparison sessions: save, list, show, rename, delete.
    Session {
        #[command(subcommand)]
        command: SessionCommand,
        #[arg(long, global = true)]
        json: bool,
    },
    /// Write a PDF report, CSV, a chart image or a session file.
    Export {
        #[command(subcommand)]
        command: ExportCommand,
    },
    /// Import a session file exported by another studio (all or nothing).
    Import {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Delete finished runs with everything stored about them.
    Delete {
        ids: Vec<String>,
        /// Confirm: without it nothing is deleted.
        #[arg(long)]
        yes: bool,
    },
    /// Framework environments: list, check, install, register another version.
    Env {
        #[command(subcommand)]
        command: Option<EnvCommand>,
        #[arg(long, global = true)]
        json: bool,
    },
    /// The GPU acceptance suite: every installed framework × precision on the
    /// GPUs present, checked (exit 3 without a GPU).
    GpuCheck(Box<crate::gpu_check::GpuCheckArgs>),
    /// The bench kit: a folder that measures where the studio is not installed.
    Kit {
        #[command(subcommand)]
        command: crate::kit_cmd::KitCommand,
    },
    /// Remote hosts over SSH: add, list, check, remove.
    Host {
        #[command(subcommand)]
        command: Option<HostCommand>,
        #[arg(long, global = true)]
        json: bool,
    },
    /// Follow a run on a remote host again (after a lost connection or a
    /// stopped studio) until it ends; nothing it measured is lost.
    Attach {
        id: i64,
        /// Stop waiting for a run whose host is gone for good: stored as
        /// interrupted (what was read is kept), so it can be deleted.
        #[arg(long)]
        abandon: bool,
        #[arg(long)]
        json: bool,
    },
    /// What the studio starts on a remote host: runs DIR/job.json there.
    #[command(hide = true)]
    Agent {
        #[command(subcommand)]
        command: AgentCommand,
    },
    /// The price table used for cost per epoch (list, add, edit).
    Prices {
        #[command(subcommand)]
        command: Option<PriceCommand>,
        #[arg(long, global = true)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum HostCommand {
    /// Adds a host (or replaces one of that name): copies the kit there and
    /// checks which frameworks and GPUs it has.
    Add {
        name: String,
        /// ssh://[user@]host[:port][/folder] (the folder for kits and runs;
        /// default ~/.trainbench-remote). ~/.ssh/config applies.
        url: String,
        /// An interpreter on the host to look for frameworks in (repeatable;
        /// default python3).
        #[arg(long)]
        python: Vec<String>,
        /// KEY=VALUE exported before every command there (repeatable), e.g.
        /// SLURM_CONF=/etc/slurm/other.conf.
        #[arg(long)]
        env: Vec<String>,
        /// A Slurm login host: runs go through sbatch (several nodes with --nodes).
        #[arg(long)]
        slurm: bool,
        /// The Slurm partition (default: the cluster's default).
        #[arg(long, requires = "slurm")]
        partition: Option<String>,
        /// Another machine for runs over several nodes without Slurm
        /// (repeatable, node 1, 2, …): ssh://[user@]host[:port][/folder], reached
        /// from the host with its ssh; same interpreter paths.
        #[arg(long, conflicts_with = "slurm")]
        peer: Vec<String>,
    },
    /// The hosts and what their last check found.
    List,
    /// Checks a host again (and sends the kit if this studio changed).
    Check { name: String },
    /// Forgets a host (its runs stay stored).
    Remove { name: String },
}

#[derive(Subcommand, Debug)]
pub enum AgentCommand {
    /// Runs the job in DIR, journaling to DIR/journal.jsonl.
    Run { dir: PathBuf },
}

/// Which runs a comparison holds: a saved session, or run ids.
#[derive(Args, Debug, Clone)]
pub struct Selection {
    /// Run ids (at least 2), when no session is named.
    pub ids: Vec<String>,
    /// A saved session, by name or id.
    #[arg(long, conflicts_with = "ids")]
    pub session: Option<String>,
    /// The run to compute deltas against (default: the session's, else the first).
    #[arg(long)]
    pub baseline: Option<i64>,
    /// One entry per configuration (repeats together) instead of per run.
    #[arg(long)]
    pub by_config: bool,
}

#[derive(Subcommand)]
pub enum SessionCommand {
    /// Save runs as a named comparison.
    Save {
        name: String,
        ids: Vec<String>,
        #[arg(long)]
        baseline: Option<i64>,
        /// One entry per configuration (repeats together).
        #[arg(long)]
        by_config: bool,
        /// Charts to show, comma separated (default: all).
        #[arg(long, value_delimiter = ',')]
        charts: Vec<String>,
    },
    /// Every saved session.
    List,
    /// A session's comparison.
    Show {
        name: String,
    },
    Rename {
        name: String,
        new_name: String,
    },
    Delete {
        name: String,
    },
}

#[derive(Subcommand)]
pub enum ExportCommand {
    /// The PDF report of a session or of runs.
    Pdf {
        #[command(flatten)]
        selection: Selection,
        #[arg(short, long)]
        output: PathBuf,
        /// Report title (default: the session's name).
        #[arg(long)]
        title: Option<String>,
    },
    /// Runs as CSV (all runs, a session's or the ids given), or one run's raw
    /// windows, evaluations or telemetry with --raw and --run.
    Csv {
        ids: Vec<String>,
        #[arg(long, conflicts_with = "ids")]
        session: Option<String>,
        /// windows, evals or telemetry (needs --run).
        #[arg(long, requires = "run")]
        raw: Option<String>,
        #[arg(long)]
        run: Option<i64>,
        /// File to write (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// One chart of a session or of runs, as SVG or PNG (by the file's extension).
    Chart {
        /// throughput, peak_memory, cost_per_epoch, time_to_accuracy,
        /// throughput_over_time, loss_over_time, accuracy_over_time, scaling.
        kind: String,
        #[command(flatten)]
        selection: Selection,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// A saved session with its runs' raw data, as one portable JSON file.
    Session {
        name: String,
        #[arg(short, long)]
        output: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum EnvCommand {
    /// Every environment, whether it is ready, and its framework version.
    List,
    /// Starts each ready environment's worker: version and the GPUs it sees.
    Check,
    /// Creates the studio's environment for a framework (pytorch, tensorflow, jax) from PyPI.
    Install {
        framework: String,
        /// Install the CUDA build even when no NVIDIA GPU is seen (or the CPU build with --cpu).
        #[arg(long)]
        gpu: bool,
        #[arg(long, conflicts_with = "gpu")]
        cpu: bool,
    },
    /// Registers another environment of a framework (e.g. an older PyTorch) as FRAMEWORK@NAME.
    Register {
        name: String,
        #[arg(long)]
        framework: String,
        /// Its python executable.
        #[arg(long)]
        python: PathBuf,
    },
    /// Forgets a registered environment (its files stay).
    Remove { name: String },
}

#[derive(Subcommand)]
pub enum PriceCommand {
    List,
    Add(PriceArgs),
    Edit(PriceArgs),
}

#[derive(Args, Clone)]
#[command(allow_negative_numbers = true)]
pub struct PriceArgs {
    pub offering: String,
    #[arg(long)]
    pub devices: Option<i64>,
    #[arg(long)]
    pub device: Option<String>,
    /// Price of the whole offering per hour.
    #[arg(long)]
    pub usd_per_hour: Option<f64>,
    /// Price per device-hour (default: usd-per-hour ÷ devices).
    #[arg(long)]
    pub usd_per_device_hour: Option<f64>,
    /// When the price was true (e.g. 2026-11).
    #[arg(long)]
    pub as_of: Option<String>,
    #[arg(long)]
    pub source: Option<String>,
}

#[derive(Args, Clone, Default)]
#[command(allow_negative_numbers = true)]
pub struct RunArgs {
    /// TOML file with the same keys as the flags (lists make a sweep); flags win.
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long)]
    pub framework: Option<String>,
    #[arg(long)]
    pub precision: Option<String>,
    /// off (the framework's default), on or max-autotune (pytorch's torch.compile), xla (tensorflow).
    #[arg(long)]
    pub compile: Option<String>,
    /// cpu or cuda:N (default: the first GPU NVML sees, else cpu).
    #[arg(long)]
    pub device: Option<String>,
    #[arg(long)]
    pub devices: Option<String>,
    /// With --devices ≥ 2: ddp (a replica per device; default) or fsdp (PyTorch, sharded).
    #[arg(long)]
    pub parallel: Option<String>,
    /// Batch per device: whole numbers (a list makes a sweep), or `max` for
    /// the largest power of two that fits (probed, each probe in a fresh
    /// worker; on the CPU within --memory-limit).
    #[arg(long)]
    pub batch_size: Option<String>,
    /// With --batch-size max: the largest batch to try (default 65536).
    #[arg(long)]
    pub batch_cap: Option<u32>,
    /// Resident memory a worker's processes may use, e.g. 8G or 512MiB: a
    /// worker over it is stopped (out of memory). Needed by --batch-size max
    /// on the CPU.
    #[arg(long)]
    pub memory_limit: Option<String>,
    #[arg(long)]
    pub steps: Option<i64>,
    #[arg(long)]
    pub epochs: Option<i64>,
    /// Run on a remote host of the studio's list (`trainbench host add`)
    /// instead of this machine.
    #[arg(long)]
    pub host: Option<String>,
    /// Machines each run spans, with --devices devices each (PyTorch through
    /// torchrun under Slurm; a Slurm host only).
    #[arg(long)]
    pub nodes: Option<i64>,
    /// synthetic, mnist, cifar10:DIR, text, text:FILE or folder:DIR (JPEG/PNG
    /// images in class folders: train/<class>/ and val/<class>/, or <class>/).
    #[arg(long)]
    pub data: Option<String>,
    /// Workers that decode and augment an image folder while training runs
    /// (DataLoader processes, tf.data parallel calls, JAX decoding threads;
    /// default 2; 0: the training thread decodes).
    #[arg(long)]
    pub loader_workers: Option<i64>,
    #[arg(long)]
    pub num_classes: Option<i64>,
    /// Tokens per sequence of a text model (BERT, the decoders; default: the model's).
    #[arg(long)]
    pub seq_len: Option<i64>,
    #[arg(long)]
    pub target_accuracy: Option<f64>,
    /// Evaluate on the held-out split every this many steps (default: once
    /// per epoch and at the end).
    #[arg(long)]
    pub eval_every: Option<i64>,
    /// A held-out loss to reach (time-to-loss; per token for a decoder on
    /// --data text); the run stops there unless --no-stop-at-target.
    #[arg(long)]
    pub target_loss: Option<f64>,
    /// Keep training after the target is reached (default: stop there).
    #[arg(long)]
    pub no_stop_at_target: bool,
    /// AdamW peak learning rate (default 1e-3; 2e-3 for the quick default).
    #[arg(long)]
    pub lr: Option<f64>,
    #[arg(long)]
    pub window_steps: Option<i64>,
    #[arg(long)]
    pub threads: Option<i64>,
    #[arg(long)]
    pub repeats: Option<u32>,
    /// Price-table offering for cost per epoch.
    #[arg(long)]
    pub price: Option<String>,
    /// After the timed part, profile a few steps with the framework's own
    /// profiler: top operators and categories by self time
    #[arg(long)]
    pub profile: bool,
    /// Print what each configuration's worker would be started with (command
    /// and stdin, one JSON line each) and run nothing.
    #[arg(long)]
    pub print_plan: bool,
    /// Seconds a worker may stay silent before the run is stopped as `timeout`.
    #[arg(long)]
    pub timeout: Option<f64>,
    #[arg(long)]
    pub json: bool,
}

fn list(s: &str) -> Vec<String> {
    s.split(',')
        .map(|x| x.trim().to_owned())
        .filter(|x| !x.is_empty())
        .collect()
}

fn ints(field: &str, s: &str) -> Result<Vec<i64>, CliError> {
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

/// A TOML value as a comma-separated string (arrays join).
fn toml_str(v: &toml::Value) -> String {
    match v {
        toml::Value::Array(a) => a.iter().map(toml_str).collect::<Vec<_>>().join(","),
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Flags and config file merged, lists split, defaults filled.
pub fn merge_config(a: &RunArgs) -> Result<SweepRequest, CliError> {
    let mut a = a.clone();
    if let Some(path) = &a.config {
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
        for (key, value) in &table {
            let s = toml_str(value);
            let num = |field: &str| {
                s.parse::<i64>().map_err(|_| {
                    bad(
                        field,
                        format!(
                            "{field} = {s} (in {}) is not allowed: expected a whole number",
                            path.display()
                        ),
                    )
                })
            };
            match key.as_str() {
                "model" => a.model = a.model.or(Some(s)),
                "framework" => a.framework = a.framework.or(Some(s)),
                "precision" => a.precision = a.precision.or(Some(s)),
                "compile" => a.compile = a.compile.or(Some(s)),
                "device" => a.device = a.device.or(Some(s)),
                "devices" => a.devices = a.devices.or(Some(s)),
                "parallel" => a.parallel = a.parallel.or(Some(s)),
                "batch_size" => a.batch_size = a.batch_size.or(Some(s)),
                "batch_cap" => {
                    a.batch_cap = a.batch_cap.or(Some(u32::try_from(num("batch_cap")?).map_err(|_| {
                        bad("batch_cap", format!("batch_cap = {s} is not allowed: expected a whole number ≥ 1"))
                    })?))
                }
                "memory_limit" => a.memory_limit = a.memory_limit.or(Some(s)),
                "data" => a.data = a.data.or(Some(s)),
                "host" => a.host = a.host.or(Some(s)),
                "nodes" => a.nodes = a.nodes.or(Some(num("nodes")?)),
                "steps" => a.steps = a.steps.or(Some(num("steps")?)),
                "epochs" => a.epochs = a.epochs.or(Some(num("epochs")?)),
                "num_classes" => a.num_classes = a.num_classes.or(Some(num("num_classes")?)),
                "loader_workers" => a.loader_workers = a.loader_workers.or(Some(num("loader_workers")?)),
                "seq_len" => a.seq_len = a.seq_len.or(Some(num("seq_len")?)),
                "window_steps" => a.window_steps = a.window_steps.or(Some(num("window_steps")?)),
                "eval_every" => a.eval_every = a.eval_every.or(Some(num("eval_every")?)),
                "threads" => a.threads = a.threads.or(Some(num("threads")?)),
                "repeats" => a.repeats = a.repeats.or(Some(u32::try_from(num("repeats")?).map_err(|_| bad("repeats", format!("repeats = {s} is not allowed: expected a whole number ≥ 1")))?)),
                "target_accuracy" => {
                    a.target_accuracy = a.target_accuracy.or(Some(s.parse().map_err(|_| {
                        bad("target_accuracy", format!("target_accuracy = {s} is not allowed: expected a number in (0, 1]"))
                    })?))
                }
                "target_loss" => {
                    a.target_loss = a.target_loss.or(Some(s.parse().map_err(|_| {
                        bad("target_loss", format!("target_loss = {s} is not allowed: expected a number > 0"))
                    })?))
                }
                "price" => a.price = a.price.or(Some(s)),
                "profile" => {
                    a.profile = a.profile
                        || value.as_bool().ok_or_else(|| {
                            bad("profile", format!("profile = {s} (in {}) is not allowed: expected true or false", path.display()))
                        })?
                }
                "lr" => {
                    a.lr = a.lr.or(Some(s.parse().map_err(|_| {
                        bad("lr", format!("lr = {s} is not allowed: expected a number > 0"))
                    })?))
                }
                other => {
                    return Err(bad(other, format!("{other} (in {}) is not a run setting: expected one of host, nodes, model, framework, precision, compile, device, devices, parallel, batch_size, batch_cap, memory_limit, steps, epochs, data, loader_workers, num_classes, seq_len, target_accuracy, target_loss, eval_every, lr, window_steps, threads, repeats, price, profile", path.display())))
                }
            }
        }
    }
    // The quick default: a small model on the MNIST sample, to 95 % (5 epochs
    // at lr 2e-3 reach it on this machine's CPU in about 10 s).
    let quick = a.model.is_none() && a.steps.is_none() && a.epochs.is_none() && a.data.is_none();
    let (steps, epochs) = match (a.steps, a.epochs) {
        (None, None) if quick => (None, Some(5)),
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
    Ok(SweepRequest {
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
        loader_workers: a.loader_workers,
        host: a.host.clone(),
        nodes: a.nodes,
        num_classes: a.num_classes,
        seq_len: a.seq_len,
        target_accuracy: a.target_accuracy.or(if quick { Some(0.95) } else { None }),
        target_loss: a.target_loss,
        eval_every_steps: a.eval_every,
        stop_at_target: !a.no_stop_at_target,
        window_steps: a.window_steps,
        threads: a.threads,
        lr: a.lr.or(if quick { Some(2e-3) } else { None }),
        repeats: i64::from(a.repeats.unwrap_or(1)),
        price: a.price.clone(),
        profile: a.profile,
        batch_max,
        batch_cap: a.batch_cap,
        memory_limit_bytes,
    })
}

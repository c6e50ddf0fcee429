//! Command-line arguments: the commands and their flags (`run`'s, with its
//! TOML file, in `run_args`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::run_args::RunArgs;

#[derive(Parser)]
#[command(
    name = "trainbench",
    version,
    about = "TrainBench Studio, headless: measured training benchmarks"
)]
pub struct Cli {
    /// SQLite database [default: $TRAINBENCH_DB, else the one chosen in the
    /// desktop app's Settings, else $TRAINBENCH_HOME/trainbench.sqlite, where
    /// the home is ~/.local/share/trainbench unless set]
    #[arg(long, global = true)]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run a benchmark (a sweep when a flag has several comma-separated values).
    Run(Box<RunArgs>),
    /// Which release of a framework first changed a metric: a binary search
    /// between a good and a bad release, each installed when needed and
    /// trained as the run flags say, with repeats sized by the spread.
    Bisect(Box<crate::bisect_cmd::BisectArgs>),
    /// The model catalogue: name, family, parameters, training FLOPs per
    /// sample, whether it trains on a CPU, default input.
    Models {
        /// Only the models whose name contains TEXT, with the timm and Hugging
        /// Face names the PyTorch environment has.
        #[arg(long, value_name = "TEXT")]
        search: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The studio's words explained (precisions, compile modes, badges, MFU
    /// …): every term, or the one named.
    Glossary {
        /// A term or its key (`mfu`, `amp-bf16`, `input_bound`). Default: every term.
        term: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Parameter count and FLOPs per training sample of a model: a catalogue
    /// model's analytical figures, or a library model (timm:, hf:) or a model
    /// from your file (PATH.py:FUNCTION) built once by its framework's worker
    /// and counted (nothing trains).
    Describe {
        #[arg(long)]
        model: String,
        /// For a library or file model: the framework whose worker builds it
        /// (pytorch, tensorflow or jax). Default: pytorch.
        #[arg(long, value_name = "F")]
        framework: Option<String>,
        /// For a model from your file: CxSxS (square images) or tokens:N
        /// (with --vocab-size), as `run --input-shape`.
        #[arg(long, value_name = "CxSxS|tokens:N")]
        input_shape: Option<String>,
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
        /// Print what was written as JSON ({"written": {path, bytes}}; CSV to
        /// standard output as {"csv": TEXT}).
        #[arg(long, global = true)]
        json: bool,
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
        #[arg(long)]
        json: bool,
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
    /// The most valuable GPU measurements within a time budget, with timm and
    /// Hugging Face peers on the same GPU; `fold DIR` adds a session's
    /// results to docs/gpu-results.md (exit 3 without a GPU, unless --rehearse).
    GpuSession(Box<crate::gpu_session::GpuSessionArgs>),
    /// Published training results (MLPerf, NVIDIA's examples, timm, llm.c,
    /// torchtitan …) with the MFU each implies and whether it is plausible.
    Published {
        /// One result by its id.
        id: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// A stored run projected to hardware it did not run on (a GPU of the
    /// peak table, or this CPU with another thread count): throughput, epoch
    /// time, cost per epoch and memory fit as bands, labelled projected.
    Project {
        id: String,
        /// A GPU of the peak table (H100 SXM, H200, A100 SXM 80GB, L40S, RTX 4090 …).
        #[arg(long)]
        gpu: Option<String>,
        /// This CPU with this many compute threads.
        #[arg(long)]
        threads: Option<u32>,
        #[arg(long)]
        json: bool,
    },
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
    /// Creates the studio's environment for a framework (pytorch, tensorflow, jax) from PyPI,
    /// or for one release of it (jax==0.7.2), kept in envs/versions/.
    Install {
        framework: String,
        /// Install the CUDA build even when no NVIDIA GPU is seen (or the CPU build with --cpu).
        #[arg(long)]
        gpu: bool,
        #[arg(long, conflicts_with = "gpu")]
        cpu: bool,
    },
    /// The releases of a framework (jax, pytorch, tensorflow) PyPI lists
    /// within the range the studio supports, newest first, and which are
    /// installed here: what `--framework jax==VERSION` and `bisect` take.
    Releases { framework: String },
    /// Registers another environment of a framework (e.g. an older PyTorch) as FRAMEWORK@NAME.
    Register {
        name: String,
        #[arg(long)]
        framework: String,
        /// Its python executable.
        #[arg(long)]
        python: PathBuf,
    },
    /// Forgets a registered environment (its files stay), or deletes a
    /// release's environment (jax==0.7.2) from envs/versions/.
    Remove { name: String },
    /// The disk the releases' environments may take together (default 20GiB):
    /// shows it, or sets it (e.g. 8GiB); over it, the least recently used are
    /// removed after an install.
    Budget { size: Option<String> },
}

#[derive(Subcommand)]
pub enum PriceCommand {
    List,
    Add(PriceArgs),
    Edit(PriceArgs),
    /// Deletes an offering (refused while stored runs are priced by it).
    Delete {
        offering: String,
    },
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

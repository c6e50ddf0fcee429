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
    /// A performance gate for continuous integration: a baseline and a
    /// candidate (two scripts or models, two sets of variables, two
    /// environments or releases, two git revisions of a script) run in pairs
    /// A B B A here until the ratio's 95 % interval settles against
    /// --max-slowdown. Exit 0: not slower; 1: slower beyond it; 3: undecided
    /// at --max-runs; 2: bad input or a side that could not run.
    Gate(Box<crate::gate_cmd::GateArgs>),
    /// The best way to train one model here: frameworks, compile modes,
    /// precisions, batches and CPU threads searched by successive halving
    /// (every candidate probed short, settled losers stopped, the winner
    /// confirmed against the runner-up) within a time budget.
    Tune(Box<crate::tune_cmd::TuneArgs>),
    /// The model catalogue: name, family, parameters, training FLOPs per
    /// sample, whether it trains on a CPU, default input.
    Models {
        /// Only the models whose name contains TEXT, with the timm and Hugging
        /// Face names the PyTorch environment has and the Keras names of the
        /// TensorFlow one.
        #[arg(long, value_name = "TEXT")]
        search: Option<String>,
        #[command(flatten)]
        filters: crate::model_filters::ModelFilters,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// The studio's words explained (precisions, compile modes, badges, MFU
    /// …): every term, or the one named.
    Glossary {
        /// A term or its key (`mfu`, `amp-bf16`, `input_bound`). Default: every term.
        term: Option<String>,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// Parameter count and FLOPs per training sample of a model: a catalogue
    /// model's analytical figures, or a library model (timm:, hf:, keras:) or a model
    /// from your file (PATH.py:FUNCTION) built once by its framework's worker
    /// and counted (nothing trains).
    Describe {
        /// A catalogue model (`trainbench models` lists them), timm:NAME,
        /// hf:MODEL_TYPE[?key=value&…], keras:NAME or PATH.py:FUNCTION.
        #[arg(long)]
        model: String,
        /// For a library or file model: the framework whose worker builds it
        /// (pytorch, tensorflow or jax). Default: tensorflow for keras:NAME,
        /// else pytorch.
        #[arg(long, value_name = "F")]
        framework: Option<String>,
        /// For a model from your file: CxSxS (square images) or tokens:N
        /// (with --vocab-size), as `run --input-shape`.
        #[arg(long, value_name = "CxSxS|tokens:N")]
        input_shape: Option<String>,
        /// Classes of the classification head. Default: the model's.
        #[arg(long)]
        num_classes: Option<i64>,
        /// Pixels per side of an image model's input. Default: the model's
        /// (224 for the ImageNet models).
        #[arg(long)]
        image_size: Option<i64>,
        /// Channels of an image model's input. Default: the model's (3).
        #[arg(long)]
        in_channels: Option<i64>,
        /// Tokens per sequence of a text model. Default: the model's.
        #[arg(long)]
        seq_len: Option<i64>,
        /// Token ids of a text model (its vocabulary). Default: the model's.
        #[arg(long)]
        vocab_size: Option<i64>,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// Every stored run with its headline numbers.
    Runs {
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// A stored run's configuration run again on this machine (a model file
    /// read again from its path: refused when gone, or changed unless
    /// --allow-changed).
    Rerun(Box<crate::rerun_cmd::RerunArgs>),
    /// One run in full: configuration, summary, provenance, errors.
    Show {
        /// The run's id (as `trainbench runs` lists them).
        id: String,
        /// Place the run beside the published record even where that says
        /// little: a CPU run, or a model far smaller than every published
        /// model of its family (by default such a run says why it is not).
        #[arg(long)]
        beside_record: bool,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// Runs side by side: intervals, deltas against a baseline, the winner of
    /// each metric, scaling, warnings.
    Compare {
        /// The runs' ids, at least 2.
        ids: Vec<String>,
        /// The run to compute deltas against (default: the first).
        #[arg(long)]
        baseline: Option<i64>,
        /// One entry per configuration (its repeats together) instead of per run.
        #[arg(long)]
        by_config: bool,
        /// Place the run beside the published record even where that says
        /// little: a CPU run, or a model far smaller than every published
        /// model of its family (by default such a run says why it is not).
        #[arg(long)]
        beside_record: bool,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// Why A is faster than B: the gap in time per sample split over the
    /// parts of the step (data, forward, backward, communication, optimizer)
    /// from the two runs' step breakdowns.
    Explain {
        /// The first run's id (A, the one explained as faster or slower).
        a: i64,
        /// The second run's id (B, the one A is held against).
        b: i64,
        /// Each side is its run's configuration, its repeats averaged.
        #[arg(long)]
        by_config: bool,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// Saved comparison sessions: save, list, show, rename, delete.
    Session {
        #[command(subcommand)]
        command: SessionCommand,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long, global = true)]
        json: bool,
    },
    /// Write a PDF report, CSV, a chart image or a session file.
    Export {
        #[command(subcommand)]
        command: ExportCommand,
        /// Print one JSON document saying what was written: {"written": {path,
        /// bytes}}; only `export csv` without --output puts the CSV itself in
        /// it, as {"csv": TEXT}.
        #[arg(long, global = true)]
        json: bool,
    },
    /// Import a session file exported by another studio (all or nothing).
    Import {
        /// The session file (`trainbench export session` writes one).
        file: PathBuf,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// Delete finished runs with everything stored about them.
    Delete {
        /// The runs' ids.
        ids: Vec<String>,
        /// Confirm: without it nothing is deleted.
        #[arg(long)]
        yes: bool,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// Framework environments: list, check, install, register another version.
    Env {
        #[command(subcommand)]
        command: Option<EnvCommand>,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
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
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// One read-only SQL statement (SELECT or WITH … SELECT) over the
    /// store's documented views q_runs, q_windows, q_evals, q_telemetry and
    /// q_sweeps (docs/query.md); anything that writes is refused (exit 2).
    Query {
        /// The SQL statement, e.g. 'SELECT model, throughput_samples_per_s FROM q_runs'.
        sql: String,
        /// Print CSV (a header line, then one line per row; NULL as an empty field).
        #[arg(long, conflicts_with = "json")]
        csv: bool,
        /// Print one JSON document: {columns, rows, truncated}, numbers typed, NULL as null (errors as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
        /// The most rows printed; a query that matches more says so.
        #[arg(long, value_name = "N", default_value_t = trainbench_app::query::DEFAULT_MAX_ROWS)]
        max_rows: usize,
        /// Seconds the query may run before it is stopped (exit 2).
        #[arg(long, value_name = "SECONDS", default_value_t = trainbench_app::query::DEFAULT_TIMEOUT_S)]
        timeout: f64,
    },
    /// A stored run projected to hardware it did not run on (a GPU of the
    /// peak table, or this CPU with another thread count): throughput, epoch
    /// time, cost per epoch and memory fit as bands, labelled projected.
    Project {
        /// The stored run's id.
        id: String,
        /// A GPU of the peak table (H100 SXM, H200, A100 SXM 80GB, L40S, RTX 4090 …).
        #[arg(long)]
        gpu: Option<String>,
        /// This CPU with this many compute threads.
        #[arg(long)]
        threads: Option<u32>,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
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
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long, global = true)]
        json: bool,
    },
    /// Follow a run on a remote host again (after a lost connection or a
    /// stopped studio) until it ends; nothing it measured is lost.
    Attach {
        /// The run's id (a run on a remote host that has not ended).
        id: i64,
        /// Stop waiting for a run whose host is gone for good: stored as
        /// interrupted (what was read is kept), so it can be deleted.
        #[arg(long)]
        abandon: bool,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// Serve the studio to an agent as an MCP (Model Context Protocol)
    /// server on stdin and stdout: tools for runs, one run, compare,
    /// explain, query, published, project, models, describe, and starting a
    /// run or a search through the same checks and one queue
    /// (docs/mcp.md). Ends when the client closes stdin.
    Mcp,
    /// What the studio starts on a remote host: runs DIR/job.json there.
    #[command(hide = true)]
    Agent {
        #[command(subcommand)]
        command: AgentCommand,
    },
    /// The price table used for cost per epoch: list, add, edit, delete.
    Prices {
        #[command(subcommand)]
        command: Option<PriceCommand>,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long, global = true)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum HostCommand {
    /// Adds a host (or replaces one of that name): copies the kit there and
    /// checks which frameworks and GPUs it has.
    Add {
        /// The host's name in the studio's list (what --host takes).
        name: String,
        /// ssh://[user@]host[:port][/folder] (the folder for kits and runs;
        /// default ~/.trainbench-remote; ~/.ssh/config applies), or
        /// ray://HEAD[:PORT] for a Ray cluster (its head's job API, port 8265
        /// unless said; KubeRay serves the same).
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
    Check {
        /// The host's name in the studio's list.
        name: String,
    },
    /// Forgets a host (its runs stay stored).
    Remove {
        /// The host's name in the studio's list.
        name: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum AgentCommand {
    /// Runs the job in DIR, journaling to DIR/journal.jsonl.
    Run {
        /// The job's folder, holding job.json.
        dir: PathBuf,
        /// Also write each journal line to stdout (a Ray job's log, which
        /// the studio reads).
        #[arg(long)]
        echo_journal: bool,
    },
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
        /// The session's name.
        name: String,
        /// The runs' ids.
        ids: Vec<String>,
        /// The run to compute deltas against (default: the first).
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
        /// The session's name or id.
        name: String,
    },
    /// Gives a session another name.
    Rename {
        /// The session's name or id.
        name: String,
        /// The name it takes.
        new_name: String,
    },
    /// Deletes a saved session (its runs stay stored).
    Delete {
        /// The session's name or id.
        name: String,
    },
}

/// What a report (PDF or HTML) is of, and where it goes.
#[derive(Debug, clap::Args)]
pub struct ReportFile {
    #[command(flatten)]
    pub selection: Selection,
    /// The file to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Report title (default: the session's name).
    #[arg(long)]
    pub title: Option<String>,
}

#[derive(Subcommand)]
pub enum ExportCommand {
    /// The PDF report of a session or of runs.
    Pdf(ReportFile),
    /// The same report as one self-contained HTML file: interactive charts
    /// (hover for figures, toggle series), nothing fetched when it is opened.
    Html(ReportFile),
    /// Runs as CSV (all runs, a session's or the ids given), or one run's raw
    /// windows, evaluations or telemetry with --raw and --run.
    Csv {
        /// The runs' ids (default: every run).
        ids: Vec<String>,
        /// A saved session's runs, by name or id.
        #[arg(long, conflicts_with = "ids")]
        session: Option<String>,
        /// windows, evals or telemetry (needs --run).
        #[arg(long, requires = "run")]
        raw: Option<String>,
        /// The run whose raw data --raw writes.
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
        /// The file to write.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// A saved session with its runs' raw data, as one portable JSON file.
    Session {
        /// The saved session's name or id.
        name: String,
        /// The file to write.
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
        /// pytorch, tensorflow or jax, or one release (jax==0.7.2).
        framework: String,
        /// Install the CUDA build even when no NVIDIA GPU is seen (or the CPU build with --cpu).
        #[arg(long)]
        gpu: bool,
        /// Install the CPU build even when an NVIDIA GPU is seen.
        #[arg(long, conflicts_with = "gpu")]
        cpu: bool,
    },
    /// The releases of a framework (jax, pytorch, tensorflow) PyPI lists
    /// within the range the studio supports, newest first, and which are
    /// installed here: what `--framework jax==VERSION` and `bisect` take.
    Releases {
        /// jax, pytorch or tensorflow.
        framework: String,
    },
    /// Registers another environment of a framework (e.g. an older PyTorch) as FRAMEWORK@NAME.
    Register {
        /// The environment's name (FRAMEWORK@NAME then selects it).
        name: String,
        /// The framework it holds: pytorch, tensorflow or jax.
        #[arg(long)]
        framework: String,
        /// Its python executable.
        #[arg(long)]
        python: PathBuf,
    },
    /// Forgets a registered environment (its files stay), or deletes a
    /// release's environment (jax==0.7.2) from envs/versions/.
    Remove {
        /// A registered environment's name, or a release (jax==0.7.2).
        name: String,
    },
    /// The disk the releases' environments may take together (default 20GiB):
    /// shows it, or sets it (e.g. 8GiB); over it, the least recently used are
    /// removed after an install.
    Budget {
        /// The new budget, e.g. 8GiB. Default: show the budget.
        size: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum PriceCommand {
    /// Every offering with its prices (the default).
    List,
    /// Adds an offering (refused if one of that name exists).
    Add(PriceArgs),
    /// Changes an offering's prices: only the flags given change.
    Edit(PriceArgs),
    /// Deletes an offering (refused while stored runs are priced by it).
    Delete {
        /// The offering's name, as `trainbench prices` lists it.
        offering: String,
    },
}

#[derive(Args, Clone)]
#[command(allow_negative_numbers = true)]
pub struct PriceArgs {
    /// The offering's name (what `run --price` takes), e.g. "Lambda Cloud 1x H100 SXM".
    pub offering: String,
    /// Devices (GPUs) in the offering, a whole number ≥ 1.
    #[arg(long)]
    pub devices: Option<i64>,
    /// The device's name, e.g. "H100 SXM".
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
    /// Where the price comes from (a URL or a note).
    #[arg(long)]
    pub source: Option<String>,
}

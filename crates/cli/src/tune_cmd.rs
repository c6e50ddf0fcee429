//! `trainbench tune`: the best way to train one model on this machine,
//! searched by successive halving (the app layer's `tune`): each run with
//! its progress bar, each round said on stderr, Ctrl-C stops the search and
//! keeps what ran; then the winner, its command, and every candidate's fate.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value};
use trainbench_app::execute::{self, Finished};
use trainbench_app::sweep::{Job, SweepPlan};
use trainbench_app::tune::outlook::Outlook;
use trainbench_app::tune::view::TunedView;
use trainbench_app::tune::{plan_tune, Told, TunePlan, TuneRequest, TuneShell, Tuned};
use trainbench_app::{AppResult, Host, RunnerOptions, Workspace};
use trainbench_core::tune::frontier::{Frontier, Point};
use trainbench_core::tune::method::{figure_text, interval_text_as};
use trainbench_core::tune::space::Axes;

use crate::error::{bad, CliError};
use crate::open::open_workspace;
use crate::output::Bar;
use crate::run_args::{self, RunArgs};

/// `trainbench tune`'s flags: the run flags say what every candidate
/// trains; the axes' flags (a comma list each) replace the search's
/// defaults, so their help is tune's own.
#[derive(clap::Args, Clone)]
#[command(mut_arg("model", |a| a.help(
    "The model to tune (one): a catalogue name, timm:NAME, hf:MODEL_TYPE[?…] \
     or PATH.py:FUNCTION, as for `run`. Must be given"
)))]
#[command(mut_arg("framework", |a| a.help(
    "Frameworks to search, comma-separated (tch, pytorch, tensorflow, jax, \
     FRAMEWORK@NAME). Default: every installed framework"
)))]
#[command(mut_arg("compile", |a| a.help(
    "Compile modes to search, comma-separated (off, on, max-autotune, xla); a \
     mode a framework does not have is recorded as refused. Default: each \
     framework's own modes (pytorch: off, on, max-autotune; tensorflow: off, \
     xla; tch and jax: off)"
)))]
#[command(mut_arg("precision", |a| a.help(
    "Precisions to search, comma-separated (fp32, tf32, amp-bf16, amp-fp16). \
     Default: fp32 and amp-bf16 on the CPU, all four on a GPU"
)))]
#[command(mut_arg("batch_size", |a| a.help(
    "Batches per device to search, whole numbers ≥ 1, comma-separated. \
     Default: 64 and 32"
)))]
#[command(mut_arg("threads", |a| a.help(
    "CPU thread counts to search, whole numbers ≥ 1, comma-separated. \
     Default: on the CPU the machine's cores, half and a quarter of them \
     (at least 1); on a GPU the framework's own choice"
)))]
#[command(mut_arg("devices", |a| a.help(
    "Devices per run to search, whole numbers ≥ 1, comma-separated (data \
     parallel: DDP, a MirroredStrategy, a JAX mesh; --batch-size per \
     device). Default: one value, the run's own (1): not searched"
)))]
#[command(mut_arg("loader_workers", |a| a.help(
    "Loader workers to search, 0 to 64, comma-separated (only with --data \
     folder:DIR). Default: one value, the run's own (2): not searched"
)))]
#[command(mut_arg("cudnn_benchmark", |a| a.help(
    "cuDNN's benchmark mode to search: on,off (pytorch and tch on a GPU). \
     Default: the worker's own: not searched"
)))]
#[command(mut_arg("steps", |a| a.help(
    "Steps of the first, short run of every candidate (the probe), a whole \
     number ≥ 1; each later round runs twice as long as the one before. \
     Default: 40"
)))]
#[command(mut_arg("window_steps", |a| a.help(
    "Steps per timing window, a whole number ≥ 1 (a probe needs 6 steady \
     windows for an interval of its own). Default: 4"
)))]
#[command(mut_arg("repeats", |a| a.help(
    "Runs of the winner and of the runner-up each in the confirmation, \
     2 to 20, interleaved. Default: 3"
)))]
pub struct TuneArgs {
    /// What the best candidate is: throughput (the most samples/s), memory
    /// (the least peak memory), cost (the least cost per epoch; with
    /// --price), time-to-accuracy (the least time to --target-accuracy or
    /// --target-loss: each run trains to the target, at most --steps,
    /// default 1000), energy (the fewest joules per sample, from NVML's
    /// energy counter: on a GPU only). Default: throughput.
    #[arg(long, value_name = "OBJECTIVE")]
    pub objective: Option<String>,
    /// Time the search may take: 90s, 15m, 2h or 1h30m. The clock is read
    /// before each run: none starts once it is spent, so the search ends at
    /// most one run past it. Default: 15m.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// Also write the search's PDF report here: its runs compared by
    /// configuration, with the search's verdict, every candidate's fate and
    /// the frontier (what `trainbench export pdf --by-config` of its runs
    /// shows). Default: none.
    #[arg(long, value_name = "FILE.pdf")]
    pub pdf: Option<std::path::PathBuf>,
    /// Also write the winner's settings as a TOML file, which
    /// `trainbench run --config FILE` trains again (the file the desktop's
    /// result view shows). Default: none.
    #[arg(long, value_name = "FILE.toml")]
    pub save_config: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
}

/// The axes as given, on the command line or in the TOML file.
fn axes_of(a: &RunArgs) -> Result<Axes, CliError> {
    let list = |s: &Option<String>| -> Vec<String> {
        s.as_deref()
            .map(|t| {
                t.split(',')
                    .map(|x| x.trim().to_string())
                    .filter(|x| !x.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    };
    let batches = list(&a.batch_size);
    if batches.iter().any(|b| b == "max") && batches.len() > 1 {
        return Err(bad(
            "batch_size",
            format!(
                "batch_size = {} is not allowed: expected whole numbers ≥ 1, comma-separated, or max alone (the largest batch that fits and its halves)",
                batches.join(",")
            ),
        ));
    }
    let batch_size = batches
        .iter()
        .filter(|b| *b != "max")
        .map(|b| {
            b.parse::<i64>().map_err(|_| {
                bad(
                    "batch_size",
                    format!("batch_size = {b} is not allowed: expected whole numbers ≥ 1, comma-separated"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let devices = match a.devices.as_deref() {
        Some(d) => run_args::ints("devices", d)?,
        None => Vec::new(),
    };
    // Given lists as they are: the space takes one value as every
    // candidate's, several as an axis.
    Ok(Axes {
        framework: list(&a.framework),
        compile: list(&a.compile),
        precision: list(&a.precision),
        batch_size,
        threads: a.threads.clone(),
        devices,
        loader_workers: a.loader_workers.clone(),
        cudnn_benchmark: a.cudnn_benchmark.clone(),
    })
}

/// The CLI's side of a search: one runtime and one Ctrl-C switch for the
/// whole search, a progress bar per run, lines on stderr.
struct Terminal<'r> {
    told: Told<'r, fn(String)>,
    interactive: bool,
}

fn on_stderr(line: String) {
    eprintln!("trainbench: {line}");
}

impl TuneShell for Terminal<'_> {
    fn run(&mut self, ws: &mut Workspace, host: &Host, job: &Job) -> AppResult<Finished> {
        let mut bar = Bar::new(self.interactive, format!("#{} {}", job.run_id, job.label));
        let f = self.told.run_showing(ws, host, job, &mut bar);
        bar.finish();
        f
    }

    fn say(&mut self, line: String) {
        self.told.say(line);
    }

    fn cancelled(&self) -> bool {
        self.told.cancelled()
    }

    fn search_batches(
        &mut self,
        ws: &mut Workspace,
        host: &Host,
        plan: &mut SweepPlan,
        sweep: i64,
    ) -> AppResult<()> {
        self.told.search_batches(ws, host, plan, sweep)
    }
}

/// A search checked and planned on this machine: every candidate's verdict,
/// before the database is touched. Returns the plan and the run flags with
/// the TOML file's settings.
pub fn check(a: &TuneArgs, host: &Host) -> Result<(TunePlan, RunArgs), CliError> {
    if a.run.print_plan {
        return Err(bad(
            "print_plan",
            "print_plan is not allowed with tune: expected `trainbench run --print-plan` for one candidate's plan".into(),
        ));
    }
    let run = run_args::with_config_file(&a.run)?;
    let axes = axes_of(&run)?;
    if run.model.is_none() {
        return Err(bad(
            "model",
            "model is missing: expected the model to tune (--model M)".into(),
        ));
    }
    // The loader workers are the search's axis; the runs' shared settings
    // take one value at most.
    let mut shared = run.clone();
    shared.loader_workers.clear();
    let mut base = run_args::merge_config(&shared)?;
    // The probe's length is the search's own default, not run's 100 steps.
    base.steps = run.steps;
    let request = TuneRequest {
        base,
        axes,
        objective: a.objective.clone().unwrap_or_else(|| "throughput".into()),
        budget: a.budget.clone(),
        confirm_repeats: run.repeats,
    };
    Ok((plan_tune(&request, host)?, run))
}

pub fn tune(db: &Path, a: TuneArgs) -> Result<ExitCode, CliError> {
    let host = Host::open();
    let (mut plan, run) = check(&a, &host)?;
    if let Some(why) = host.gpu_unavailable() {
        eprintln!("trainbench: {why}; runs use the CPU");
    }
    eprintln!(
        "trainbench: tuning {} for {}: {} candidate(s){}, budget {}",
        plan.model,
        plan.settings.objective,
        plan.expected_candidates(),
        if plan.unsupported.is_empty() {
            String::new()
        } else {
            format!(" ({} more refused before running)", plan.unsupported.len())
        },
        a.budget.as_deref().unwrap_or("15m")
    );
    let mut ws = open_workspace(db)?;
    let opts = RunnerOptions {
        silence_timeout: run_args::silence_timeout(&run)?,
        ..RunnerOptions::default()
    };
    let runtime = execute::runtime()?;
    let mut shell = Terminal {
        told: Told {
            rt: &runtime,
            stop: crate::ctrl_c::switch(
                &runtime,
                "trainbench: stopping the search (Ctrl-C); what ran stays stored",
            ),
            opts,
            say: on_stderr,
        },
        interactive: std::io::stderr().is_terminal() && !run.json,
    };
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let tuned = ws.tune(&host, &mut plan, &command, &mut shell)?;
    let pdf = match &a.pdf {
        Some(path) if tuned.run_ids.is_empty() => {
            eprintln!(
                "trainbench: no PDF written to {}: no run of the search ended",
                path.display()
            );
            None
        }
        Some(path) => Some(write_pdf(&ws, &tuned, &plan.model, path)?),
        None => None,
    };
    let config = match (&a.save_config, &tuned.toml) {
        (Some(path), Some(toml)) => Some(ws.write_export(path, toml.as_bytes())?.path),
        (Some(path), None) => {
            eprintln!(
                "trainbench: no settings written to {}: the search found no winner",
                path.display()
            );
            None
        }
        (None, _) => None,
    };
    if run.json {
        let mut doc = to_json(db, &tuned, &plan);
        doc["pdf"] = json!(pdf);
        doc["config_file"] = json!(config);
        println!("{doc}");
    } else {
        print_text(db, &tuned);
        if let Some(p) = &pdf {
            println!("report: {p}");
        }
        if let Some(p) = &config {
            let w = trainbench_app::tune::reproduce::word(p);
            println!("settings: {p} (`trainbench run --config {w}` trains the winner again)");
        }
    }
    Ok(if tuned.outcome.winner.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The report of every run of the search, compared by configuration,
/// with its search and frontier sections.
fn write_pdf(ws: &Workspace, t: &Tuned, model: &str, path: &Path) -> Result<String, CliError> {
    use trainbench_app::reports::Selection;
    let sel = ws.select(&Selection::runs(
        t.run_ids.clone(),
        trainbench_core::compare::Grouping::Configurations,
        None,
    ))?;
    let title = format!("Search: {model} for {}", t.outcome.objective);
    let bytes = ws.pdf(&sel, Some(title), &[])?;
    Ok(ws.write_export(path, &bytes)?.path)
}

/// `tune --json`'s document: the app layer's view of the search, with the
/// database it is stored in.
pub fn to_json(db: &Path, t: &Tuned, plan: &TunePlan) -> Value {
    let mut doc = serde_json::to_value(TunedView::new(t, plan)).unwrap_or(Value::Null);
    doc["database"] = json!(db);
    doc
}

/// The frontiers in words: fastest first, each point's figures.
fn print_frontier(f: &Frontier) {
    print_points(
        &f.memory,
        "throughput against peak memory: no other candidate is both faster and smaller",
        |p| {
            p.peak_memory_mib
                .map_or_else(|| "–".into(), |m| format!("{m:.0} MiB"))
        },
    );
    print_points(
        &f.cost,
        "throughput against cost per epoch: no other candidate is both faster and cheaper",
        |p| {
            p.cost_per_epoch_usd
                .map_or_else(|| "–".into(), |c| format!("${c:.4}/epoch"))
        },
    );
}

fn print_points(points: &[Point], title: &str, other: impl Fn(&Point) -> String) {
    if points.len() < 2 {
        // One point is the winner alone: nothing to trade.
        return;
    }
    println!("frontier, {title} (means of each one's last round):");
    for p in points {
        println!(
            "  {:<48} {:>10} samples/s  {}",
            p.label,
            figure_text(p.samples_per_s),
            other(p)
        );
    }
}

fn print_text(db: &Path, t: &Tuned) {
    let o = &t.outcome;
    println!("{}", o.verdict);
    if let Some(w) = o.winner.and_then(|i| o.candidates.get(i)) {
        if let Some((v, ci)) = w.latest() {
            println!(
                "winner: {}: {} {}{}",
                w.label,
                figure_text(v),
                o.unit,
                ci.map_or_else(String::new, |c| format!(
                    " (95 % CI {})",
                    interval_text_as(Some(c), v)
                ))
            );
        }
    }
    if let Some(c) = &t.command {
        println!("reproduce: {c}");
    }
    if let Some(e) = &t.why_runner_up_lost {
        let title = if o.tie == Some(true) {
            "how the two differ"
        } else {
            "why the runner-up lost"
        };
        println!(
            "{title}: {} (trainbench explain {} {})",
            e.explanation.verdict,
            e.a.run_ids.first().copied().unwrap_or_default(),
            e.b.run_ids.first().copied().unwrap_or_default()
        );
    }
    use crate::output::table::{self, Align};
    let rows = trainbench_app::tune::report::candidate_rows(o);
    table::print(
        &["candidate", "round", &o.unit, "95 % CI", "why"],
        &[
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Left,
        ],
        &rows,
    );
    println!(
        "{} run(s) in {:.0} s of a {:.0} s budget ({}); stored as sweep {} in {}",
        t.run_ids.len(),
        t.elapsed_s,
        t.budget_s,
        o.ended.words(),
        t.sweep_id,
        db.display()
    );
    print_frontier(&t.frontier);
    if let Some(o) = &t.outlook {
        print_outlook(o);
    }
    if t.run_ids.len() >= 2 {
        let ids: Vec<String> = t.run_ids.iter().map(ToString::to_string).collect();
        println!(
            "compare them: trainbench compare --by-config {}",
            ids.join(" ")
        );
    }
}

/// Seconds in words a person reads at a glance: `42 s`, `12 min`, `3.4 h`.
fn span(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// `low – high`, or one figure where both read the same.
fn range_text(low: &str, high: &str) -> String {
    if low == high {
        low.to_owned()
    } else {
        format!("{low} – {high}")
    }
}

/// The winner's epoch here, then on the GPUs of the peak table, projected.
fn print_outlook(o: &Outlook) {
    if let Some(e) = o.epoch_s {
        let cost = o
            .cost_per_epoch_usd
            .map_or_else(String::new, |c| format!(", ${c:.4}"));
        let basis = o.epoch_basis.as_deref().unwrap_or("one epoch");
        println!(
            "an epoch here: {}{cost}, from run {}'s measured throughput ({basis})",
            span(e),
            o.run_id
        );
    }
    if o.projected.is_empty() {
        return;
    }
    println!(
        "projected, not measured (`trainbench project {} --gpu NAME` gives each method):",
        o.run_id
    );
    for p in &o.projected {
        let b = &p.samples_per_s;
        let epoch = p.epoch_s.as_ref().map_or_else(String::new, |e| {
            format!("  an epoch in {}", range_text(&span(e.low), &span(e.high)))
        });
        let cost = p.cost_per_epoch_usd.as_ref().map_or_else(String::new, |c| {
            format!(
                ", {}",
                range_text(&format!("${:.4}", c.low), &format!("${:.4}", c.high))
            )
        });
        println!(
            "  {:<16} {} samples/s{epoch}{cost}",
            p.to,
            range_text(&figure_text(b.low), &figure_text(b.high))
        );
    }
}

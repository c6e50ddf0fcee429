//! `trainbench bisect`: which release of a framework first changed a metric,
//! by binary search between a good and a bad release (the app layer's
//! bisection; releases from the registry, installed as they are needed).

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use trainbench_app::bisect::{plan_from_registry, BisectRequest, BisectShell, Bisected};
use trainbench_app::execute::Finished;
use trainbench_app::sweep::Job;
use trainbench_app::versions::Pin;
use trainbench_app::{AppResult, Host, RunnerOptions, Workspace};

use crate::error::{bad, CliError};
use crate::open::open_workspace;
use crate::run_args::{self, RunArgs};

/// `trainbench bisect`'s flags: the run flags say what each release trains;
/// `--framework` and `--repeats` mean something else here, so their help is
/// bisect's own.
#[derive(clap::Args, Clone)]
#[command(mut_arg("framework", |a| a.help(
    "The framework whose releases are bisected: jax, pytorch or tensorflow, \
     without a release (--good and --bad name them). Must be given: tch, \
     run's default, has no releases to bisect"
)))]
#[command(mut_arg("repeats", |a| a.help(
    "The fewest runs at one release, a whole number ≥ 1; more, up to \
     --max-repeats, while its interval overlaps both sides. Default: 3"
)))]
pub struct BisectArgs {
    /// The release known to be good (the older one), MAJOR.MINOR.PATCH.
    #[arg(long, value_name = "VERSION")]
    pub good: String,
    /// The release known to be bad (the newer one), MAJOR.MINOR.PATCH.
    #[arg(long, value_name = "VERSION")]
    pub bad: String,
    /// What changed: throughput, peak_memory, time_to_accuracy, time_to_loss
    /// or cost_per_epoch. Default: throughput.
    #[arg(long, default_value = "throughput", hide_default_value = true)]
    pub metric: String,
    /// The most runs at one release while its interval overlaps both sides
    /// (--repeats is the fewest). Default: 9.
    #[arg(
        long,
        default_value_t = trainbench_app::bisect::MAX_REPEATS,
        hide_default_value = true
    )]
    pub max_repeats: u32,
    /// Also write the PDF report of the bisection's runs, with what it found.
    #[arg(long, value_name = "FILE.pdf")]
    pub pdf: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
}

/// A CLI error handed back through the app layer's bisection.
pub(crate) fn app_error(e: CliError) -> trainbench_app::AppError {
    match e {
        CliError::BadInput { field, message } => {
            trainbench_app::AppError::BadInput { field, message }
        }
        CliError::Failed(why) | CliError::Unfinished(why) => {
            trainbench_app::AppError::Internal(why)
        }
    }
}

/// The CLI's side of a bisection: installs with the installer's lines,
/// runs with a progress bar each, lines on stderr.
struct Terminal {
    gpu: bool,
    opts: RunnerOptions,
    interactive: bool,
    installed: Vec<serde_json::Value>,
}

impl BisectShell for Terminal {
    fn install(&mut self, pin: Pin) -> AppResult<()> {
        let (made, bytes) = crate::install::install_release(pin, self.gpu).map_err(app_error)?;
        self.installed.push(json!({
            "release": pin.to_string(),
            "seconds": made.progress.elapsed_s,
            "bytes": bytes,
        }));
        crate::install::evict(&[pin]);
        Ok(())
    }

    fn run(&mut self, ws: &mut Workspace, host: &Host, jobs: &[Job]) -> AppResult<Vec<Finished>> {
        crate::run_cmd::run_jobs(ws, host, jobs, self.opts, self.interactive).map_err(app_error)
    }

    fn say(&mut self, line: String) {
        eprintln!("trainbench: {line}");
    }
}

pub fn bisect(db: &Path, a: BisectArgs) -> Result<ExitCode, CliError> {
    if a.run.print_plan {
        return Err(bad(
            "print_plan",
            "print_plan is not allowed with bisect: expected `trainbench run --print-plan` for one release's plan".into(),
        ));
    }
    let host = Host::open();
    let mut base = run_args::merge_config(&a.run)?;
    let framework = base.framework.first().cloned().unwrap_or_default();
    if base.framework.len() != 1 {
        return Err(bad(
            "framework",
            format!(
                "framework = {} is not allowed: expected one of jax, pytorch or tensorflow (no release: --good and --bad name them)",
                base.framework.join(",")
            ),
        ));
    }
    let min_repeats = a.run.repeats.unwrap_or(trainbench_app::bisect::MIN_REPEATS);
    base.repeats = 1;
    let request = BisectRequest {
        framework: framework.clone(),
        good: a.good.clone(),
        bad: a.bad.clone(),
        metric: a.metric.clone(),
        min_repeats,
        max_repeats: a.max_repeats,
        base,
    };
    let plan = plan_from_registry(&request, &host)?;
    let timeout = run_args::silence_timeout(&a.run)?;
    eprintln!(
        "trainbench: bisecting {} releases of {framework} ({} … {}) on {}",
        plan.releases.len(),
        plan.releases[0],
        plan.releases[plan.releases.len() - 1],
        plan.metric.key()
    );
    let mut ws = open_workspace(db)?;
    let mut shell = Terminal {
        gpu: host.gpu_count() > 0,
        opts: RunnerOptions {
            silence_timeout: timeout,
            ..RunnerOptions::default()
        },
        interactive: std::io::stderr().is_terminal() && !a.run.json,
        installed: Vec::new(),
    };
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let found = ws.bisect(&host, &plan, &command, &mut shell)?;
    let written = match &a.pdf {
        Some(path) => Some(write_pdf(&ws, &found, path)?),
        None => None,
    };
    print(db, &found, &shell.installed, written.as_deref(), a.run.json);
    Ok(ExitCode::SUCCESS)
}

/// The report of every run of the bisection, one entry per release.
fn write_pdf(ws: &Workspace, b: &Bisected, path: &Path) -> Result<String, CliError> {
    use trainbench_app::reports::Selection;
    let sel = ws.select(&Selection::runs(
        b.run_ids.clone(),
        trainbench_core::compare::Grouping::Configurations,
        None,
    ))?;
    let title = format!(
        "Bisection of {} {} → {}",
        b.framework,
        b.releases[0],
        b.releases[b.releases.len() - 1]
    );
    let bytes = ws.pdf(&sel, Some(title), &[])?;
    let written = ws.write_export(path, &bytes)?;
    Ok(written.path)
}

fn print(
    db: &Path,
    b: &Bisected,
    installed: &[serde_json::Value],
    pdf: Option<&str>,
    json_out: bool,
) {
    if json_out {
        println!(
            "{}",
            json!({
                "sweep_id": b.sweep_id,
                "database": db,
                "framework": b.framework,
                "metric": b.metric,
                "releases": b.releases,
                "outcome": b.outcome,
                "run_ids": b.run_ids,
                "installed": installed,
                "pdf": pdf,
            })
        );
        return;
    }
    println!("{}", b.outcome.verdict);
    println!(
        "{:<12} {:>4} {:>14} {:>26}",
        "release", "runs", "mean", "95 % CI"
    );
    for e in &b.outcome.evidence {
        println!(
            "{:<12} {:>4} {:>14.4} {:>26}",
            e.release.to_string(),
            e.values.len(),
            e.mean,
            e.ci95
                .map_or_else(|| "–".into(), |c| format!("{:.4} – {:.4}", c.low, c.high))
        );
    }
    if let Some(p) = pdf {
        println!("report: {p}");
    }
    println!(
        "stored as sweep {} in {} (runs {}; `trainbench export pdf --by-config` of them shows the bisection)",
        b.sweep_id,
        db.display(),
        b.run_ids
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    );
}

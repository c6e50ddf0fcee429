//! `trainbench gate`: a performance gate for continuous integration (the app
//! layer's gate): a baseline and a candidate run in pairs A B B A on this
//! machine until the ratio's 95 % interval settles against
//! `--max-slowdown`, or the most runs are reached. Exit 0 pass, 1 slower
//! beyond the threshold, 3 undecided, 2 bad input or a side that could not
//! run; a Markdown summary appended to `$GITHUB_STEP_SUMMARY` when it is
//! set, and a JUnit XML report with `--junit`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;
use trainbench_app::execute::Finished;
use trainbench_app::gate::{Ended, GateRequest, GateShell, Gated, SideChange};
use trainbench_app::sweep::Job;
use trainbench_app::{AppResult, Host, RunnerOptions, Workspace};
use trainbench_core::gate::{MAX_RUNS, MIN_RUNS};

use crate::error::{bad, CliError};
use crate::open::open_workspace;
use crate::run_args::{self, RunArgs};

/// `trainbench gate`'s flags: the run flags say what both sides train;
/// each side's flags say what it changes.
#[derive(clap::Args, Clone)]
#[command(mut_arg("repeats", |a| a.help(
    "Not with gate: --min-runs and --max-runs say the runs per side"
)))]
pub struct GateArgs {
    /// The baseline's training script (PATH.py), run as `run --script` runs
    /// it. Default: none (the run flags' model or script).
    #[arg(long, value_name = "PATH.py")]
    pub baseline_script: Option<String>,
    /// The candidate's training script (PATH.py). Default: none.
    #[arg(long, value_name = "PATH.py")]
    pub candidate_script: Option<String>,
    /// The baseline's model: a catalogue name, timm:NAME, hf:…, or
    /// PATH.py:FUNCTION. Default: the run flags' --model.
    #[arg(long, value_name = "M")]
    pub baseline_model: Option<String>,
    /// The candidate's model, as --baseline-model. Default: the run flags' --model.
    #[arg(long, value_name = "M")]
    pub candidate_model: Option<String>,
    /// The baseline's environment variables, NAME=VALUE[;…] or `default`
    /// (as run's --env). Default: the run flags' --env.
    #[arg(long, value_name = "NAME=VALUE[;…]")]
    pub baseline_env: Option<String>,
    /// The candidate's environment variables, as --baseline-env. Default: the run flags' --env.
    #[arg(long, value_name = "NAME=VALUE[;…]")]
    pub candidate_env: Option<String>,
    /// The baseline's framework environment or release: F, F@ENV or
    /// F==VERSION (installed). Default: the run flags' --framework.
    #[arg(long, value_name = "F[@ENV]|F==VERSION")]
    pub baseline_framework: Option<String>,
    /// The candidate's framework environment or release, as
    /// --baseline-framework. Default: the run flags' --framework.
    #[arg(long, value_name = "F[@ENV]|F==VERSION")]
    pub candidate_framework: Option<String>,
    /// Two git revisions of --script (a file in a git repository): the
    /// baseline's and the candidate's, BASE..HEAD. Each is read with `git
    /// show` into the studio's own copy, hashed and stored. Default: none.
    #[arg(long, value_name = "BASE..HEAD")]
    pub git_rev: Option<String>,
    /// The slowdown allowed: a percentage (3%) or a fraction (0.03), above 0
    /// and below 100 %. Default: 3%.
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "3%",
        hide_default_value = true
    )]
    pub max_slowdown: String,
    /// Runs per side before anything is decided, 2 to 200. Default: 3.
    #[arg(long, value_name = "N", default_value_t = MIN_RUNS, hide_default_value = true)]
    pub min_runs: u32,
    /// The most runs per side; still undecided then, the gate exits 3 and
    /// says how many would decide. Default: 12.
    #[arg(long, value_name = "N", default_value_t = MAX_RUNS, hide_default_value = true)]
    pub max_runs: u32,
    /// Also write a JUnit XML report: one test case, a failure when slower
    /// beyond the threshold, skipped when undecided, an error when a side
    /// could not run. Default: none.
    #[arg(long, value_name = "FILE.xml")]
    pub junit: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
}

/// `3%`, `3 %` or `0.03` as a fraction.
fn slowdown(given: &str) -> Result<f64, CliError> {
    let t = given.trim();
    let parsed = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    parsed.map_err(|_| {
        bad(
            "max_slowdown",
            format!("max_slowdown = {given} is not allowed: expected a percentage such as 3% (or a fraction such as 0.03), above 0 and below 100 %"),
        )
    })
}

/// The two revisions of `--git-rev BASE..HEAD`.
fn revisions(given: &str) -> Result<(String, String), CliError> {
    match given.split_once("..") {
        Some((a, b)) if !a.is_empty() && !b.is_empty() && !b.starts_with('.') => {
            Ok((a.to_owned(), b.to_owned()))
        }
        _ => Err(bad(
            "git_rev",
            format!("git_rev = {given} is not allowed: expected two revisions BASE..HEAD (the baseline's, then the candidate's), e.g. origin/main..HEAD"),
        )),
    }
}

/// The request the flags make.
fn request(a: &GateArgs) -> Result<GateRequest, CliError> {
    if a.run.print_plan {
        return Err(bad(
            "print_plan",
            "print_plan is not allowed with gate: expected `trainbench run --print-plan` for one side's plan".into(),
        ));
    }
    if let Some(r) = a.run.repeats {
        return Err(bad(
            "repeats",
            format!("repeats = {r} is not allowed with gate: expected --min-runs and --max-runs (runs per side)"),
        ));
    }
    // The shared settings read as `run` reads them for a side's script or
    // model (a script's framework, length and batch; no quick benchmark).
    let mut shared = a.run.clone();
    let side_script = a.baseline_script.as_ref().or(a.candidate_script.as_ref());
    let side_model = a.baseline_model.as_ref().or(a.candidate_model.as_ref());
    if shared.script.is_none() && shared.model.is_none() {
        shared.script = side_script.cloned();
        shared.model = side_model.filter(|_| side_script.is_none()).cloned();
    }
    let base = run_args::merge_config(&shared)?;
    let (base_rev, cand_rev) = match &a.git_rev {
        Some(g) => {
            let (x, y) = revisions(g)?;
            (Some(x), Some(y))
        }
        None => (None, None),
    };
    Ok(GateRequest {
        base,
        baseline: SideChange {
            script: a.baseline_script.clone(),
            model: a.baseline_model.clone(),
            env: a.baseline_env.clone(),
            framework: a.baseline_framework.clone(),
            git_rev: base_rev,
        },
        candidate: SideChange {
            script: a.candidate_script.clone(),
            model: a.candidate_model.clone(),
            env: a.candidate_env.clone(),
            framework: a.candidate_framework.clone(),
            git_rev: cand_rev,
        },
        max_slowdown: slowdown(&a.max_slowdown)?,
        min_runs: a.min_runs,
        max_runs: a.max_runs,
    })
}

/// The CLI's side of a gate: runs with a progress bar each, lines on stderr.
struct Terminal {
    opts: RunnerOptions,
    interactive: bool,
}

impl GateShell for Terminal {
    fn run(&mut self, ws: &mut Workspace, host: &Host, jobs: &[Job]) -> AppResult<Vec<Finished>> {
        crate::run_cmd::run_jobs(ws, host, jobs, self.opts, self.interactive)
            .map_err(crate::bisect_cmd::app_error)
    }

    fn say(&mut self, line: String) {
        eprintln!("trainbench: {line}");
    }
}

pub fn gate(db: &Path, a: GateArgs) -> Result<ExitCode, CliError> {
    let req = request(&a)?;
    let host = Host::open();
    let timeout = run_args::silence_timeout(&a.run)?;
    let mut ws = open_workspace(db)?;
    let plan = ws.plan_gate(&req, &host)?;
    eprintln!(
        "trainbench: gate: baseline {} against candidate {}, at most {:.1} % slower, {} to {} runs each",
        plan.baseline.said,
        plan.candidate.said,
        plan.rule.max_slowdown * 100.0,
        plan.rule.min_runs,
        plan.rule.max_runs
    );
    let mut shell = Terminal {
        opts: RunnerOptions {
            silence_timeout: timeout,
            ..RunnerOptions::default()
        },
        interactive: std::io::stderr().is_terminal() && !a.run.json,
    };
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let gated = ws.gate(&host, &plan, &command, &mut shell)?;
    let summary = match std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        Some(p) => {
            let p = PathBuf::from(p);
            ws.append_gate_summary(&p, &gated)?;
            Some(p)
        }
        None => None,
    };
    let junit = match &a.junit {
        Some(p) => Some(ws.write_gate_junit(p, &gated)?),
        None => None,
    };
    print(db, &gated, summary.as_deref(), junit.as_deref(), a.run.json);
    match gated.side_error() {
        // Exit 2 naming the side (printed by main, as every bad input).
        Some(e) => Err(e.into()),
        None => Ok(ExitCode::from(gated.exit_code())),
    }
}

fn print(db: &Path, g: &Gated, summary: Option<&Path>, junit: Option<&str>, json_out: bool) {
    if json_out {
        // A side that failed prints its error document (main) instead.
        if matches!(g.ended, Ended::Decided(_)) {
            println!(
                "{}",
                json!({
                    "sweep_id": g.sweep_id,
                    "database": db,
                    "verdict": g.verdict_key(),
                    "exit_code": g.exit_code(),
                    "gate": g,
                    "step_summary": summary,
                    "junit": junit,
                })
            );
        }
        return;
    }
    if let Ended::Decided(o) = &g.ended {
        println!("{}", o.text);
        println!(
            "{:<10} {:>4} {:>40}",
            "side", "runs", "throughput (samples/s)"
        );
        for (side, values) in [
            ("baseline", &o.baseline_values),
            ("candidate", &o.candidate_values),
        ] {
            let v: Vec<String> = values.iter().map(|x| format!("{x:.3}")).collect();
            println!("{side:<10} {:>4} {:>40}", values.len(), v.join(" "));
        }
    }
    if let Some(p) = summary {
        println!("summary appended to {}", p.display());
    }
    if let Some(p) = junit {
        println!("JUnit report: {p}");
    }
    let runs: Vec<String> = g.runs.iter().map(|r| r.1.to_string()).collect();
    println!(
        "stored as sweep {} in {} (runs {})",
        g.sweep_id,
        db.display(),
        runs.join(" ")
    );
}

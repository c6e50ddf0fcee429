//! `trainbench rerun ID`: a stored run's configuration queued and run again
//! on this machine, as a new sweep; a model file it trained is read again
//! from its path and refused when gone, or changed unless `--allow-changed`.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use trainbench_app::sweep::again::Again;
use trainbench_app::{Host, RunnerOptions};
use trainbench_core::summary::RunStatus;

use crate::error::CliError;
use crate::open::{open_workspace, parse_ids};
use crate::output::{print_runs_table, run_json};

/// `rerun`'s flags.
#[derive(clap::Args, Debug)]
pub struct RerunArgs {
    /// The stored run's id (as `trainbench runs` lists them).
    pub id: String,
    /// Times to run it.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeats: u32,
    /// Run a model file whose bytes changed since the stored run read them,
    /// as it is now (without it such a run is refused, naming the file and
    /// both SHA-256s).
    #[arg(long)]
    pub allow_changed: bool,
    /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
    #[arg(long)]
    pub json: bool,
}

pub fn rerun(db: &Path, a: RerunArgs) -> Result<ExitCode, CliError> {
    let host = Host::open();
    let mut ws = open_workspace(db)?;
    let run = parse_ids(&[a.id])?[0];
    let again = Again {
        run,
        repeats: a.repeats,
        allow_changed: a.allow_changed,
    };
    let plan = ws.plan_again(again, &host)?;
    for note in &plan.notes {
        eprintln!("trainbench: note: {note}");
    }
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let (sweep, jobs) = ws.queue(&plan, None, &command)?;
    let interactive = std::io::stderr().is_terminal() && !a.json;
    crate::run_cmd::run_jobs(&mut ws, &host, &jobs, RunnerOptions::default(), interactive)?;
    let ids: Vec<i64> = jobs.iter().map(|j| j.run_id).collect();
    let rows = ws.runs_by_id(&ids)?;
    if a.json {
        println!(
            "{}",
            json!({"sweep_id": sweep, "again": run, "notes": plan.notes, "runs": rows.iter().map(run_json).collect::<Vec<_>>()})
        );
    } else {
        print_runs_table(&rows);
    }
    Ok(if rows.iter().all(|r| r.status == RunStatus::Completed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

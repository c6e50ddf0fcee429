//! `trainbench run`: a sweep planned, queued and run through the app layer,
//! then its runs, repeats and scaling printed.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use trainbench_app::batch_words::Narrated;
use trainbench_app::execute::{self, Finished};
use trainbench_app::sweep::{plan_request, Job, SweepPlan, SweepRequest};
use trainbench_app::{Host, RunnerOptions, Workspace};
use trainbench_core::compare::{compare, Grouping, Metric};
use trainbench_core::record::RunRow;
use trainbench_core::summary::{aggregate_repeats, RunStatus};

use crate::error::CliError;
use crate::open::open_workspace;
use crate::output::{self, print_runs_table, run_json, Bar};
use crate::run_args::{self, RunArgs};

/// Runs queued jobs one after another with a progress bar each; Ctrl-C
/// cancels the rest (each still stored, as cancelled).
pub fn run_jobs(
    ws: &mut Workspace,
    host: &Host,
    jobs: &[Job],
    opts: RunnerOptions,
    interactive: bool,
) -> Result<Vec<Finished>, CliError> {
    let runtime = execute::runtime()?;
    let cancel_rx = crate::ctrl_c::switch(&runtime, "trainbench: cancelling (Ctrl-C)");
    let finished = runtime.block_on(async {
        execute::run_jobs(
            ws,
            host,
            jobs,
            opts,
            cancel_rx,
            |n, total, job| {
                Bar::new(
                    interactive,
                    format!("run {}/{} #{} {}", n + 1, total, job.run_id, job.label),
                )
            },
            |bar, _| {
                if let Some(mut bar) = bar {
                    bar.finish();
                }
            },
        )
        .await
    })?;
    Ok(finished)
}

/// The batch searches of the plan, then its runs queued (the app's
/// `search_then_queue`), each probe printed on stderr as it ends; Ctrl-C
/// stops the search (the probes that ended stay stored).
fn search_then_queue(
    ws: &mut Workspace,
    host: &Host,
    plan: &mut trainbench_app::sweep::SweepPlan,
    command: &str,
    price: Option<&str>,
    opts: RunnerOptions,
) -> Result<(i64, Vec<Job>), CliError> {
    let runtime = execute::runtime()?;
    let cancel_rx =
        crate::ctrl_c::switch(&runtime, "trainbench: cancelling the batch search (Ctrl-C)");
    let queued = runtime.block_on(async {
        let mut printed = Narrated {
            say: |line: String| eprintln!("{line}"),
        };
        ws.search_then_queue(host, plan, command, price, opts, cancel_rx, &mut printed)
            .await
    })?;
    Ok(queued)
}

/// What each configuration's worker would be started with, one JSON line each.
fn print_plan(a: &RunArgs, host: &Host) -> Result<ExitCode, CliError> {
    let request = run_args::merge_config(a)?;
    let plan = plan_request(&request, host)?;
    if let Some(r) = plan.rejected.first() {
        return Err(r.clone().into());
    }
    for cfg in &plan.configs {
        let input = cfg.worker.stdin(&cfg.spec);
        println!(
            "{}",
            json!({
                "configuration": cfg.label,
                "program": cfg.worker.program,
                "args": cfg.worker.args,
                "env": cfg.worker.env.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
                "stdin": input,
                // With --batch-size max the stdin shows batch 1, the first
                // probe; the runs take the largest batch that fits.
                "batch_search": cfg.batch_search,
            })
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A sweep's request checked and planned on this machine, before the
/// database is touched: every combination's verdict, the first refusal
/// returned with its field. Releases named (`jax==0.7.2`) whose environment
/// is missing are made first, with the installer's progress on stderr.
pub fn check(a: &RunArgs, host: &Host) -> Result<(SweepRequest, SweepPlan), CliError> {
    let request = run_args::merge_config(a)?;
    crate::install::install_missing(&request.framework, host.gpu_count() > 0)?;
    let plan = plan_request(&request, host)?;
    if let Some(r) = plan.rejected.first() {
        return Err(r.clone().into());
    }
    Ok((request, plan))
}

/// The checked plan stored as a sweep of queued runs (its price checked,
/// notes and the estimate said on stderr); with `--batch-size max` the
/// largest batch that fits is searched first.
pub fn queue(
    ws: &mut Workspace,
    host: &Host,
    request: &SweepRequest,
    plan: &mut SweepPlan,
    command: &str,
    opts: RunnerOptions,
) -> Result<(i64, Vec<Job>), CliError> {
    if let Some(r) = ws.check_price(request.price.as_deref())? {
        return Err(r.into());
    }
    for note in ws.cost_notes(plan, request.price.as_deref())? {
        eprintln!("trainbench: note: {note}");
    }
    if let Some(d) = ws.estimate(plan)? {
        eprintln!("trainbench: estimated duration: {}", d.text);
    }
    if plan.configs.iter().any(|c| c.batch_search.is_some()) {
        // The largest batch that fits, probed before anything is queued.
        let queued = search_then_queue(ws, host, plan, command, request.price.as_deref(), opts)?;
        for r in &plan.rejected {
            eprintln!("trainbench: {r}");
        }
        Ok(queued)
    } else {
        Ok(ws.queue(plan, request.price.as_deref(), command)?)
    }
}

/// What a sweep's runs came to, once they have ended.
pub struct SweepReport {
    pub rows: Vec<RunRow>,
    pub groups: Vec<serde_json::Value>,
    pub scaling: Vec<serde_json::Value>,
    /// `run --json`'s document.
    pub json: serde_json::Value,
}

impl SweepReport {
    /// Whether a run did not complete (exit 1).
    pub fn failed(&self) -> bool {
        self.rows.iter().any(|r| r.status != RunStatus::Completed)
    }
}

/// The sweep's runs, each configuration's repeats and the scaling, read
/// back from the store; `started` is when the sweep was asked for.
pub fn report(
    ws: &Workspace,
    db: &Path,
    plan: &SweepPlan,
    (sweep, jobs): (i64, &[Job]),
    opts: RunnerOptions,
    started: std::time::Instant,
) -> Result<SweepReport, CliError> {
    let ids: Vec<i64> = jobs.iter().map(|j| j.run_id).collect();
    let rows = ws.runs_by_id(&ids)?;
    let groups = configuration_groups(ws, plan, jobs, &rows, sweep)?;
    let scaling = scaling_rows(plan, jobs, &rows);
    // The studio's own cost: CPU time of this process (not its workers).
    let studio = json!({
        "wall_s": started.elapsed().as_secs_f64(),
        "cpu_s": trainbench_app::self_cpu_seconds(),
        "telemetry_hz": 1.0 / opts.telemetry_interval.as_secs_f64(),
    });
    let json = json!({"sweep_id": sweep, "database": db, "runs": rows.iter().map(run_json).collect::<Vec<_>>(), "configurations": groups, "scaling": scaling, "studio": studio});
    Ok(SweepReport {
        rows,
        groups,
        scaling,
        json,
    })
}

pub fn run(db: &Path, a: RunArgs) -> Result<ExitCode, CliError> {
    let host = Host::open();
    if let Some(why) = host.gpu_unavailable() {
        eprintln!("trainbench: {why}; runs use the CPU");
    }
    if a.print_plan {
        return print_plan(&a, &host);
    }
    let sweep_started = std::time::Instant::now();
    // Every combination is checked before the database is touched.
    let (request, mut plan) = check(&a, &host)?;
    let timeout = run_args::silence_timeout(&a)?;
    let mut ws = open_workspace(db)?;
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let opts = RunnerOptions {
        silence_timeout: timeout,
        ..RunnerOptions::default()
    };
    let (sweep, jobs) = queue(&mut ws, &host, &request, &mut plan, &command, opts)?;
    let interactive = std::io::stderr().is_terminal() && !a.json;
    run_jobs(&mut ws, &host, &jobs, opts, interactive)?;
    let report = report(&ws, db, &plan, (sweep, &jobs), opts, sweep_started)?;
    if a.json {
        println!("{}", report.json);
    } else {
        print_runs_table(&report.rows);
        if plan.repeats > 1 {
            output::print_groups(&report.groups);
        }
        output::print_scaling(&report.scaling);
        for r in report
            .rows
            .iter()
            .filter(|r| r.status != RunStatus::Completed)
        {
            println!(
                "run {} {}: {}",
                r.id,
                r.status.as_str(),
                r.status_reason.as_deref().unwrap_or("no reason recorded")
            );
        }
        println!("stored in {}", db.display());
    }
    Ok(if report.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Each configuration's runs, repeats aggregated, and its batch search.
fn configuration_groups(
    ws: &Workspace,
    plan: &SweepPlan,
    jobs: &[Job],
    rows: &[RunRow],
    sweep: i64,
) -> Result<Vec<serde_json::Value>, CliError> {
    let mut groups = Vec::new();
    for (c, cfg) in plan.configs.iter().enumerate() {
        let members: Vec<_> = jobs
            .iter()
            .zip(rows)
            .filter(|(j, _)| j.config == c)
            .map(|(_, r)| r)
            .collect();
        let summaries: Vec<_> = members
            .iter()
            .filter(|r| r.status == RunStatus::Completed)
            .filter_map(|r| r.summary.clone())
            .collect();
        groups.push(json!({
            "configuration": cfg.label,
            "framework": cfg.framework,
            "environment": cfg.env,
            "spec": cfg.spec.raw,
            "run_ids": members.iter().map(|r| r.id).collect::<Vec<_>>(),
            "repeats": aggregate_repeats(&summaries),
            "batch_search": cfg.searched.as_deref().map(|k| ws.batch_search(sweep, k)).transpose()?,
        }));
    }
    Ok(groups)
}

/// Scaling: the comparison model's, over one entry per configuration.
fn scaling_rows(plan: &SweepPlan, jobs: &[Job], rows: &[RunRow]) -> Vec<serde_json::Value> {
    let label_of = |run_id: i64| {
        jobs.iter()
            .find(|j| j.run_id == run_id)
            .map_or_else(String::new, |j| plan.configs[j.config].label.clone())
    };
    let mut scaling = Vec::new();
    if let Ok(c) = compare(rows, Grouping::Configurations, None) {
        for e in &c.entries {
            let Some(one) = e
                .single_device_entry
                .as_ref()
                .and_then(|k| c.entries.iter().find(|o| &o.key == k))
            else {
                continue;
            };
            let tp =
                |x: &trainbench_core::compare::CompareEntry| x.metrics[&Metric::Throughput].value;
            scaling.push(json!({
                "configuration": label_of(e.run_ids[0]),
                "devices": e.devices,
                "single_device_configuration": label_of(one.run_ids[0]),
                "throughput_samples_per_s": tp(e),
                "single_device_throughput_samples_per_s": tp(one),
                "scaling_efficiency": e.scaling_efficiency,
            }));
        }
    }
    scaling
}

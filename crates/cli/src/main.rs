//! `trainbench`: the headless studio. Runs benchmarks (sweeps and interleaved
//! repeats) through the runner, keeps them in the SQLite store and shows,
//! compares and prices them. Every command takes `--json` and then prints one
//! JSON document. Exit codes: 0 success, 1 a run failed, 2 bad input.

mod args;
mod env_cmd;
mod gpu_check;
mod kit_cmd;
mod output;
mod report_cmd;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use serde_json::json;
use trainbench_core::models::{lookup, model_names, ModelOptions};
use trainbench_core::spec::{interleaved_plan, Machine, RunSpec, SpecError};
use trainbench_core::summary::{aggregate_repeats, RunStatus};
use trainbench_probe::GpuProbe;
use trainbench_runner::envs::EnvError;
use trainbench_runner::sweep::{
    check_price, plan_sweep, queue_sweep, QueuedRun, Rejected, SweepPlan,
};
use trainbench_runner::{Runner, RunnerOptions};
use trainbench_store::Store;

use crate::args::{Cli, Command, PriceCommand, RunArgs};
use crate::output::{print_compare, print_runs_table, print_show, run_json, Bar};
use trainbench_core::compare::{compare, CompareError, Grouping};

/// Errors a person fixes (exit 2) versus failures (exit 1).
#[derive(Debug)]
enum CliError {
    BadInput { field: String, message: String },
    Failed(String),
}

impl From<SpecError> for CliError {
    fn from(e: SpecError) -> Self {
        CliError::BadInput {
            field: e.field.clone(),
            message: e.to_string(),
        }
    }
}

impl From<EnvError> for CliError {
    fn from(e: EnvError) -> Self {
        match &e {
            EnvError::Bad { field, .. } => CliError::BadInput {
                field: (*field).to_owned(),
                message: e.to_string(),
            },
            _ => CliError::Failed(e.to_string()),
        }
    }
}

impl From<trainbench_store::StoreError> for CliError {
    fn from(e: trainbench_store::StoreError) -> Self {
        match e {
            trainbench_store::StoreError::NotFound { what, id } => CliError::BadInput {
                field: what.to_owned(),
                message: format!("{what} {id} does not exist"),
            },
            trainbench_store::StoreError::Invalid { field, .. } => CliError::BadInput {
                field: field.to_owned(),
                message: e.to_string(),
            },
            trainbench_store::StoreError::SessionFile(ref f) => CliError::BadInput {
                field: "file".to_owned(),
                message: f.to_string(),
            },
            trainbench_store::StoreError::Compare(ref c) => CliError::BadInput {
                field: match c {
                    CompareError::TooFew { .. } => "ids".to_owned(),
                    CompareError::BaselineNotCompared(_) => "baseline".to_owned(),
                },
                message: e.to_string(),
            },
            trainbench_store::StoreError::RunActive { .. } => CliError::BadInput {
                field: "runs".to_owned(),
                message: e.to_string(),
            },
            other => CliError::Failed(other.to_string()),
        }
    }
}

impl From<CompareError> for CliError {
    fn from(e: CompareError) -> Self {
        let field = match e {
            CompareError::TooFew { .. } => "ids",
            CompareError::BaselineNotCompared(_) => "baseline",
        };
        bad(field, e.to_string())
    }
}

fn bad(field: &str, message: String) -> CliError {
    CliError::BadInput {
        field: field.to_owned(),
        message,
    }
}

/// The database: `--db`, else the studio's default (`$TRAINBENCH_DB`, else the XDG data directory).
fn db_path(flag: Option<PathBuf>) -> PathBuf {
    flag.unwrap_or_else(trainbench_store::default_path)
}

fn open_store(path: &std::path::Path) -> Result<Store, CliError> {
    let store = Store::open(path)?;
    let n = store.mark_interrupted()?;
    if n > 0 {
        eprintln!("trainbench: {n} run(s) left running by a studio that stopped are now marked interrupted");
    }
    Ok(store)
}

impl From<Rejected> for CliError {
    fn from(r: Rejected) -> Self {
        CliError::BadInput {
            field: r.field,
            message: r.message,
        }
    }
}

/// The sweep's configurations, or the first reason one of them cannot run.
fn build_configs(a: &RunArgs, gpu: &GpuProbe) -> Result<SweepPlan, CliError> {
    let request = args::merge_config(a)?;
    let gpus = u32::try_from(gpu.gpus().len()).unwrap_or(0);
    let cores = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    let plan = plan_sweep(
        &request,
        Machine {
            gpus,
            cpu_cores: cores,
        },
        gpus > 0,
    );
    match plan.rejected.first() {
        Some(r) => Err(r.clone().into()),
        None => Ok(plan),
    }
}

fn cmd_run(db: &std::path::Path, a: RunArgs) -> Result<ExitCode, CliError> {
    let gpu = GpuProbe::open();
    if let Some(why) = &gpu.unavailable {
        eprintln!("trainbench: {why}; runs use the CPU");
    }
    let plan = build_configs(&a, &gpu)?;
    let configs = &plan.configs;
    if a.print_plan {
        for cfg in configs {
            let spec_json = serde_json::Value::Object(cfg.spec.clone()).to_string();
            let input = match &cfg.worker.plan_for {
                Some(f) => RunSpec::from_json(&spec_json)?.worker_plan_json(f),
                None => spec_json,
            };
            println!(
                "{}",
                json!({
                    "configuration": cfg.label,
                    "program": cfg.worker.program,
                    "args": cfg.worker.args,
                    "env": cfg.worker.env.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
                    "stdin": input,
                })
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let repeats = plan.repeats;
    {
        let store = Store::open(db)?;
        if let Some(r) = check_price(&store, a.price.as_deref())? {
            return Err(r.into());
        }
    }
    let timeout = match a.timeout.unwrap_or(600.0) {
        t if t.is_finite() && t > 0.0 => std::time::Duration::from_secs_f64(t),
        t => {
            return Err(bad(
                "timeout",
                format!("timeout = {t} is not allowed: expected seconds > 0"),
            ))
        }
    };
    let sweep_started = std::time::Instant::now();
    let mut store = open_store(db)?;
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let (sweep, queued) = queue_sweep(&store, &plan, a.price.as_deref(), &command)?;
    let order: Vec<(usize, usize)> = interleaved_plan(configs.len(), repeats as usize);
    let opts = RunnerOptions {
        silence_timeout: timeout,
        ..RunnerOptions::default()
    };
    let interactive = std::io::stderr().is_terminal() && !a.json;
    run_queued(&mut store, configs, &queued, &gpu, opts, interactive)?;
    let rows: Vec<_> = queued
        .iter()
        .map(|q| store.run_row(q.id))
        .collect::<Result<_, _>>()?;
    let mut groups = Vec::new();
    for (c, cfg) in configs.iter().enumerate() {
        let members: Vec<_> = order
            .iter()
            .zip(&rows)
            .filter(|((ci, _), _)| *ci == c)
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
            "spec": cfg.spec,
            "run_ids": members.iter().map(|r| r.id).collect::<Vec<_>>(),
            "repeats": aggregate_repeats(&summaries),
        }));
    }
    // Scaling: each multi-device configuration against the same one on one device.
    let mut scaling = Vec::new();
    for (c, cfg) in configs.iter().enumerate() {
        let n = cfg.spec["devices"].as_u64().unwrap_or(1) as u32;
        if n < 2 {
            continue;
        }
        let mut single = cfg.spec.clone();
        single.insert("devices".into(), json!(1));
        single.remove("parallel");
        let Some(one) = configs
            .iter()
            .position(|o| o.framework == cfg.framework && o.env == cfg.env && o.spec == single)
        else {
            continue;
        };
        let tp = |i: usize| groups[i]["repeats"]["throughput_mean_samples_per_s"].as_f64();
        scaling.push(json!({
            "configuration": cfg.label,
            "devices": n,
            "single_device_configuration": configs[one].label,
            "throughput_samples_per_s": tp(c),
            "single_device_throughput_samples_per_s": tp(one),
            "scaling_efficiency": trainbench_core::summary::scaling_efficiency(tp(c), n, tp(one)),
        }));
    }
    let failed = rows.iter().any(|r| r.status != RunStatus::Completed);
    // The studio's own cost: CPU time of this process (not its workers).
    let studio = json!({
        "wall_s": sweep_started.elapsed().as_secs_f64(),
        "cpu_s": trainbench_probe::self_cpu_seconds(),
        "telemetry_hz": 1.0 / opts.telemetry_interval.as_secs_f64(),
    });
    if a.json {
        println!(
            "{}",
            json!({"sweep_id": sweep, "database": db, "runs": rows.iter().map(run_json).collect::<Vec<_>>(), "configurations": groups, "scaling": scaling, "studio": studio})
        );
    } else {
        print_runs_table(&rows);
        if repeats > 1 {
            output::print_groups(&groups);
        }
        output::print_scaling(&scaling);
        for r in rows.iter().filter(|r| r.status != RunStatus::Completed) {
            println!(
                "run {} {}: {}",
                r.id,
                r.status.as_str(),
                r.status_reason.as_deref().unwrap_or("no reason recorded")
            );
        }
        println!("stored in {}", db.display());
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Runs queued runs one after another (Ctrl-C cancels the rest), each stored
/// with its outcome.
fn run_queued(
    store: &mut Store,
    configs: &[trainbench_runner::sweep::PlannedConfig],
    queued: &[QueuedRun],
    gpu: &GpuProbe,
    opts: RunnerOptions,
    interactive: bool,
) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("cannot start the runtime: {e}")))?;
    let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let total = queued.len();
    runtime.block_on(async {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\ntrainbench: cancelling (Ctrl-C)");
                let _ = cancel_tx.send(true);
            }
        });
        for (
            n,
            QueuedRun {
                id,
                spec_json,
                label,
                config: c,
            },
        ) in queued.iter().enumerate()
        {
            if *cancel_rx.borrow() {
                store.finish_run(
                    *id,
                    RunStatus::Cancelled,
                    Some("the sweep was cancelled before this run started"),
                    None,
                    None,
                    "",
                )?;
                continue;
            }
            let mut bar = Bar::new(
                interactive,
                format!("run {}/{} #{id} {label}", n + 1, total),
            );
            let runner = Runner {
                worker: configs[*c].worker.clone(),
                gpu,
                opts,
            };
            let outcome = runner
                .run(store, *id, spec_json, &mut bar, cancel_rx.clone())
                .await;
            bar.finish();
            match outcome {
                Ok(_) => {}
                Err(e) => return Err(CliError::Failed(e.to_string())),
            }
        }
        Ok::<(), CliError>(())
    })?;
    drop(runtime);
    Ok(())
}

fn cmd_describe(model: &str, opts: ModelOptions, json_out: bool) -> Result<ExitCode, CliError> {
    let entry = lookup(model).ok_or_else(|| {
        bad(
            "model",
            format!(
                "model = {model} is not allowed: expected one of {}",
                model_names().join(", ")
            ),
        )
    })?;
    let cfg = entry.config(&opts)?;
    let v = json!({
        "model": model,
        "family": entry.family,
        "param_count": cfg.param_count(),
        "param_count_source": "analytical (the worker's describe counts the built tensors and must agree)",
        "head_param_count": cfg.head_param_count(),
        "reference_params": entry.reference_params,
        "forward_macs": cfg.forward_macs(),
        "flops_per_sample": cfg.flops_per_sample(),
        "config": cfg,
    });
    if json_out {
        println!("{v}");
    } else {
        println!(
            "{model}: {} parameters, {:.4e} training FLOPs per sample ({})",
            cfg.param_count(),
            cfg.flops_per_sample(),
            entry.summary
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_ids(ids: &[String]) -> Result<Vec<i64>, CliError> {
    ids.iter()
        .map(|s| {
            s.parse::<i64>().map_err(|_| {
                bad(
                    "id",
                    format!(
                        "id = {s} is not allowed: expected a run number (see `trainbench runs`)"
                    ),
                )
            })
        })
        .collect()
}

fn cmd_prices(
    db: &std::path::Path,
    cmd: Option<PriceCommand>,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    let store = open_store(db)?;
    match cmd {
        None | Some(PriceCommand::List) => {}
        Some(PriceCommand::Add(p)) | Some(PriceCommand::Edit(p))
            if p.offering.trim().is_empty() =>
        {
            return Err(bad(
                "offering",
                "offering = \"\" is not allowed: expected a name".into(),
            ))
        }
        Some(PriceCommand::Add(p)) => {
            if store.price(&p.offering)?.is_some() {
                return Err(bad(
                    "offering",
                    format!(
                        "offering = {} already exists: use `trainbench prices edit`",
                        p.offering
                    ),
                ));
            }
            let row = args::price_row(&p, None)?;
            store.upsert_price(&row, true)?;
        }
        Some(PriceCommand::Edit(p)) => {
            let existing = store.price(&p.offering)?.ok_or_else(|| {
                bad(
                    "offering",
                    format!(
                        "offering = {} is not in the price table: use `trainbench prices add`",
                        p.offering
                    ),
                )
            })?;
            let row = args::price_row(&p, Some(existing))?;
            store.upsert_price(&row, true)?;
        }
    }
    let rows = store.prices()?;
    if json_out {
        let v: Vec<_> = rows
            .iter()
            .map(|(p, edited)| json!({"row": p, "edited_by_user": edited}))
            .collect();
        println!("{}", json!({ "prices": v }));
    } else {
        output::print_prices(&rows);
    }
    Ok(ExitCode::SUCCESS)
}

fn real_main() -> Result<ExitCode, CliError> {
    let cli = Cli::parse();
    let db = db_path(cli.db.clone());
    match cli.command {
        Command::Run(a) => cmd_run(&db, *a),
        Command::Describe {
            model,
            num_classes,
            image_size,
            in_channels,
            seq_len,
            vocab_size,
            json,
        } => cmd_describe(
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
        Command::Runs { json } => {
            let store = open_store(&db)?;
            let rows = store.list_runs()?;
            if json {
                println!(
                    "{}",
                    json!({"runs": rows.iter().map(run_json).collect::<Vec<_>>()})
                );
            } else {
                print_runs_table(&rows);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Show { id, json } => {
            let store = open_store(&db)?;
            let id = parse_ids(&[id])?[0];
            let detail = store.run_detail(id)?;
            if json {
                let mut v =
                    serde_json::to_value(&detail).map_err(|e| CliError::Failed(e.to_string()))?;
                if let (Some(obj), serde_json::Value::Object(flat)) =
                    (v.as_object_mut(), run_json(&detail.row))
                {
                    for (k, val) in flat {
                        obj.insert(k, val);
                    }
                }
                println!("{v}");
            } else {
                print_show(&detail);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare {
            ids,
            baseline,
            by_config,
            json,
        } => {
            let store = open_store(&db)?;
            let rows = parse_ids(&ids)?
                .into_iter()
                .map(|id| store.run_row(id))
                .collect::<Result<Vec<_>, _>>()?;
            let grouping = if by_config {
                Grouping::Configurations
            } else {
                Grouping::Runs
            };
            let c = compare(&rows, grouping, baseline)?;
            if json {
                println!("{}", output::compare_report(&rows, &c));
            } else {
                print_runs_table(&rows);
                print_compare(&c);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Session { command, json } => report_cmd::session(&db, command, json),
        Command::Export { command } => report_cmd::export(&db, command),
        Command::Import { file, json } => report_cmd::import(&db, &file, json),
        Command::Delete { ids, yes } => report_cmd::delete(&db, &ids, yes),
        Command::Prices { command, json } => cmd_prices(&db, command, json),
        Command::Env { command, json } => env_cmd::run(command, json),
        Command::GpuCheck(a) => gpu_check::run(&db, *a),
        Command::Kit { command } => kit_cmd::run(command),
    }
}

fn main() -> ExitCode {
    let json_mode = std::env::args().any(|a| a == "--json");
    match real_main() {
        Ok(code) => code,
        Err(CliError::BadInput { field, message }) => {
            if json_mode {
                println!(
                    "{}",
                    json!({"error": {"code": "bad_input", "field": field, "message": message}})
                );
            }
            eprintln!("trainbench: {message}");
            ExitCode::from(2)
        }
        Err(CliError::Failed(message)) => {
            if json_mode {
                println!(
                    "{}",
                    json!({"error": {"code": "failed", "message": message}})
                );
            }
            eprintln!("trainbench: {message}");
            ExitCode::from(1)
        }
    }
}

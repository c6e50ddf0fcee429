//! `trainbench`: the headless studio. Runs benchmarks (sweeps and interleaved
//! repeats), keeps them in the SQLite store and shows, compares and prices
//! them — every use case through `trainbench-app`, the layer the desktop app
//! uses too; this binary parses arguments and prints. Every command takes
//! `--json` and then prints one JSON document. Exit codes: 0 success, 1 a run
//! failed, 2 bad input (3: `gpu-check` or `gpu-session` without a GPU;
//! `gate`: 1 slower beyond the threshold, 3 undecided).
//!
//! Modules:
//! - [`args`]: command-line arguments: the commands and their flags (`run`'s,
//!   with its TOML file, in `run_args`).
//! - [`bisect_cmd`]: `trainbench bisect`: which release of a framework first
//!   changed a metric, by binary search between a good and a bad release.
//! - [`ctrl_c`]: Ctrl-C as the stop switch of a command that runs.
//! - [`env_cmd`]: `trainbench env`: the framework environments (list, check,
//!   install, register, remove).
//! - [`error`]: the CLI's errors: input a person fixes (exit 2, the field
//!   named), a failure (exit 1), or a failure after part of a streamed
//!   document was written.
//! - [`gate_cmd`]: `trainbench gate`: a performance gate for continuous
//!   integration.
//! - [`gpu_check`]: `trainbench gpu-check`: the GPU acceptance suite.
//! - [`gpu_session`]: `trainbench gpu-session`: the most valuable GPU
//!   measurements within a time budget, with peers on the same GPU.
//! - [`host_cmd`]: `trainbench host`, `attach` and the hidden `agent`: remote
//!   hosts over SSH through the app layer (`trainbench_app::remote`).
//! - [`install`]: installing a framework's environment from the CLI: the
//!   installer's lines and figures on stderr, Ctrl-C cancelling it.
//! - [`kit_cmd`]: `trainbench kit build -o DIR`: a self-contained folder that
//!   measures on a machine where the studio is not installed but a framework
//!   is.
//! - [`mcp`]: `trainbench mcp`: the studio as an MCP (Model Context Protocol)
//!   server over stdio, for an agent's client.
//! - [`model_filters`]: `trainbench models`' family, size, CPU and count flags.
//! - [`models_cmd`]: `trainbench models` (the catalogue), `trainbench describe`
//!   (one model at the input asked for) and `trainbench glossary` (the studio's
//!   words).
//! - [`open`]: the database a command works on, opened, and run ids as typed.
//! - [`output`]: what the CLI prints: progress, tables, run details,
//!   comparisons, step breakdowns and operator profiles.
//! - [`prices_cmd`]: `trainbench prices`: the price table (list, add, edit,
//!   delete) under the one rule set the desktop app's settings use too.
//! - [`project_cmd`]: `trainbench project RUN --gpu NAME | --threads N`: a
//!   stored run projected to hardware it did not run on.
//! - [`published_cmd`]: `trainbench published`: the published training results
//!   the studio ships.
//! - [`query_cmd`]: `trainbench query`: the application's read-only query,
//!   printed as a table (default), CSV or JSON.
//! - [`report_cmd`]: `trainbench session …`, `export …` and `import`: flags
//!   parsed into the app layer's selections, sessions and files; results
//!   printed.
//! - [`rerun_cmd`]: `trainbench rerun ID`: a stored run's configuration queued
//!   and run again on this machine, as a new sweep.
//! - [`run_args`]: `trainbench run`'s flags and its TOML file, merged into one
//!   sweep request (several values of one flag make a sweep).
//! - [`run_cmd`]: `trainbench run`: a sweep planned, queued and run through the
//!   app layer, then its runs, repeats and scaling printed.
//! - [`runs_cmd`]: `trainbench runs`, `show`, `compare` and `delete`.
//! - [`script_flags`]: `run --script PATH.py [-- ARGS…]`: a person's training
//!   script as the sweep request's model, its arguments as the request's
//!   alternatives.
//! - [`tune_cmd`]: `trainbench tune`: the best way to train one model on this
//!   machine, searched by successive halving.

mod args;
mod bisect_cmd;
mod ctrl_c;
mod env_cmd;
mod error;
mod gate_cmd;
mod gpu_check;
mod gpu_session;
#[cfg(test)]
mod help_tests;
mod host_cmd;
mod install;
mod kit_cmd;
#[cfg(test)]
mod listing_tests;
mod mcp;
mod model_filters;
mod models_cmd;
mod open;
mod output;
mod prices_cmd;
mod project_cmd;
mod published_cmd;
mod query_cmd;
mod report_cmd;
mod rerun_cmd;
mod run_args;
mod run_cmd;
mod runs_cmd;
mod script_flags;
mod tune_cmd;

use std::process::ExitCode;

use clap::Parser;
use serde_json::json;
use trainbench_core::text::{escape_controls, panic_message};

use crate::args::{Cli, Command};
use crate::error::CliError;
use crate::open::locate;

fn real_main(json_mode: bool) -> Result<ExitCode, CliError> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match error::argument_error(&e) {
            // Under --json the error is one JSON document (main prints it).
            Some(err) if json_mode => return Err(err),
            _ => e.exit(),
        },
    };
    let at = locate(cli.db.as_deref());
    let db = at.path.clone();
    if matches!(
        cli.command,
        Command::Run(_) | Command::Bisect(_) | Command::Gate(_) | Command::Tune(_) | Command::Mcp
    ) {
        // Runs shortened for the docs' examples are said to be (and refused
        // before anything runs when the variable's value is not a number).
        if let Some(s) = trainbench_app::shortened::Shortened::from_env()? {
            eprintln!("trainbench: {}", s.said());
        }
    }
    match cli.command {
        Command::Run(a) => run_cmd::run(&db, *a),
        Command::Bisect(a) => bisect_cmd::bisect(&db, *a),
        Command::Gate(a) => gate_cmd::gate(&db, *a),
        Command::Tune(a) => tune_cmd::tune(&db, *a),
        Command::Describe {
            model,
            framework,
            input_shape,
            num_classes,
            image_size,
            in_channels,
            seq_len,
            vocab_size,
            json,
        } => models_cmd::describe(
            &model,
            models_cmd::OwnModel {
                framework,
                input_shape,
            },
            trainbench_core::models::ModelOptions {
                num_classes,
                image_size,
                in_channels,
                seq_len,
                vocab_size,
            },
            json,
        ),
        Command::Models {
            search,
            filters,
            json,
        } => models_cmd::command(search, filters, json),
        Command::Glossary { term, json } => models_cmd::glossary(term.as_deref(), json),
        Command::Runs { json } => runs_cmd::runs(&at, json),
        Command::Rerun(a) => rerun_cmd::rerun(&db, *a),
        Command::Show {
            id,
            beside_record,
            json,
        } => runs_cmd::show(&db, id, beside_record, json),
        Command::Compare {
            ids,
            baseline,
            by_config,
            beside_record,
            json,
        } => runs_cmd::compare(&db, &ids, baseline, by_config, beside_record, json),
        Command::Explain {
            a,
            b,
            by_config,
            json,
        } => runs_cmd::explain(&db, a, b, by_config, json),
        Command::Session { command, json } => report_cmd::session(&db, command, json),
        Command::Export { command, json } => report_cmd::export(&db, command, json),
        Command::Import { file, json } => report_cmd::import(&db, &file, json),
        Command::Delete { ids, yes, json } => runs_cmd::delete(&db, &ids, yes, json),
        Command::Prices { command, json } => prices_cmd::run(&db, command, json),
        Command::Env { command, json } => env_cmd::run(command, &at, json),
        Command::GpuCheck(a) => gpu_check::run(&db, *a),
        Command::GpuSession(a) => gpu_session::run(&db, *a),
        Command::Published { id, json } => published_cmd::run(id, json),
        Command::Query {
            sql,
            csv,
            json,
            max_rows,
            timeout,
        } => query_cmd::run(
            &db,
            trainbench_app::query::QueryRequest {
                sql,
                max_rows,
                timeout_s: timeout,
            },
            query_cmd::Format::from_flags(csv, json),
        ),
        Command::Project {
            id,
            gpu,
            threads,
            json,
        } => project_cmd::run(&db, id, gpu, threads, json),
        Command::Kit { command } => kit_cmd::run(command),
        Command::Host { command, json } => host_cmd::host(command, json),
        Command::Attach {
            id,
            abandon: true,
            json,
        } => host_cmd::abandon(&db, id, json),
        Command::Attach { id, json, .. } => host_cmd::attach(&db, id, json),
        Command::Agent { command } => host_cmd::agent(command),
        Command::Mcp => mcp::serve(at),
    }
}

/// `trainbench runs | head` closes stdout early: Rust ignores SIGPIPE and
/// `println!` then panics. Exit the way a shell tool does (128 + SIGPIPE),
/// quietly, and leave every other panic to the default hook.
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = panic_message(info.payload()).unwrap_or("");
        if msg.contains("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    quiet_broken_pipe();
    let json_mode = std::env::args().any(|a| a == "--json");
    match real_main(json_mode) {
        Ok(code) => code,
        Err(CliError::BadInput { field, message }) => {
            if json_mode {
                println!(
                    "{}",
                    json!({"error": {"code": "bad_input", "field": field, "message": message}})
                );
            }
            eprintln!("trainbench: {}", escape_controls(&message));
            ExitCode::from(2)
        }
        Err(CliError::Unfinished(message)) => {
            eprintln!("trainbench: {}", escape_controls(&message));
            ExitCode::from(1)
        }
        Err(CliError::Failed(message)) => {
            if json_mode {
                println!(
                    "{}",
                    json!({"error": {"code": "failed", "message": message}})
                );
            }
            eprintln!("trainbench: {}", escape_controls(&message));
            ExitCode::from(1)
        }
    }
}

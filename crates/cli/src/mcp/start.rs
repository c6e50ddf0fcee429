//! `start_run` and `start_tune`: settings with the keys of `run`'s TOML file,
//! checked, planned and queued as `trainbench run` and `tune` do them, then
//! handed to the server's queue. A person's own code (a model file, a
//! training script) is refused here: it runs only when a person names it,
//! at a terminal, and an agent's request is not that.

use std::time::Instant;

use serde_json::{json, Map, Value};
use trainbench_app::{Host, RunnerOptions, Workspace};
use trainbench_core::models::script;

use super::args::Answer;
use super::queue::{Queue, Work};
use crate::error::{bad, CliError};
use crate::run_args::{self, RunArgs};
use crate::tune_cmd::TuneArgs;

/// Where a refused setting came from, in its message.
const ORIGIN: &str = "the tool's settings";

/// Refuses what would run a person's own code, in the settings as merged
/// (a list's items are joined and split again on commas there, so one item
/// can hold several models: each is checked as the planner will read it).
fn refuse_own_code(a: &RunArgs) -> Result<(), CliError> {
    if a.script.is_some() || !a.script_args.is_empty() {
        let key = if a.script.is_some() {
            "script"
        } else {
            "script_args"
        };
        return Err(bad(
            key,
            format!("{key} is not allowed here: a training script is a person's own code, which the studio runs only when a person names it (`trainbench run --script PATH.py` in a terminal); expected a model by name"),
        ));
    }
    let models = a
        .model
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .map(str::trim);
    for m in models {
        if script::names_own_code(m) {
            return Err(bad(
                "model",
                format!("model = {m} is not allowed here: a model from a file is a person's own code, which the studio runs only when a person names it (`trainbench run --model {m}` in a terminal); expected a catalogue name (`models` lists them), timm:NAME, hf:MODEL_TYPE or keras:NAME"),
            ));
        }
    }
    Ok(())
}

/// A JSON value as the TOML value the config file would hold.
fn toml_value(key: &str, v: &Value) -> Result<toml::Value, CliError> {
    let wrong = || {
        bad(
            key,
            format!("{key} = {v} is not allowed: expected a string, a number, true or false, or a list of them"),
        )
    };
    Ok(match v {
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64().ok_or_else(wrong)?),
        },
        Value::Array(list) => toml::Value::Array(
            list.iter()
                .map(|x| match x {
                    Value::Array(_) | Value::Object(_) | Value::Null => Err(wrong()),
                    _ => toml_value(key, x),
                })
                .collect::<Result<_, _>>()?,
        ),
        Value::Null | Value::Object(_) => return Err(wrong()),
    })
}

/// The run flags `settings` give, as a config file with these keys would.
fn run_args(settings: &Map<String, Value>) -> Result<RunArgs, CliError> {
    let mut table = toml::Table::new();
    for (key, v) in settings.iter().filter(|(_, v)| !v.is_null()) {
        table.insert(key.clone(), toml_value(key, v)?);
    }
    let mut a = RunArgs::default();
    run_args::apply_settings(&mut a, &table, ORIGIN)?;
    refuse_own_code(&a)?;
    Ok(a)
}

/// The silence a worker is allowed: `timeout_s`, else `run`'s default.
fn runner_options(a: &mut RunArgs, timeout_s: Option<f64>) -> Result<RunnerOptions, CliError> {
    a.timeout = timeout_s;
    Ok(RunnerOptions {
        silence_timeout: run_args::silence_timeout(a)?,
        ..RunnerOptions::default()
    })
}

/// The command stored with the sweep: what the agent asked for.
fn command(tool: &str, settings: &Map<String, Value>) -> String {
    format!("trainbench mcp {tool} {}", Value::Object(settings.clone()))
}

/// The answer when the caller waits, or what was queued when it does not.
fn answer_of(
    waited: Option<tokio::sync::oneshot::Receiver<Result<Value, CliError>>>,
    queued: Value,
    text: String,
) -> Result<Answer, CliError> {
    match waited {
        None => Ok(Answer { json: queued, text }),
        Some(rx) => {
            let json = rx.blocking_recv().map_err(|_| {
                CliError::Failed("the run queue stopped before the runs ended".into())
            })??;
            let text = ended_text(&json);
            Ok(Answer { json, text })
        }
    }
}

/// "run 3 completed; run 4 failed: …".
fn ended_text(v: &Value) -> String {
    let Some(runs) = v["runs"].as_array() else {
        return v["verdict"]
            .as_str()
            .unwrap_or("the search ended")
            .to_owned();
    };
    let said: Vec<String> = runs
        .iter()
        .map(|r| {
            let mut s = format!("run {} {}", r["id"], r["status"].as_str().unwrap_or("?"));
            if let Some(t) = r["throughput_samples_per_s"].as_f64() {
                s.push_str(&format!(" at {t:.1} samples/s"));
            }
            if let Some(why) = r["status_reason"].as_str() {
                s.push_str(&format!(": {why}"));
            }
            s
        })
        .collect();
    said.join("; ")
}

/// `start_run`: the sweep checked and stored as queued runs, then run by
/// the queue; with `wait`, answered with `run --json`'s document.
pub fn start_run(
    queue: &Queue,
    db: &std::path::Path,
    settings: &Map<String, Value>,
    wait: bool,
    timeout_s: Option<f64>,
) -> Result<Answer, CliError> {
    let mut a = run_args(settings)?;
    if a.batch_size.as_deref().is_some_and(|b| b.trim() == "max") {
        return Err(bad(
            "batch_size",
            "batch_size = max is not offered here: its search trains probes before the queue's turn; expected whole numbers (`trainbench run --batch-size max` searches it in a terminal)".into(),
        ));
    }
    let opts = runner_options(&mut a, timeout_s)?;
    let started = Instant::now();
    let host = Host::open();
    let (request, mut plan) = crate::run_cmd::check(&a, &host)?;
    let mut ws = Workspace::open_beside(db)?;
    let (sweep, jobs) = crate::run_cmd::queue(
        &mut ws,
        &host,
        &request,
        &mut plan,
        &command("start_run", settings),
        opts,
    )?;
    let run_ids: Vec<i64> = jobs.iter().map(|j| j.run_id).collect();
    let queued = json!({"sweep_id": sweep, "run_ids": run_ids, "status": "queued"});
    let text = format!(
        "sweep {sweep} queued: run(s) {}; the `run` tool shows each as it ends",
        run_ids
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let work = Work::Sweep {
        plan: Box::new(plan),
        sweep,
        jobs,
        opts,
        started,
    };
    answer_of(queue.push(work, wait)?, queued, text)
}

/// `start_tune`: the search checked and planned as `tune` does it, then run
/// by the queue; with `wait`, answered with `tune --json`'s document.
pub fn start_tune(
    queue: &Queue,
    settings: &Map<String, Value>,
    objective: Option<String>,
    budget: Option<String>,
    wait: bool,
) -> Result<Answer, CliError> {
    let mut run = run_args(settings)?;
    let opts = runner_options(&mut run, None)?;
    let host = Host::open();
    let (plan, _) = crate::tune_cmd::check(
        &TuneArgs {
            objective,
            budget: budget.clone(),
            pdf: None,
            save_config: None,
            run,
        },
        &host,
    )?;
    let queued = json!({
        "status": "queued",
        "model": plan.model,
        "objective": plan.settings.objective,
        "candidates": plan.expected_candidates(),
        "refused_before_running": plan.unsupported.len(),
        "budget": budget.as_deref().unwrap_or("15m"),
    });
    let text = format!(
        "search of {} queued: {} candidate(s), budget {}; its runs appear in `runs` as they end",
        plan.model,
        plan.expected_candidates(),
        budget.as_deref().unwrap_or("15m")
    );
    let work = Work::Tune {
        plan: Box::new(plan),
        command: command("start_tune", settings),
        opts,
    };
    answer_of(queue.push(work, wait)?, queued, text)
}

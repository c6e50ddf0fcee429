//! The server's tools: each one's name, words, arguments (its input
//! schema is made from them) and the command function it calls.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Map, Value};
use trainbench_app::query::{query, to_json as query_json, QueryRequest};
use trainbench_app::Workspace;
use trainbench_core::models::ModelOptions;

use super::args::{Answer, Args};
use super::start;
use super::Context;
use crate::error::CliError;
use crate::models_cmd::{self, OwnModel};
use crate::runs_cmd::{self, Compared};

/// An argument's JSON type.
#[derive(Clone, Copy)]
enum Kind {
    Int,
    Number,
    Str,
    Bool,
    Ids,
    Settings,
}

struct Arg {
    name: &'static str,
    kind: Kind,
    about: &'static str,
    required: bool,
}

const fn arg(name: &'static str, kind: Kind, about: &'static str) -> Arg {
    Arg {
        name,
        kind,
        about,
        required: false,
    }
}

const fn needed(name: &'static str, kind: Kind, about: &'static str) -> Arg {
    Arg {
        name,
        kind,
        about,
        required: true,
    }
}

pub struct ToolDef {
    pub name: &'static str,
    about: &'static str,
    args: &'static [Arg],
    /// Reads only (no run started, nothing stored).
    reads_only: bool,
}

const SETTINGS: &str = "Run settings with the keys of `trainbench run --config FILE.toml` \
    (model, framework, precision, compile, device, devices, batch_size, steps, epochs, data, \
    window_steps, threads, repeats, lr, target_accuracy, price, …): a string, number, boolean \
    or list (a list or a comma-separated string makes a sweep). Not script, script_args or a \
    model from a file (PATH.py:FUNCTION): a person's own code runs only when a person names it.";

pub const TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "runs",
        about: "Every stored run (as `trainbench runs --json`): id, model, framework, precision, batch, status, throughput with its 95 % interval, peak memory, MFU; runs whose row cannot be read are listed under left_out.",
        args: &[],
        reads_only: true,
    },
    ToolDef {
        name: "run",
        about: "One stored run in full (as `trainbench show ID --json`): its configuration, summary, windows, evaluations, provenance, checks, batch search and the published results beside it.",
        args: &[needed("id", Kind::Int, "The run's id (`runs` lists them).")],
        reads_only: true,
    },
    ToolDef {
        name: "compare",
        about: "Runs compared (as `trainbench compare --json`): throughput, memory, cost, time to accuracy with intervals, deltas against the baseline, the decision matrix, scaling and warnings.",
        args: &[
            needed("ids", Kind::Ids, "Two or more run ids."),
            arg("baseline", Kind::Int, "The run the others are measured against. Default: the first."),
            arg("by_config", Kind::Bool, "Group repeats of one configuration. Default: false."),
        ],
        reads_only: true,
    },
    ToolDef {
        name: "explain",
        about: "Why run A is faster or slower than run B (as `trainbench explain --json`): the gap in time per sample part by part (data, forward, backward, optimizer, …).",
        args: &[
            needed("a", Kind::Int, "The first run's id."),
            needed("b", Kind::Int, "The second run's id."),
            arg("by_config", Kind::Bool, "Compare the two runs' configurations (their repeats averaged). Default: false."),
        ],
        reads_only: true,
    },
    ToolDef {
        name: "published",
        about: "The published training results the studio ships (as `trainbench published --json`), each with the MFU it implies and whether that is plausible.",
        args: &[arg("id", Kind::Str, "One result's id. Default: all.")],
        reads_only: true,
    },
    ToolDef {
        name: "project",
        about: "A stored run projected to hardware it did not run on (as `trainbench project --json`): throughput, epoch time, cost and energy as bands, labelled projected.",
        args: &[
            needed("id", Kind::Int, "The run's id."),
            arg("gpu", Kind::Str, "The GPU to project to (a name of the studio's peak table, e.g. H100 SXM). One of gpu and threads."),
            arg("threads", Kind::Int, "CPU threads to project to. One of gpu and threads."),
        ],
        reads_only: true,
    },
    ToolDef {
        name: "models",
        about: "The model catalogue (as `trainbench models --json`): name, family, parameters, FLOPs per sample, whether it trains on a CPU; with search, also the timm, Hugging Face and Keras names that contain it.",
        args: &[arg("search", Kind::Str, "Only names containing this text.")],
        reads_only: true,
    },
    ToolDef {
        name: "describe",
        about: "A model's parameters and FLOPs per sample at an input (as `trainbench describe --json`): a catalogue model analytically, a library model (timm:, hf:, keras:) built once by its worker and counted. Not a model from a file.",
        args: &[
            needed("model", Kind::Str, "A catalogue name, timm:NAME, hf:MODEL_TYPE[?key=value&…] or keras:NAME."),
            arg("framework", Kind::Str, "For a library model: pytorch, tensorflow or jax."),
            arg("num_classes", Kind::Int, "Classes of the head."),
            arg("image_size", Kind::Int, "Pixels per side."),
            arg("in_channels", Kind::Int, "Input channels."),
            arg("seq_len", Kind::Int, "Tokens per sequence."),
            arg("vocab_size", Kind::Int, "Vocabulary size."),
        ],
        reads_only: true,
    },
    ToolDef {
        name: "query",
        about: "One read-only SQL SELECT over the store's documented q_ views (as `trainbench query --json`; docs/query.md lists the views and columns), bounded in rows and time.",
        args: &[
            needed("sql", Kind::Str, "One SELECT statement over the q_ views."),
            arg("max_rows", Kind::Int, "Rows returned at most. Default: 1000."),
            arg("timeout_s", Kind::Number, "Seconds the query may take. Default: 10."),
        ],
        reads_only: true,
    },
    ToolDef {
        name: "start_run",
        about: "Starts a benchmark: the settings checked as `trainbench run` checks them (a refusal names the field), stored as queued runs and run by the server's queue, one run at a time. Without wait, answers at once with the sweep and run ids (the run tool shows each as it ends); with wait, when the runs have ended, with `run --json`'s document.",
        args: &[
            needed("settings", Kind::Settings, SETTINGS),
            arg("wait", Kind::Bool, "Answer when the runs have ended. Default: false."),
            arg("timeout_s", Kind::Number, "Seconds a worker may stay silent before its run is stopped as timeout. Default: 600."),
        ],
        reads_only: false,
    },
    ToolDef {
        name: "start_tune",
        about: "Starts a search for the fastest (or leanest, or cheapest) way to train one model here, as `trainbench tune`: the settings checked (a refusal names the field), then run by the server's queue within the budget. Without wait, answers at once with the plan's size; with wait, at the end with `tune --json`'s document.",
        args: &[
            needed("settings", Kind::Settings, SETTINGS),
            arg("objective", Kind::Str, "throughput, memory, cost (with price) or time-to-accuracy (with target_accuracy or target_loss). Default: throughput."),
            arg("budget", Kind::Str, "Time the search may take: 90s, 15m, 2h. Default: 15m."),
            arg("wait", Kind::Bool, "Answer when the search has ended. Default: false."),
        ],
        reads_only: false,
    },
];

fn schema(args: &[Arg]) -> JsonObject {
    let mut properties = Map::new();
    for a in args {
        let kind = match a.kind {
            Kind::Int => json!({"type": "integer"}),
            Kind::Number => json!({"type": "number"}),
            Kind::Str => json!({"type": "string"}),
            Kind::Bool => json!({"type": "boolean"}),
            Kind::Ids => json!({"type": "array", "items": {"type": "integer"}}),
            Kind::Settings => json!({"type": "object"}),
        };
        let mut kind = kind;
        kind["description"] = json!(a.about);
        properties.insert(a.name.to_owned(), kind);
    }
    let required: Vec<&str> = args.iter().filter(|a| a.required).map(|a| a.name).collect();
    let mut s = Map::new();
    s.insert("type".into(), json!("object"));
    s.insert("properties".into(), Value::Object(properties));
    s.insert("required".into(), json!(required));
    s.insert("additionalProperties".into(), json!(false));
    s
}

/// Every tool as the protocol lists it.
pub fn listed() -> Vec<Tool> {
    TOOLS
        .iter()
        .map(|t| {
            let mut hints = ToolAnnotations::default();
            hints.read_only_hint = Some(t.reads_only);
            hints.destructive_hint = Some(false);
            hints.open_world_hint = Some(false);
            Tool::new(t.name, t.about, Arc::new(schema(t.args))).with_annotations(hints)
        })
        .collect()
}

pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

pub fn names() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.name).collect()
}

/// The database opened beside the server's own connection: a run the
/// queue trains stays running.
fn workspace(context: &Context) -> Result<Workspace, CliError> {
    Ok(Workspace::open_beside(&context.at.path)?)
}

/// Calls `tool` with `arguments` (blocking).
pub fn call(
    tool: &ToolDef,
    context: &Context,
    arguments: &Map<String, Value>,
) -> Result<Answer, CliError> {
    let a = Args { map: arguments };
    let known: Vec<&str> = tool.args.iter().map(|x| x.name).collect();
    a.only(tool.name, &known)?;
    let json = match tool.name {
        "runs" => runs_cmd::runs_json(&workspace(context)?, &context.at)?.0,
        "run" => runs_cmd::show_json(&workspace(context)?, a.int("id")?, false)?,
        "compare" => Compared::load(
            &workspace(context)?,
            &a.ids("ids", 2)?,
            a.opt_int("baseline")?,
            a.flag("by_config")?,
            false,
        )?
        .to_json(),
        "explain" => runs_cmd::explain_json(
            &workspace(context)?,
            a.int("a")?,
            a.int("b")?,
            a.flag("by_config")?,
        )?,
        "published" => crate::published_cmd::published_json(a.opt_string("id")?.as_deref())?,
        "project" => crate::project_cmd::project_json(
            &workspace(context)?,
            a.int("id")?,
            a.opt_string("gpu")?,
            a.opt_int("threads")?
                .map(|n| {
                    u32::try_from(n).map_err(|_| {
                        crate::error::bad(
                            "threads",
                            format!("threads = {n} is not allowed: expected a whole number ≥ 1"),
                        )
                    })
                })
                .transpose()?,
        )?,
        "models" => models_cmd::models_json(a.opt_string("search")?.as_deref()),
        "describe" => describe(&a)?,
        "query" => query_json(&query(
            &context.at.path,
            &QueryRequest {
                sql: a.string("sql")?,
                max_rows: match a.opt_int("max_rows")? {
                    None => trainbench_app::query::DEFAULT_MAX_ROWS,
                    Some(n) => usize::try_from(n).map_err(|_| {
                        crate::error::bad(
                            "max_rows",
                            format!("max_rows = {n} is not allowed: expected a whole number of rows from 1 to {}", trainbench_app::query::MAX_ROWS_CEILING),
                        )
                    })?,
                },
                timeout_s: a
                    .opt_number("timeout_s")?
                    .unwrap_or(trainbench_app::query::DEFAULT_TIMEOUT_S),
            },
        )?),
        "start_run" => {
            return start::start_run(
                &context.queue,
                &context.at.path,
                &a.object("settings")?,
                a.flag("wait")?,
                a.opt_number("timeout_s")?,
            )
        }
        "start_tune" => {
            return start::start_tune(
                &context.queue,
                &a.object("settings")?,
                a.opt_string("objective")?,
                a.opt_string("budget")?,
                a.flag("wait")?,
            )
        }
        other => {
            return Err(CliError::Failed(format!(
                "the tool {other} has no call (a fault of the server)"
            )))
        }
    };
    let text = summary(tool.name, &json);
    Ok(Answer { json, text })
}

/// `describe`, with a model from a file refused: building it runs its code.
fn describe(a: &Args) -> Result<Value, CliError> {
    let model = a.string("model")?;
    if trainbench_core::models::FileRef::looks_like(&model) {
        return Err(crate::error::bad(
            "model",
            format!("model = {model} is not allowed here: describing a model from a file runs that file, which the studio does only when a person names it (`trainbench describe --model {model}` in a terminal); expected a catalogue name, timm:NAME, hf:MODEL_TYPE or keras:NAME"),
        ));
    }
    let opts = ModelOptions {
        num_classes: a.opt_int("num_classes")?,
        image_size: a.opt_int("image_size")?,
        in_channels: a.opt_int("in_channels")?,
        seq_len: a.opt_int("seq_len")?,
        vocab_size: a.opt_int("vocab_size")?,
    };
    let own = OwnModel {
        framework: a.opt_string("framework")?,
        input_shape: None,
    };
    Ok(models_cmd::described(&model, own, &opts)?.to_json())
}

/// The line of text beside a read tool's document.
fn summary(tool: &str, v: &Value) -> String {
    let count = |key: &str| v[key].as_array().map_or(0, Vec::len);
    match tool {
        "runs" => format!("{} stored run(s)", count("runs")),
        "compare" => format!("{} runs compared", count("runs")),
        "query" => format!("{} row(s)", count("rows")),
        "models" if v.get("models").is_some() => format!("{} catalogue models", count("models")),
        "published" => format!("{} published result(s)", count("published")),
        "explain" => v["explanation"]["verdict"]
            .as_str()
            .unwrap_or("the gap, part by part")
            .to_owned(),
        "run" => format!(
            "run {} {}{}",
            v["id"],
            v["status"].as_str().unwrap_or("?"),
            v["throughput_samples_per_s"]
                .as_f64()
                .map_or_else(String::new, |t| format!(", {t:.1} samples/s"))
        ),
        "describe" => format!(
            "{}: {} parameters, {} training FLOPs per sample",
            v["model"].as_str().unwrap_or("?"),
            v["param_count"],
            v["flops_per_sample"]
                .as_f64()
                .map_or_else(|| "not counted".to_owned(), |f| format!("{f:.4e}"))
        ),
        _ => format!("{tool}: see the structured content"),
    }
}

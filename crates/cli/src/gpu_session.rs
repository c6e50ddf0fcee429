//! `trainbench gpu-session`: the most valuable GPU measurements within a
//! time budget, with peers on the same GPU (`trainbench_gpu_session`),
//! each step said on stderr; `trainbench gpu-session fold DIR` folds an
//! output folder into docs/gpu-results.md and imports its session. Without
//! a GPU it says so and exits 3, unless `--rehearse` (small models, CPU).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;
use trainbench_app::Host;
use trainbench_gpu_session::{self as gpu_session, fold, Prepared, SessionRequest, Status};

use crate::error::CliError;
use crate::gpu_check::EXIT_NO_GPU;
use crate::open::open_workspace;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct GpuSessionArgs {
    #[command(subcommand)]
    pub command: Option<GpuSessionCommand>,
    /// Seconds for the whole session, outputs included: each item starts
    /// only when its allowance fits in what is left, and what still runs at
    /// the end is stopped. Default: 540 (a 10-minute machine call, with room).
    #[arg(long, default_value_t = gpu_session::DEFAULT_BUDGET_S, hide_default_value = true)]
    pub budget: f64,
    /// Folder for results.md, results.json, session.log, the session file,
    /// checks.json and report.pdf (default: gpu-session-YYYYMMDDHHMMSS here).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// PyTorch and JAX, comma separated (`FRAMEWORK@ENVIRONMENT` for a
    /// registered one). Default: the installed ones.
    #[arg(long, value_delimiter = ',')]
    pub framework: Vec<String>,
    /// The same plan with small models on the CPU (no GPU needed): what CI runs.
    #[arg(long)]
    pub rehearse: bool,
    /// Only these items, comma separated (ids as results.md lists them).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Seconds a worker may stay silent before its run is stopped.
    #[arg(long, default_value_t = 300.0)]
    pub timeout: f64,
    /// The record of earlier sessions (docs/gpu-results/, their results
    /// files): items it shows measured on this GPU model go after those
    /// never measured, so a short session spends its minutes on new
    /// figures. A kit passes its copy.
    #[arg(long)]
    pub measured: Option<PathBuf>,
    /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum GpuSessionCommand {
    /// The plan in the order a session would run it, with each item's
    /// allowance and how often the record shows it measured; runs nothing.
    Plan {
        /// The record to order by (as `gpu-session --measured`).
        #[arg(long)]
        measured: Option<PathBuf>,
        /// The GPU model whose record orders the plan, as NVML names it (e.g.
        /// "NVIDIA H100 80GB HBM3"). Default: this machine's first GPU (`cpu`
        /// with --rehearse).
        #[arg(long)]
        gpu: Option<String>,
        /// The rehearsal's plan (small models on the CPU).
        #[arg(long)]
        rehearse: bool,
        /// Seconds for the whole session, as `gpu-session --budget`: the plan
        /// says which items fit in it. Default: 540.
        #[arg(long, default_value_t = gpu_session::DEFAULT_BUDGET_S, hide_default_value = true)]
        budget: f64,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// Add a session's output folder to the record beside the GPU results
    /// document (docs/gpu-results/), write the document again from the
    /// record (a section with a row per item) and import its session file.
    Fold {
        /// The session's output folder (gpu-session --out).
        dir: PathBuf,
        /// The document to write; its record is the folder of its name.
        #[arg(long, default_value = "docs/gpu-results.md")]
        doc: PathBuf,
        /// Do not import the session file into the database.
        #[arg(long)]
        no_import: bool,
        /// A session's folder from the other GPU kind (H100 against H200),
        /// already in the record: the projections it made for this GPU are
        /// checked against what this session measured.
        #[arg(long)]
        against: Option<PathBuf>,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
    /// Write the GPU results document from its record (docs/gpu-results/);
    /// with --check, write nothing and fail when the document differs.
    Render {
        /// The document; its record is the folder of its name.
        #[arg(long, default_value = "docs/gpu-results.md")]
        doc: PathBuf,
        /// Exit 1, saying so, when the document is not what its record gives.
        #[arg(long)]
        check: bool,
    },
}

pub fn run(db: &Path, a: GpuSessionArgs) -> Result<ExitCode, CliError> {
    if let Some(GpuSessionCommand::Fold {
        dir,
        doc,
        no_import,
        against,
        json,
    }) = a.command
    {
        return fold_cmd(db, &dir, &doc, no_import, against.as_deref(), json);
    }
    if let Some(GpuSessionCommand::Render { doc, check }) = a.command {
        return render_cmd(&doc, check);
    }
    if let Some(GpuSessionCommand::Plan {
        measured,
        gpu,
        rehearse,
        budget,
        json,
    }) = a.command
    {
        if let Some(g) = &gpu {
            gpu_session::check_record_gpu(g, rehearse)?;
        }
        if !(budget.is_finite() && budget > 0.0) {
            return Err(crate::error::bad(
                "budget",
                format!("budget = {budget} is not allowed: expected seconds > 0"),
            ));
        }
        let gpu = gpu.or_else(|| gpu_session::record_gpu(rehearse, &Host::open().gpus()));
        let plan = Plan {
            measured: measured.as_deref(),
            gpu: gpu.as_deref(),
            rehearse,
            budget,
        };
        return plan_cmd(&plan, json);
    }
    let host = Host::open();
    let req = SessionRequest {
        budget_s: a.budget,
        out_dir: a.out.clone(),
        frameworks: a.framework.clone(),
        rehearse: a.rehearse,
        only: a.only.clone(),
        timeout_s: a.timeout,
        measured: a.measured.clone(),
    };
    let s = match gpu_session::prepare(&req, &host)? {
        Prepared::NoGpu(why) => {
            eprintln!("gpu-session: {why}. Nothing was run: this session measures GPUs (--rehearse runs its plan on the CPU with small models; exit {EXIT_NO_GPU}).");
            if a.json {
                println!("{}", json!({"gpu_session": "no_gpu", "reason": why}));
            }
            return Ok(ExitCode::from(EXIT_NO_GPU));
        }
        Prepared::Ready(s) => s,
    };
    let mut ws = open_workspace(db)?;
    let runtime = trainbench_app::execute::runtime()?;
    let cancel_rx = crate::ctrl_c::switch(
        &runtime,
        "gpu-session: stopping (Ctrl-C); the outputs are still written",
    );
    let outcome = gpu_session::run(&runtime, &mut ws, &host, &s, cancel_rx, &mut |line| {
        eprintln!("{line}")
    })?;
    let w = &outcome.written;
    if a.json {
        println!(
            "{}",
            json!({
                "out": s.out_dir.display().to_string(),
                "results": outcome.results,
                "session_file": w.session.as_ref().map(|p| p.display().to_string()),
                "checks_passed": w.checks_passed,
            })
        );
    } else {
        print!("{}", gpu_session::write::markdown(&s, &outcome.results));
        println!();
        println!("results: {}", w.results_md.display());
        if let Some(p) = &w.session {
            println!("session file: {} (bring it home with `trainbench import`, or fold the folder: `trainbench gpu-session fold {}`)", p.display(), s.out_dir.display());
        }
        match &w.pdf {
            Some(Ok(p)) => println!("report: {}", p.display()),
            Some(Err(e)) => println!("no PDF report: {e}"),
            None => {}
        }
    }
    let failed = outcome
        .results
        .iter()
        .any(|r| matches!(r.status, Status::Failed));
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn fold_cmd(
    db: &Path,
    dir: &Path,
    doc: &Path,
    no_import: bool,
    against: Option<&Path>,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    let mut ws = if no_import {
        None
    } else {
        Some(open_workspace(db)?)
    };
    let f = fold::fold(dir, doc, ws.as_mut(), against)?;
    if json_out {
        println!(
            "{}",
            json!({
                "doc": doc.display().to_string(),
                "stem": f.stem,
                "rows": f.rows,
                "imported_runs": f.imported.as_ref().map(|i| i.outcome.runs_imported),
                "session": f.imported.as_ref().map(|i| i.session.name.clone()),
            })
        );
    } else {
        println!(
            "{} rows added to {} (its record: {})",
            f.rows,
            doc.display(),
            f.stem
        );
        if let Some(i) = &f.imported {
            println!(
                "session \"{}\" imported: {} runs new, {} already here",
                i.session.name, i.outcome.runs_imported, i.outcome.runs_already_present
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `gpu-session render`: the document from its record, or `--check`ed.
fn render_cmd(doc: &Path, check: bool) -> Result<ExitCode, CliError> {
    let dir = gpu_session::record::folder_of(doc);
    let text = gpu_session::render::render(&dir)?;
    if check {
        let committed = std::fs::read_to_string(doc).unwrap_or_default();
        if committed != text {
            eprintln!(
                "{} is not what its record {} gives: run `trainbench gpu-session render --doc {}` and commit it",
                doc.display(),
                dir.display(),
                doc.display()
            );
            return Ok(ExitCode::from(1));
        }
        println!("{} is what its record gives", doc.display());
        return Ok(ExitCode::SUCCESS);
    }
    trainbench_app::reports::write_file(doc, text.as_bytes())?;
    println!("{} written from {}", doc.display(), dir.display());
    Ok(ExitCode::SUCCESS)
}

/// `gpu`: the GPU model whose rows in the record order the plan (`None`:
/// no GPU here and none named).
/// What `gpu-session plan` was asked.
struct Plan<'a> {
    measured: Option<&'a Path>,
    gpu: Option<&'a str>,
    rehearse: bool,
    budget: f64,
}

fn plan_cmd(p: &Plan<'_>, json_out: bool) -> Result<ExitCode, CliError> {
    let items = gpu_session::items::plan(p.rehearse);
    let (items, note, counts) = match (p.measured, p.gpu) {
        (Some(doc), Some(gpu)) => {
            let r = gpu_session::reorder(items, doc, gpu)?;
            (r.items, Some(r.note), r.counts)
        }
        (Some(_), None) => return Err(crate::error::bad(
            "gpu",
            "gpu = (none) is not allowed: this machine has no NVIDIA GPU; name the GPU model whose record orders the plan with --gpu, as NVML names it (e.g. \"NVIDIA H100 80GB HBM3\")".into(),
        )),
        (None, _) => (items, None, Default::default()),
    };
    let before = |id: &str| counts.get(id).copied().unwrap_or(0);
    let fits = gpu_session::fits_in_budget(&items, p.budget);
    let lengths = gpu_session::lengths(p.rehearse);
    // A studio run's steps in windows; a peer's timed steps after its warm-up.
    let steps = |i: &gpu_session::Item| {
        let l = lengths.of(i);
        match i.what {
            gpu_session::What::Studio { .. } => {
                format!("{} in windows of {}", l.steps, l.window_steps)
            }
            gpu_session::What::Peer { .. } => format!(
                "{} after {} untimed, windows of {}",
                l.peer_steps, l.peer_warmup, l.window_steps
            ),
            gpu_session::What::Tune(ref space) => format!(
                "probes of {} in windows of {}, longer each round",
                space.probe_steps, space.window_steps
            ),
        }
    };
    let fitting = fits.iter().filter(|f| **f).count();
    let total: f64 = items.iter().map(|i| i.allowance_s).sum();
    if json_out {
        let rows: Vec<_> = items
            .iter()
            .zip(&fits)
            .map(|(i, fits)| json!({"id": i.id, "title": i.title, "allowance_s": i.allowance_s, "steps": steps(i), "measured_before": before(&i.id), "fits_in_budget": fits}))
            .collect();
        let gpu = p.gpu.unwrap_or("cpu");
        println!(
            "{}",
            json!({"gpu": gpu, "order": note, "budget_s": p.budget, "reserve_s": gpu_session::RESERVE_S, "allowances_s": total, "fitting": fitting, "items": rows})
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(note) = &note {
        println!("{note}");
    }
    println!(
        "budget: {:.0} s ({:.0} s of it kept for the outputs); the allowances add up to {total:.0} s: {fitting} of {} items fit even if each takes its whole allowance.",
        p.budget,
        gpu_session::RESERVE_S,
        items.len()
    );
    let mut at = 0.0;
    println!(
        "| item | what | steps | allowed (s) | starts by (s) | in the budget | measured before |"
    );
    println!("|---|---|---|---:|---:|---|---:|");
    for (i, fits) in items.iter().zip(&fits) {
        let (starts, in_budget) = if *fits {
            (format!("{at:.0}"), "yes")
        } else {
            ("—".to_owned(), "only if earlier items end early")
        };
        println!(
            "| {} | {} | {} | {:.0} | {starts} | {in_budget} | {} |",
            i.id,
            i.title,
            steps(i),
            i.allowance_s,
            before(&i.id)
        );
        if *fits {
            at += i.allowance_s;
        }
    }
    println!("\n\"starts by\": the allowances of the items before it that fit, added up; an item starts only when its own allowance fits in what is left of the budget (less {:.0} s kept for the outputs), and one that does not is skipped. `--budget S` plans for another budget.", gpu_session::RESERVE_S);
    Ok(ExitCode::SUCCESS)
}

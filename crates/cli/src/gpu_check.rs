//! `trainbench gpu-check`: the GPU acceptance suite (`trainbench_app::gpu_check`:
//! the plan, the checks, the session, checks.json and the PDF), run here with
//! the CLI's progress, its verdicts and figures printed. Without a GPU it
//! says so and exits 3 without running anything.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use trainbench_app::gpu_check::{
    self, evidence_rows, figures_row, verdict_row, GpuCheckOutcome, GpuCheckPlan, GpuCheckRequest,
    Prepared, FIGURE_HEADERS,
};
use trainbench_app::{Host, RunnerOptions};
use trainbench_core::acceptance::CHECKS;

use crate::error::CliError;
use crate::open::open_workspace;
use crate::run_cmd::run_jobs;

/// Exit code when there is no GPU to check.
pub const EXIT_NO_GPU: u8 = 3;

#[derive(Args, Debug)]
pub struct GpuCheckArgs {
    /// Frameworks, comma separated (`FRAMEWORK@ENVIRONMENT` for a registered
    /// one). Default: tch when its worker is present, and every framework
    /// with a ready environment.
    #[arg(long, value_delimiter = ',')]
    pub framework: Vec<String>,
    /// Precisions, comma separated: fp32, tf32, amp-bf16, amp-fp16.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "fp32,tf32,amp-bf16,amp-fp16"
    )]
    pub precision: Vec<String>,
    /// Catalogue models, comma separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "vit_base_patch16_224,resnet50,bert_base_uncased"
    )]
    pub model: Vec<String>,
    /// Optimizer steps per run (windows of 5 steps; the first is warm-up).
    #[arg(long, default_value_t = 80)]
    pub steps: i64,
    /// Folder for report.pdf, the session file and checks.json
    /// (default: gpu-check-YYYYMMDD-HHMMSS in the current folder).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Seconds a worker may stay silent before its run is stopped.
    #[arg(long, default_value_t = 900.0)]
    pub timeout: f64,
    /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
    #[arg(long)]
    pub json: bool,
}

pub fn run(db: &Path, a: GpuCheckArgs) -> Result<ExitCode, CliError> {
    let host = Host::open();
    let req = GpuCheckRequest {
        frameworks: a.framework.clone(),
        precisions: a.precision.clone(),
        models: a.model.clone(),
        steps: a.steps,
        timeout_s: a.timeout,
        out_dir: a.out.clone(),
    };
    let p = match gpu_check::prepare(&req, &host)? {
        Prepared::NoGpu(why) => {
            eprintln!("gpu-check: {why}. Nothing was run: this suite measures GPUs only (exit {EXIT_NO_GPU}).");
            if a.json {
                println!("{}", json!({"gpu_check": "no_gpu", "reason": why}));
            }
            return Ok(ExitCode::from(EXIT_NO_GPU));
        }
        Prepared::Plan(p) => *p,
    };
    eprintln!(
        "gpu-check: {} GPU(s) ({}); {} runs of {} framework(s)",
        p.gpus.len(),
        p.gpus
            .iter()
            .map(|g| g.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        p.plan.configs.len(),
        p.frameworks.len()
    );
    for s in &p.skipped {
        eprintln!("gpu-check: {s}");
    }

    let mut ws = open_workspace(db)?;
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let (_, jobs) = ws.queue(&p.plan, None, &command)?;
    let opts = RunnerOptions {
        silence_timeout: std::time::Duration::from_secs_f64(a.timeout),
        ..RunnerOptions::default()
    };
    let interactive = std::io::stderr().is_terminal() && !a.json;
    run_jobs(&mut ws, &host, &jobs, opts, interactive)?;
    let ids: Vec<i64> = jobs.iter().map(|j| j.run_id).collect();
    let o = gpu_check::finish(&mut ws, &p, &ids)?;
    if a.json {
        println!("{}", o.checks_json);
    } else {
        print_outcome(&p, &o);
    }
    Ok(if o.all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_outcome(p: &GpuCheckPlan, o: &GpuCheckOutcome) {
    println!(
        "GPU acceptance suite on {}",
        p.gpus
            .iter()
            .map(|g| format!("gpu:{} {}", g.index, g.name))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!();
    print_table(
        &FIGURE_HEADERS,
        &o.details.iter().map(figures_row).collect::<Vec<_>>(),
    );
    println!();
    let mut headers = vec!["run"];
    headers.extend(CHECKS.iter().map(|c| c.1));
    print_table(
        &headers,
        &o.details
            .iter()
            .zip(&o.checks)
            .map(|(d, c)| verdict_row(d, c))
            .collect::<Vec<_>>(),
    );
    println!();
    for row in evidence_rows(&o.details, &o.checks) {
        println!("run {} {}: {} — {}", row[0], row[1], row[2], row[3]);
    }
    for s in &p.skipped {
        println!("{s}");
    }
    println!();
    match &o.pdf {
        Ok(path) => println!("report: {}", path.display()),
        Err(e) => println!("no PDF report: {e}"),
    }
    println!(
        "session file: {} (bring it home with `trainbench import`)",
        o.session_path.display()
    );
    println!("checks: {}", o.checks_path.display());
    println!(
        "gpu-check: {}",
        if o.all_passed {
            "every check passed"
        } else {
            "FAILED (see above)"
        }
    );
}

fn print_table(headers: &[&str], rows: &[Vec<String>]) {
    let widths: Vec<usize> = (0..headers.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .chain([headers[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    println!("{}", line(headers.to_vec()));
    for r in rows {
        println!("{}", line(r.iter().map(String::as_str).collect()));
    }
}

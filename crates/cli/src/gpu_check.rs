//! `trainbench gpu-check`: the GPU acceptance suite. On the GPUs present it
//! runs every installed framework × precision × (1 and, with ≥ 2 GPUs, N
//! devices) × ViT-B/16, ResNet-50 (224 px, synthetic) and BERT-base (seq 128),
//! plus one `torch.compile` and one TensorFlow XLA run; then it checks each
//! stored run (`core::acceptance`), prints the verdicts and the figures, and
//! writes the PDF report, the session file and the checks as JSON. Without a
//! GPU it says so and exits 3 without running anything.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use trainbench_app::reports::{write_file, Selected};
use trainbench_app::sweep::{plan_sweep, SweepPlan, SweepRequest};
use trainbench_app::{frameworks, now_unix_ms, utc_text, Host, RunnerOptions, SessionRef};
use trainbench_core::acceptance::{check_run, passed, Check, Verdict, CHECKS};
use trainbench_core::compare::Grouping;
use trainbench_core::record::RunDetail;
use trainbench_core::session::{ChartKind, SessionSettings};
use trainbench_core::Framework;

use crate::error::{bad, CliError};
use crate::open_workspace;
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
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "fp32,tf32,amp-bf16,amp-fp16"
    )]
    pub precision: Vec<String>,
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
    #[arg(long)]
    pub json: bool,
}

/// Batch size per device for each model of the suite (fits an 80 GB GPU at fp32).
fn batch_for(model: &str) -> i64 {
    match model {
        m if m.starts_with("resnet50") => 128,
        m if m.starts_with("vit_large") || m.starts_with("bert_large") => 32,
        _ => 64,
    }
}

/// The suite's configurations (one plan) and what was left out, with why.
fn plan(a: &GpuCheckArgs, frameworks: &[String], host: &Host) -> (SweepPlan, Vec<String>) {
    let machine = host.machine();
    let gpus = machine.gpus;
    let mut configs = Vec::new();
    let mut skipped = Vec::new();
    let base = SweepRequest {
        precision: a.precision.clone(),
        device: Some("cuda:0".into()),
        steps: Some(a.steps),
        window_steps: Some(5),
        ..SweepRequest::default()
    };
    let mut add = |req: SweepRequest, skipped: &mut Vec<String>| {
        let p = plan_sweep(&req, machine, true);
        configs.extend(p.configs);
        skipped.extend(
            p.rejected
                .into_iter()
                .map(|r| format!("{}: not run: {}", r.label, r.message)),
        );
    };
    for fw in frameworks {
        let kind = fw.split('@').next().unwrap_or(fw);
        let mut devices = vec![1];
        if gpus >= 2 && kind != Framework::Tch.as_str() {
            devices.push(i64::from(gpus));
        }
        for model in &a.model {
            add(
                SweepRequest {
                    model: vec![model.clone()],
                    framework: vec![fw.clone()],
                    batch_size: vec![batch_for(model)],
                    devices: devices.clone(),
                    ..base.clone()
                },
                &mut skipped,
            );
        }
    }
    // One torch.compile run and one TensorFlow XLA run, where installed.
    let vit = "vit_base_patch16_224".to_owned();
    for (kind, compile, what) in [
        (Framework::Pytorch.as_str(), "on", "torch.compile"),
        (Framework::Tensorflow.as_str(), "xla", "XLA"),
    ] {
        match frameworks
            .iter()
            .find(|f| f.split('@').next() == Some(kind))
        {
            Some(fw) => add(
                SweepRequest {
                    model: vec![vit.clone()],
                    framework: vec![fw.clone()],
                    precision: vec!["amp-bf16".into()],
                    compile: vec![compile.into()],
                    batch_size: vec![batch_for(&vit)],
                    ..base.clone()
                },
                &mut skipped,
            ),
            None => skipped.push(format!(
                "{what} run: not run: {kind} is not among the frameworks checked (not installed, or not named)"
            )),
        }
    }
    (
        SweepPlan {
            configs,
            rejected: Vec::new(),
            repeats: 1,
            memory_limit_bytes: None,
        },
        skipped,
    )
}

fn fmt_opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or("not measured".into(), f)
}

/// One line per run: what it measured.
fn figures_row(d: &RunDetail) -> Vec<String> {
    let s = d.row.summary.as_ref();
    let alloc = d
        .memory
        .iter()
        .filter(|m| m.source == "allocator")
        .map(|m| m.peak_bytes)
        .max();
    vec![
        format!("#{}", d.row.id),
        d.row.framework.to_string(),
        d.row.model.clone(),
        format!(
            "{}{}",
            d.row.precision,
            match d.spec["compile"].as_str() {
                Some("off") | None => String::new(),
                Some(c) => format!(" compile={c}"),
            }
        ),
        d.row.devices.to_string(),
        fmt_opt(s.and_then(|s| s.throughput_samples_per_s), |t| {
            format!("{t:.1}")
        }),
        fmt_opt(s.and_then(|s| s.mfu), |m| format!("{:.1} %", m * 100.0)),
        fmt_opt(s.and_then(|s| s.energy_j_per_sample), |j| format!("{j:.4}")),
        fmt_opt(alloc.map(|b| b as f64), |b| {
            format!("{:.2}", b / (1u64 << 30) as f64)
        }),
    ]
}

const FIGURE_HEADERS: [&str; 9] = [
    "run",
    "framework",
    "model",
    "precision",
    "devices",
    "samples/s",
    "MFU",
    "J/sample",
    "alloc GiB",
];

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

fn verdict_row(d: &RunDetail, checks: &[Check]) -> Vec<String> {
    let mut row = vec![format!("#{}", d.row.id)];
    for (key, _) in CHECKS {
        row.push(
            checks
                .iter()
                .find(|c| c.key == key)
                .map_or("?", |c| c.verdict.symbol())
                .to_owned(),
        );
    }
    row
}

pub fn run(db: &Path, a: GpuCheckArgs) -> Result<ExitCode, CliError> {
    let host = Host::open();
    let gpus = host.gpus();
    if gpus.is_empty() {
        let why = host
            .gpu_unavailable()
            .unwrap_or("no NVIDIA GPU: NVML lists no device")
            .to_owned();
        eprintln!("gpu-check: {why}. Nothing was run: this suite measures GPUs only (exit {EXIT_NO_GPU}).");
        if a.json {
            println!("{}", json!({"gpu_check": "no_gpu", "reason": why}));
        }
        return Ok(ExitCode::from(EXIT_NO_GPU));
    }
    if a.steps < 10 {
        return Err(bad(
            "steps",
            format!(
                "steps = {} is not allowed: expected at least 10 (two timed windows after warm-up)",
                a.steps
            ),
        ));
    }
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        return Err(bad(
            "timeout",
            format!(
                "timeout = {} is not allowed: expected seconds > 0",
                a.timeout
            ),
        ));
    }
    let frameworks = if a.framework.is_empty() {
        frameworks::installed_frameworks()
    } else {
        a.framework.clone()
    };
    if frameworks.is_empty() {
        return Err(bad(
            "framework",
            "framework = (none found) is not allowed: no framework is installed here; register one with `trainbench env register NAME --framework F --python PATH`".into(),
        ));
    }
    let out_dir = a.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "gpu-check-{}",
            utc_text(now_unix_ms())
                .replace([' ', ':', '-'], "")
                .replace("UTC", "")
        ))
    });
    std::fs::create_dir_all(&out_dir).map_err(|e| {
        bad(
            "out",
            format!("out = {} is not allowed: {e}", out_dir.display()),
        )
    })?;
    let (plan, skipped) = plan(&a, &frameworks, &host);
    eprintln!(
        "gpu-check: {} GPU(s) ({}); {} runs of {} framework(s)",
        gpus.len(),
        gpus.iter()
            .map(|g| g.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        plan.configs.len(),
        frameworks.len()
    );
    for s in &skipped {
        eprintln!("gpu-check: {s}");
    }
    if plan.configs.is_empty() {
        return Err(bad(
            "framework",
            format!(
                "framework = {} is not allowed: no configuration of the suite can run ({})",
                frameworks.join(","),
                skipped.join("; ")
            ),
        ));
    }

    let mut ws = open_workspace(db)?;
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let (_, jobs) = ws.queue(&plan, None, &command)?;
    let opts = RunnerOptions {
        silence_timeout: std::time::Duration::from_secs_f64(a.timeout),
        ..RunnerOptions::default()
    };
    let interactive = std::io::stderr().is_terminal() && !a.json;
    run_jobs(&mut ws, &host, &jobs, opts, interactive)?;

    let details: Vec<RunDetail> = jobs
        .iter()
        .map(|j| ws.run_detail(j.run_id))
        .collect::<Result<_, _>>()?;
    let checks: Vec<Vec<Check>> = details.iter().map(check_run).collect();
    let all_passed = checks.iter().all(|c| passed(c));

    // The session: the runs, comparable and portable (`trainbench import`).
    let ids: Vec<i64> = details.iter().map(|d| d.row.id).collect();
    let hostname = trainbench_app::hostname();
    let name = format!(
        "gpu-check {hostname} {} (runs #{}–#{})",
        utc_text(now_unix_ms()),
        ids.first().copied().unwrap_or(0),
        ids.last().copied().unwrap_or(0)
    );
    let settings = SessionSettings {
        grouping: Grouping::Runs,
        charts: ChartKind::ALL.to_vec(),
        hidden_series: Vec::new(),
    };
    let session = ws.save_session(&name, &ids, ids.first().copied(), &settings)?;
    let session_path = out_dir.join("gpu-check.trainbench-session.json");
    ws.export_session(
        &SessionRef::Id(session.id),
        &session_path,
        Some(&format!(
            "TrainBench Studio {} (gpu-check)",
            trainbench_app::VERSION
        )),
    )?;

    // The checks as JSON.
    let checks_json = json!({
        "passed": all_passed,
        "gpus": gpus,
        "frameworks": frameworks,
        "skipped": skipped,
        "session": name,
        "runs": details.iter().zip(&checks).map(|(d, c)| json!({
            "id": d.row.id, "framework": d.row.framework, "model": d.row.model,
            "precision": d.row.precision, "devices": d.row.devices, "status": d.row.status,
            "summary": d.row.summary, "loss_scale": d.loss_scale, "checks": c,
        })).collect::<Vec<_>>(),
    });
    write_file(
        &out_dir.join("checks.json"),
        checks_json.to_string().as_bytes(),
    )?;

    // The PDF: the suite's comparison with the verdicts first.
    let pdf_path = out_dir.join("report.pdf");
    let pdf_note = match ws.comparison(&ids, Grouping::Runs, None) {
        Ok(loaded) => {
            let config = |d: &RunDetail| {
                let f = figures_row(d);
                format!("{} {} {} ×{}", f[1], f[2], f[3], f[4])
            };
            // One row per run, one column per check (as the terminal shows it).
            let matrix: Vec<Vec<String>> = details
                .iter()
                .zip(&checks)
                .map(|(d, c)| {
                    let mut row = verdict_row(d, c);
                    row.insert(1, config(d));
                    row
                })
                .collect();
            let mut headers = vec!["Run".to_owned(), "Configuration".to_owned()];
            headers.extend(CHECKS.iter().map(|c| c.1.to_owned()));
            let mut widths = vec![26.0, 150.0];
            widths.extend(CHECKS.iter().map(|_| 40.0));
            let verdicts = trainbench_app::Section {
                heading: "GPU acceptance checks".into(),
                text: format!(
                    "{} on {}: {}. Skipped: {}.",
                    if all_passed { "Every check passed" } else { "Some checks FAILED" },
                    gpus.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join(", "),
                    "done = completed; alloc = framework allocator peak; nvml = NVML memory, utilisation, power and energy samples; energy = energy per sample with the counter within 10 % of mean power × time; mfu = 0 < MFU ≤ 1; sku = the GPU's exact SKU in the peak table (or unknown); scale = amp-fp16 with dynamic loss scaling; warn = run warnings. ok passed, FAIL failed, note = reported, - = does not apply; the evidence of every failure and note follows",
                    if skipped.is_empty() { "nothing".to_owned() } else { skipped.join("; ") }
                ),
                headers,
                widths,
                rows: matrix,
            };
            let figures = trainbench_app::Section {
                heading: "GPU acceptance figures".into(),
                text: "Steady-window throughput, MFU against the GPU's dense peak for the precision, energy per sample from NVML's energy counter, and the framework allocator's peak.".into(),
                headers: ["Run", "Configuration", "samples/s", "MFU", "J/sample", "alloc GiB"].map(String::from).to_vec(),
                widths: vec![26.0, 214.0, 60.0, 50.0, 60.0, 60.0],
                rows: details
                    .iter()
                    .map(|d| {
                        let f = figures_row(d);
                        let mut row = vec![f[0].clone(), config(d)];
                        row.extend(f[5..].iter().cloned());
                        row
                    })
                    .collect(),
            };
            let evidence: Vec<Vec<String>> = details
                .iter()
                .zip(&checks)
                .flat_map(|(d, c)| {
                    c.iter()
                        .filter(|ch| matches!(ch.verdict, Verdict::Fail | Verdict::Note))
                        .map(|ch| {
                            vec![
                                format!("#{}", d.row.id),
                                ch.key.clone(),
                                ch.verdict.symbol().to_owned(),
                                ch.evidence.clone(),
                            ]
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            let mut sections = vec![verdicts, figures];
            if !evidence.is_empty() {
                sections.push(trainbench_app::Section {
                    heading: "Failures and notes".into(),
                    text: "The evidence behind every check that failed or is a note; checks.json holds the evidence of every check.".into(),
                    headers: ["Run", "Check", "Verdict", "Evidence"].map(String::from).to_vec(),
                    widths: vec![26.0, 70.0, 40.0, 334.0],
                    rows: evidence,
                });
            }
            let selected = Selected {
                title: name.clone(),
                loaded,
                settings: settings.clone(),
            };
            let bytes = ws.pdf(&selected, None, &sections)?;
            write_file(&pdf_path, &bytes)?;
            format!("report: {}", pdf_path.display())
        }
        Err(e) => format!("no PDF report: {e}"),
    };

    if a.json {
        println!("{checks_json}");
    } else {
        println!(
            "GPU acceptance suite on {}",
            gpus.iter()
                .map(|g| format!("gpu:{} {}", g.index, g.name))
                .collect::<Vec<_>>()
                .join(", ")
        );
        println!();
        print_table(
            &FIGURE_HEADERS,
            &details.iter().map(figures_row).collect::<Vec<_>>(),
        );
        println!();
        let mut headers = vec!["run"];
        headers.extend(CHECKS.iter().map(|c| c.1));
        print_table(
            &headers,
            &details
                .iter()
                .zip(&checks)
                .map(|(d, c)| verdict_row(d, c))
                .collect::<Vec<_>>(),
        );
        println!();
        for (d, c) in details.iter().zip(&checks) {
            for ch in c
                .iter()
                .filter(|ch| matches!(ch.verdict, Verdict::Fail | Verdict::Note))
            {
                println!(
                    "run #{} {}: {} — {}",
                    d.row.id,
                    ch.key,
                    ch.verdict.symbol(),
                    ch.evidence
                );
            }
        }
        for s in &skipped {
            println!("{s}");
        }
        println!();
        println!("{pdf_note}");
        println!(
            "session file: {} (bring it home with `trainbench import`)",
            session_path.display()
        );
        println!("checks: {}", out_dir.join("checks.json").display());
        println!(
            "gpu-check: {}",
            if all_passed {
                "every check passed"
            } else {
                "FAILED (see above)"
            }
        );
    }
    Ok(if all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

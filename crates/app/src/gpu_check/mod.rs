//! The GPU acceptance suite, once for both shells: on the GPUs present,
//! every installed framework × precision × (1 and, with ≥ 2 GPUs, N devices)
//! × ViT-B/16, ResNet-50 (224 px, synthetic) and BERT-base (seq 128), plus one
//! `torch.compile` and one TensorFlow XLA run ([`prepare`]); the shell queues
//! and runs the plan with its own progress, then [`finish`] checks each stored
//! run (`core::acceptance`) and writes the session file, `checks.json` and the
//! PDF report into the output folder ([`report`] holds the rows and sections).

use std::path::PathBuf;

use serde_json::{json, Value};
use trainbench_core::acceptance::{check_run, passed, Check};
use trainbench_core::compare::Grouping;
use trainbench_core::record::RunDetail;
use trainbench_core::session::{ChartKind, SessionSettings};
use trainbench_core::Framework;
use trainbench_probe::GpuInfo;

use crate::error::{AppError, AppResult};
use crate::host::Host;
use crate::reports::{write_file, Selected};
use crate::sweep::{plan_sweep, SweepPlan, SweepRequest};
use crate::workspace::{SessionRef, Workspace};
use crate::{frameworks, hostname, now_unix_ms, utc_text, VERSION};

pub mod report;

pub use report::{evidence_rows, figures_row, verdict_row, FIGURE_HEADERS};

/// What a person asks of the suite.
#[derive(Debug, Clone)]
pub struct GpuCheckRequest {
    /// Frameworks (`FRAMEWORK@ENVIRONMENT` for a registered one); empty:
    /// tch when its worker is present, and every framework with a ready
    /// environment.
    pub frameworks: Vec<String>,
    pub precisions: Vec<String>,
    pub models: Vec<String>,
    /// Optimizer steps per run (windows of 5 steps; the first is warm-up).
    pub steps: i64,
    /// Seconds a worker may stay silent before its run is stopped.
    pub timeout_s: f64,
    /// The output folder; `None`: gpu-check-YYYYMMDDHHMMSS here.
    pub out_dir: Option<PathBuf>,
}

impl Default for GpuCheckRequest {
    fn default() -> Self {
        GpuCheckRequest {
            frameworks: Vec::new(),
            precisions: ["fp32", "tf32", "amp-bf16", "amp-fp16"]
                .map(String::from)
                .to_vec(),
            models: ["vit_base_patch16_224", "resnet50", "bert_base_uncased"]
                .map(String::from)
                .to_vec(),
            steps: 80,
            timeout_s: 900.0,
            out_dir: None,
        }
    }
}

/// The suite planned on this machine's GPUs.
#[derive(Debug, Clone)]
pub struct GpuCheckPlan {
    pub gpus: Vec<GpuInfo>,
    pub frameworks: Vec<String>,
    pub plan: SweepPlan,
    /// What was left out, with why.
    pub skipped: Vec<String>,
    /// Where the session file, checks.json and report.pdf go (made).
    pub out_dir: PathBuf,
}

/// What [`prepare`] found: the plan, or why nothing can run.
#[derive(Debug, Clone)]
pub enum Prepared {
    /// No GPU: the reason (nothing was run; the CLI exits 3).
    NoGpu(String),
    Plan(Box<GpuCheckPlan>),
}

/// What the suite measured and where it wrote it.
#[derive(Debug, Clone)]
pub struct GpuCheckOutcome {
    pub details: Vec<RunDetail>,
    /// Each run's checks, in the order of `details`.
    pub checks: Vec<Vec<Check>>,
    pub all_passed: bool,
    pub session_name: String,
    pub session_path: PathBuf,
    pub checks_path: PathBuf,
    /// checks.json's content.
    pub checks_json: Value,
    /// The PDF's path, or why there is none.
    pub pdf: Result<PathBuf, String>,
}

/// Batch size per device for each model of the suite (fits an 80 GB GPU at fp32).
fn batch_for(model: &str) -> i64 {
    match model {
        m if m.starts_with("resnet50") => 128,
        m if m.starts_with("vit_large") || m.starts_with("bert_large") => 32,
        _ => 64,
    }
}

/// Checks the request, finds the GPUs and plans the suite; makes the output folder.
pub fn prepare(req: &GpuCheckRequest, host: &Host) -> AppResult<Prepared> {
    let gpus = host.gpus();
    if gpus.is_empty() {
        let why = host
            .gpu_unavailable()
            .unwrap_or("no NVIDIA GPU: NVML lists no device");
        return Ok(Prepared::NoGpu(why.to_owned()));
    }
    if req.steps < 10 {
        return Err(AppError::bad_input(
            "steps",
            req.steps,
            "at least 10 (two timed windows after warm-up)",
        ));
    }
    if !(req.timeout_s.is_finite() && req.timeout_s > 0.0) {
        return Err(AppError::bad_input("timeout", req.timeout_s, "seconds > 0"));
    }
    let frameworks = if req.frameworks.is_empty() {
        frameworks::installed_frameworks()
    } else {
        req.frameworks.clone()
    };
    if frameworks.is_empty() {
        return Err(AppError::bad(
            "framework",
            "framework = (none found) is not allowed: no framework is installed here; register one with `trainbench env register NAME --framework F --python PATH`",
        ));
    }
    let out_dir = req.out_dir.clone().unwrap_or_else(|| {
        let stamp = utc_text(now_unix_ms())
            .replace([' ', ':', '-'], "")
            .replace("UTC", "");
        PathBuf::from(format!("gpu-check-{stamp}"))
    });
    std::fs::create_dir_all(&out_dir).map_err(|e| {
        AppError::bad(
            "out",
            format!("out = {} is not allowed: {e}", out_dir.display()),
        )
    })?;
    let (plan, skipped) = plan(req, &frameworks, host);
    if plan.configs.is_empty() {
        return Err(AppError::bad(
            "framework",
            format!(
                "framework = {} is not allowed: no configuration of the suite can run ({})",
                frameworks.join(","),
                skipped.join("; ")
            ),
        ));
    }
    Ok(Prepared::Plan(Box::new(GpuCheckPlan {
        gpus,
        frameworks,
        plan,
        skipped,
        out_dir,
    })))
}

/// The suite's configurations (one plan) and what was left out, with why.
fn plan(req: &GpuCheckRequest, frameworks: &[String], host: &Host) -> (SweepPlan, Vec<String>) {
    let machine = host.machine();
    let gpus = machine.gpus;
    let mut configs = Vec::new();
    let mut skipped = Vec::new();
    let base = SweepRequest {
        precision: req.precisions.clone(),
        device: Some("cuda:0".into()),
        steps: Some(req.steps),
        window_steps: Some(5),
        ..SweepRequest::default()
    };
    let mut add = |r: SweepRequest, skipped: &mut Vec<String>| {
        let p = plan_sweep(&r, machine, true);
        configs.extend(p.configs);
        skipped.extend(p.rejected.into_iter().map(|r| match &r.label {
            Some(label) => format!("{label}: not run: {}", r.message),
            None => format!("not run: {}", r.message),
        }));
    };
    for fw in frameworks {
        let kind = fw.split('@').next().unwrap_or(fw);
        let mut devices = vec![1];
        if gpus >= 2 && kind != Framework::Tch.as_str() {
            devices.push(i64::from(gpus));
        }
        for model in &req.models {
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
        match frameworks.iter().find(|f| f.split('@').next() == Some(kind)) {
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
    let plan = SweepPlan {
        configs,
        rejected: Vec::new(),
        repeats: 1,
        memory_limit_bytes: None,
        epoch_samples: None,
        notes: Vec::new(),
        to_install: Vec::new(),
        model_files: Default::default(),
    };
    (plan, skipped)
}

/// After the plan's runs (`run_ids`, in order) ended: checks every stored run
/// and writes the session file, checks.json and the PDF into the output folder.
pub fn finish(ws: &mut Workspace, p: &GpuCheckPlan, run_ids: &[i64]) -> AppResult<GpuCheckOutcome> {
    let details: Vec<RunDetail> = run_ids
        .iter()
        .map(|id| ws.run_detail(*id))
        .collect::<Result<_, _>>()?;
    let checks: Vec<Vec<Check>> = details.iter().map(check_run).collect();
    let all_passed = checks.iter().all(|c| passed(c));

    // The session: the runs, comparable and portable (`trainbench import`).
    let session_name = format!(
        "gpu-check {} {} (runs #{}–#{})",
        hostname(),
        utc_text(now_unix_ms()),
        run_ids.first().copied().unwrap_or(0),
        run_ids.last().copied().unwrap_or(0)
    );
    let settings = SessionSettings {
        grouping: Grouping::Runs,
        charts: ChartKind::ALL.to_vec(),
        hidden_series: Vec::new(),
    };
    let session = ws.save_session(&session_name, run_ids, run_ids.first().copied(), &settings)?;
    let session_path = p.out_dir.join("gpu-check.trainbench-session.json");
    ws.export_session(
        &SessionRef::Id(session.id),
        &session_path,
        Some(&format!("TrainBench Studio {VERSION} (gpu-check)")),
    )?;

    let checks_json = json!({
        "passed": all_passed,
        "gpus": p.gpus,
        "frameworks": p.frameworks,
        "skipped": p.skipped,
        "session": session_name,
        "runs": details.iter().zip(&checks).map(|(d, c)| json!({
            "id": d.row.id, "framework": d.row.framework, "model": d.row.model,
            "precision": d.row.precision, "devices": d.row.devices, "status": d.row.status,
            "summary": d.row.summary, "loss_scale": d.loss_scale, "checks": c,
        })).collect::<Vec<_>>(),
    });
    let checks_path = p.out_dir.join("checks.json");
    write_file(&checks_path, checks_json.to_string().as_bytes())?;

    // The PDF: the suite's comparison with the verdicts first.
    let pdf_path = p.out_dir.join("report.pdf");
    let pdf = match ws.comparison(run_ids, Grouping::Runs, None) {
        Ok(loaded) => {
            let sections = report::sections(&p.gpus, &p.skipped, &details, &checks, all_passed);
            let selected = Selected {
                title: session_name.clone(),
                loaded,
                settings,
            };
            let bytes = ws.pdf(&selected, None, &sections)?;
            write_file(&pdf_path, &bytes)?;
            Ok(pdf_path)
        }
        Err(e) => Err(e.to_string()),
    };
    Ok(GpuCheckOutcome {
        details,
        checks,
        all_passed,
        session_name,
        session_path,
        checks_path,
        checks_json,
        pdf,
    })
}

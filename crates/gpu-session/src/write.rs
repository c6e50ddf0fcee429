//! A session's outputs, rewritten after every item so that a session cut
//! short still leaves them: `results.json` (the plan, the machine, every
//! item's result), `results.md` (the same as a table), `session.log`, and
//! once two runs are stored the session file; at the end `checks.json`
//! (the GPU acceptance checks of every run) and `report.pdf`. Six files:
//! a lent machine gives back at most eight.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;
use trainbench_core::acceptance::{check_run, passed};
use trainbench_core::compare::Grouping;
use trainbench_core::models::{lookup, ModelOptions};
use trainbench_core::record::RunDetail;
use trainbench_core::session::{ChartKind, SessionSettings};
use trainbench_report::document::Section;

use super::items::{Item, Kind, What};
use super::result::{ItemResult, Status};
use super::Session;
use trainbench_app::error::AppResult;
use trainbench_app::gpu_check::report;
use trainbench_app::reports::{write_file, Selected};
use trainbench_app::workspace::{SessionRef, Workspace};
use trainbench_app::{hostname, GIT_REVISION, VERSION};

pub use super::files::{CHECKS_JSON, REPORT_PDF, RESULTS_JSON, RESULTS_MD, SESSION_FILE};

/// What the session wrote at its end.
#[derive(Debug, Clone, Default)]
pub struct Written {
    pub results_md: PathBuf,
    /// The session file, when two runs or more were stored.
    pub session: Option<PathBuf>,
    pub checks: Option<PathBuf>,
    /// The PDF, or why there is none.
    pub pdf: Option<Result<PathBuf, String>>,
    pub checks_passed: Option<bool>,
}

/// session.log: every line the session said, appended as it goes.
pub struct Log(Option<std::fs::File>);

impl Log {
    pub fn open(path: &Path) -> Log {
        Log(std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok())
    }

    pub fn line(&mut self, text: &str) {
        if let Some(f) = &mut self.0 {
            let _ = writeln!(f, "{text}");
        }
    }
}

/// An item's result in one line.
/// What an item's ratio divides (`studio ÷ peer`, `÷ vit-eager`).
fn ratio_of(r: &ItemResult) -> &str {
    r.ratio_of.as_deref().unwrap_or("studio ÷ peer")
}

/// An item's ratio with what it divides: `0.953 (÷ vit-eager)`.
fn ratio_cell(r: &ItemResult) -> String {
    cell(r.ratio.map(|x| format!("{x:.3} ({})", ratio_of(r))))
}

pub fn result_line(r: &ItemResult) -> String {
    let mut s = format!("{}: {}", r.id, r.status.as_str());
    if let Some(v) = r.samples_per_s {
        s += &format!(", {v:.1} samples/s");
    }
    if let Some(b) = r.batch {
        s += &format!(" at batch {b}");
    }
    if let Some(x) = r.ratio {
        s += &format!(", {} {x:.3}", ratio_of(r));
    }
    if r.status != Status::Skipped {
        s += &format!(" ({:.0} s)", r.seconds);
    }
    if let Some(why) = r.reason.as_ref().or(r.ratio_note.as_ref()) {
        s += &format!(": {why}");
    }
    s
}

/// Samples/s with its 95 % interval where there is one: `2023.1 (1874–2072)`.
pub fn rate_cell(rate: Option<f64>, ci95: Option<[f64; 2]>) -> String {
    cell(rate.map(|v| match ci95 {
        Some([lo, hi]) => format!("{v:.1} ({lo:.0}–{hi:.0})"),
        None => format!("{v:.1}"),
    }))
}

/// A value, or `—` when there is none.
fn cell(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".into())
}

/// results.md: one row per item of the plan, in its order (every cell
/// escaped by [`super::doc::cell`]).
pub fn markdown(s: &Session, results: &[ItemResult]) -> String {
    let mut md = format!(
        "# GPU session {}\n\nOn {}; budget {:.0} s; studio {VERSION} ({GIT_REVISION}).\n\n",
        s.started,
        if s.rehearse {
            "the CPU (a rehearsal with small models)".to_owned()
        } else {
            s.gpus
                .iter()
                .map(|g| g.name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        },
        s.budget_s,
    );
    md += "| item | what | status | batch | samples/s (95 % interval) | MFU | ratio | seconds | runs | projected (samples/s) | note |\n";
    md += "|---|---|---|---:|---:|---:|---:|---:|---|---|---|\n";
    for item in &s.items {
        let r = results.iter().find(|r| r.id == item.id);
        let row = match r {
            Some(r) => [
                r.id.clone(),
                r.title.clone(),
                r.status.as_str().into(),
                cell(r.batch.map(|b| b.to_string())),
                rate_cell(r.samples_per_s, r.samples_per_s_ci95),
                cell(r.mfu.map(|m| format!("{:.1} %", 100.0 * m))),
                ratio_cell(r),
                if r.status == Status::Skipped {
                    "—".into()
                } else {
                    format!("{:.0}", r.seconds)
                },
                cell((!r.run_ids.is_empty()).then(|| {
                    r.run_ids
                        .iter()
                        .map(|i| format!("#{i}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                })),
                cell((!r.projected.is_empty()).then(|| {
                    r.projected
                        .iter()
                        .map(|p| format!("{}: {:.1} – {:.1}", p.to, p.low, p.high))
                        .collect::<Vec<_>>()
                        .join("; ")
                })),
                cell(r.reason.clone().or(r.ratio_note.clone())),
            ],
            None => [
                item.id.clone(),
                item.title.clone(),
                "not reached".into(),
                "—".into(),
                "—".into(),
                "—".into(),
                "—".into(),
                "—".into(),
                "—".into(),
                "—".into(),
                "—".into(),
            ],
        };
        md += &super::doc::row(&row);
    }
    md
}

/// Rewrites results.json and results.md, and the session file once two
/// runs are stored (saved under one name, updated as runs are added).
/// `Ok(Some(why))`: the results are written but the session file is not.
pub fn progress(
    ws: &mut Workspace,
    s: &Session,
    results: &[ItemResult],
) -> AppResult<Option<String>> {
    let doc = json!({
        "format": "trainbench-gpu-session",
        "studio_version": VERSION,
        "studio_git_revision": GIT_REVISION,
        "host": hostname(),
        "session": s,
        "results": results,
    });
    let pretty = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    write_file(&s.out_dir.join(RESULTS_JSON), &pretty)?;
    write_file(&s.out_dir.join(RESULTS_MD), markdown(s, results).as_bytes())?;
    let ids = run_ids(results);
    if ids.len() < 2 {
        return Ok(None);
    }
    Ok(session_file(ws, s, &ids).err().map(|e| e.to_string()))
}

/// The session (saved, or updated with the runs since) and its file.
fn session_file(ws: &mut Workspace, s: &Session, ids: &[i64]) -> AppResult<()> {
    let name = session_name(s);
    let settings = settings();
    match ws.session(&SessionRef::Name(name.clone())) {
        Ok(saved) => {
            ws.update_session(saved.id, ids, ids.first().copied(), &settings)?;
        }
        Err(_) => {
            ws.save_session(&name, ids, ids.first().copied(), &settings)?;
        }
    }
    ws.export_session(
        &SessionRef::Name(name),
        &s.out_dir.join(SESSION_FILE),
        Some(&format!("TrainBench Studio {VERSION} (gpu-session)")),
    )?;
    Ok(())
}

fn session_name(s: &Session) -> String {
    format!("gpu-session {} {}", hostname(), s.started)
}

fn settings() -> SessionSettings {
    SessionSettings {
        grouping: Grouping::Runs,
        charts: ChartKind::ALL.to_vec(),
        hidden_series: Vec::new(),
    }
}

fn run_ids(results: &[ItemResult]) -> Vec<i64> {
    results
        .iter()
        .flat_map(|r| r.run_ids.iter().copied())
        .collect()
}

/// The end: the last progress, then checks.json and report.pdf over every
/// stored run (a session with fewer than two runs has no comparison).
pub fn finish(ws: &mut Workspace, s: &Session, results: &[ItemResult]) -> AppResult<Written> {
    let session_problem = progress(ws, s, results)?;
    let mut w = Written {
        results_md: s.out_dir.join(RESULTS_MD),
        ..Written::default()
    };
    let ids = run_ids(results);
    if ids.is_empty() {
        return Ok(w);
    }
    let details: Vec<RunDetail> = ids
        .iter()
        .filter_map(|id| ws.run_detail(*id).ok())
        .collect();
    let checks: Vec<_> = details.iter().map(check_run).collect();
    let all = checks.iter().all(|c| passed(c));
    let checks_json = json!({
        "passed": all,
        "rehearsal": s.rehearse,
        "runs": details.iter().zip(&checks).map(|(d, c)| json!({
            "id": d.row.id, "framework": d.row.framework, "model": d.row.model,
            "precision": d.row.precision, "batch_size": d.row.batch_size,
            "status": d.row.status, "checks": c,
        })).collect::<Vec<_>>(),
    });
    let path = s.out_dir.join(CHECKS_JSON);
    write_file(&path, checks_json.to_string().as_bytes())?;
    w.checks = Some(path);
    w.checks_passed = Some(all);
    if ids.len() < 2 {
        w.pdf = Some(Err("one run: a report compares two or more".into()));
        return Ok(w);
    }
    if let Some(why) = session_problem {
        w.pdf = Some(Err(format!("no session file: {why}")));
        return Ok(w);
    }
    w.session = Some(s.out_dir.join(SESSION_FILE));
    let skipped: Vec<String> = results
        .iter()
        .filter(|r| r.status == Status::Skipped)
        .map(|r| format!("{} ({})", r.id, r.reason.as_deref().unwrap_or("")))
        .collect();
    let mut sections = vec![items_section(s, results)];
    sections.extend(report::sections(&s.gpus, &skipped, &details, &checks, all));
    let pdf = match ws.comparison(&ids, Grouping::Runs, None) {
        Ok(loaded) => {
            let selected = Selected {
                title: session_name(s),
                loaded,
                settings: settings(),
            };
            let path = s.out_dir.join(REPORT_PDF);
            ws.pdf(&selected, None, &sections)
                .and_then(|bytes| write_file(&path, &bytes))
                .map(|_| path)
                .map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    };
    w.pdf = Some(pdf);
    Ok(w)
}

/// The PDF's first section: the plan's items with their results and ratios.
fn items_section(s: &Session, results: &[ItemResult]) -> Section {
    let rows = results
        .iter()
        .map(|r| {
            vec![
                r.id.clone(),
                r.status.as_str().into(),
                cell(r.batch.map(|b| b.to_string())),
                rate_cell(r.samples_per_s, r.samples_per_s_ci95),
                ratio_cell(r),
                cell(r.reason.clone().or(r.ratio_note.clone())),
            ]
        })
        .collect();
    Section {
        heading: "GPU session: the plan's items".into(),
        text: format!(
            "In order of value within a budget of {:.0} s. A peer is a plain loop of another library (timm, Hugging Face) at the studio run's model, batch and precision on the same device; studio ÷ peer compares their steady throughputs. A libtorch worker item (Rust, through tch) is divided by the PyTorch eager item it is held against (÷ vit-eager): the same model, batch and precision in C++ libtorch without Python.",
            s.budget_s
        ),
        headers: ["Item", "Status", "Batch", "Samples/s", "Ratio", "Note"]
            .map(String::from)
            .to_vec(),
        widths: vec![80.0, 40.0, 35.0, 50.0, 50.0, 245.0],
        rows,
    }
}

/// The worker command of the session's `kind` environment: its interpreter
/// and the studio's Python package folder (which holds `trainbench_peers`).
fn python_of(s: &Session, kind: Kind) -> Result<trainbench_app::WorkerCommand, String> {
    let fw = s
        .framework(kind)
        .ok_or_else(|| format!("{} is not installed here", kind.as_str()))?;
    trainbench_app::sweep::resolve_framework(fw)
        .map(|(_, _, worker)| worker)
        .map_err(|r| r.message)
}

/// The peer's command line: the PyTorch environment's interpreter, the
/// studio's Python package folder (which holds `trainbench_peers`).
pub fn peer_command(
    s: &Session,
    item: &Item,
    batch: i64,
) -> Result<tokio::process::Command, String> {
    let What::Peer {
        library,
        model,
        precision,
        image_size,
        seq_len,
        activation,
        ..
    } = &item.what
    else {
        return Err("not a peer item".into());
    };
    // Flax runs in JAX's environment, timm and Hugging Face in PyTorch's.
    let worker = python_of(
        s,
        if library == "flax" {
            Kind::Jax
        } else {
            Kind::Pytorch
        },
    )?;
    let classes = lookup(model)
        .and_then(|e| {
            e.config(&ModelOptions {
                image_size: *image_size,
                ..ModelOptions::default()
            })
            .ok()
        })
        .map(|c| c.num_classes())
        .unwrap_or(1000);
    let l = s.lengths.of(item);
    let mut cmd = tokio::process::Command::new(&worker.program);
    cmd.envs(worker.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    cmd.args([
        "-m",
        "trainbench_peers",
        "--library",
        library,
        "--model",
        model,
    ]);
    cmd.args(["--precision", precision, "--device", &s.device]);
    for (flag, v) in [
        ("--batch", Some(batch)),
        ("--num-classes", Some(classes)),
        ("--image-size", *image_size),
        ("--seq-len", *seq_len),
        ("--warmup", Some(l.peer_warmup)),
        ("--steps", Some(l.peer_steps)),
        ("--window", Some(l.window_steps)),
        ("--threads", l.threads),
    ] {
        if let Some(v) = v {
            cmd.args([flag, &v.to_string()]);
        }
    }
    if let Some(a) = activation {
        cmd.args(["--activation", a]);
    }
    if let Some(t) = l.threads {
        cmd.env("OMP_NUM_THREADS", t.to_string());
    }
    Ok(cmd)
}

/// Generated JPEGs for the loader item (`python -m trainbench_peers.images`).
pub async fn image_folder(s: &Session, dir: &Path) -> Result<(), String> {
    let worker = python_of(s, Kind::Pytorch)?;
    let (per_class, px, _) = s.lengths.folder;
    let out = tokio::process::Command::new(&worker.program)
        .envs(worker.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .args(["-m", "trainbench_peers.images"])
        .arg(dir)
        .args([
            "--per-class",
            &per_class.to_string(),
            "--size",
            &px.to_string(),
        ])
        .output()
        .await
        .map_err(|e| format!("cannot write the image folder: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "cannot write the image folder: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

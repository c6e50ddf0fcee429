//! The commands the UI calls. Each is a thin adapter: it checks what the UI
//! sent, calls the store, runner or report crate, and returns plain data or an
//! [`ApiError`]. No benchmark logic lives here.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tauri::ipc::Channel;
use tauri::State;
use trainbench_core::compare::{Comparison, Grouping};
use trainbench_core::models::CATALOG;
use trainbench_core::record::{RunDetail, RunRow};
use trainbench_core::reference::PriceRow;
use trainbench_core::session::{ChartKind, SavedSession, SessionFile, SessionSettings};
use trainbench_core::spec::{Compile, Machine, Precision};
use trainbench_core::summary::RunStatus;
use trainbench_core::telemetry::TelemetrySample;
use trainbench_report::{charts, csv, pdf};
use trainbench_runner::envs::{self, FrameworkEnv};
use trainbench_runner::sweep::{check_price, plan_sweep, queue_sweep, Rejected, SweepRequest};
use trainbench_runner::WorkerCommand;
use trainbench_store::now_unix_ms;

use crate::error::{ApiError, ApiResult};
use crate::queue::{Job, LiveRun, LiveUpdate, QueueEntry};
use crate::settings::{Settings, Theme};
use crate::Studio;

const VERSION: &str = env!("CARGO_PKG_VERSION");

// ---------------------------------------------------------------- app info

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct GpuDto {
    pub index: u32,
    pub name: String,
    pub memory_total_bytes: Option<u64>,
}

/// What this machine offers, as the probe sees it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct MachineDto {
    pub hostname: String,
    pub cpu_model: Option<String>,
    pub cpu_cores: u32,
    pub memory_total_bytes: Option<u64>,
    pub gpus: Vec<GpuDto>,
    /// Why there are no GPUs ("no NVIDIA GPU: NVML is not available …").
    pub gpu_unavailable: Option<String>,
}

/// A model of the catalogue with its analytical size.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ModelDto {
    pub name: String,
    pub family: String,
    pub summary: String,
    pub cpu_friendly: bool,
    pub param_count: u64,
    /// Training FLOPs per sample (forward + backward), at the default input size.
    pub flops_per_sample: f64,
}

/// A framework the wizard offers: installed (with its version) or not.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct FrameworkChoice {
    /// What goes into the sweep request: `tch`, `pytorch`, `pytorch@NAME` …
    pub key: String,
    pub framework: String,
    pub title: String,
    pub installed: bool,
    pub version: Option<String>,
    pub environment: Option<String>,
    /// Why it is not usable, when it is not.
    pub problem: Option<String>,
    /// Whether the studio can install it (`install_framework`).
    pub installable: bool,
}

/// Everything the wizard needs to offer choices.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AppInfo {
    pub version: String,
    pub database: String,
    pub machine: MachineDto,
    pub models: Vec<ModelDto>,
    pub frameworks: Vec<FrameworkChoice>,
    pub precisions: Vec<String>,
    pub compile_modes: Vec<String>,
    pub data_sources: Vec<String>,
    pub prices: Vec<PriceRow>,
    pub charts: Vec<ChartKind>,
    pub settings: Settings,
}

fn framework_title(f: &str) -> &'static str {
    match f {
        "tch" => "PyTorch (libtorch from Rust, tch)",
        "pytorch" => "PyTorch (Python)",
        "tensorflow" => "TensorFlow",
        "jax" => "JAX (Flax, Optax)",
        _ => "framework",
    }
}

fn frameworks() -> Vec<FrameworkChoice> {
    let listed = envs::list().unwrap_or_default();
    let tch = WorkerCommand::tch();
    let torch = listed
        .iter()
        .find(|e| e.builtin && e.framework == "pytorch");
    let tch_ok = tch.program.is_file();
    let mut out = vec![FrameworkChoice {
        key: "tch".into(),
        framework: "tch".into(),
        title: framework_title("tch").into(),
        installed: tch_ok,
        version: torch.and_then(|e| e.version.clone()),
        environment: None,
        problem: (!tch_ok).then(|| {
            format!(
                "the libtorch worker {} is not built (make build)",
                tch.program.display()
            )
        }),
        installable: false,
    }];
    for f in ["pytorch", "tensorflow", "jax"] {
        let builtin = listed.iter().find(|e| e.builtin && e.framework == f);
        out.push(FrameworkChoice {
            key: f.into(),
            framework: f.into(),
            title: framework_title(f).into(),
            installed: builtin.is_some_and(|e| e.ready),
            version: builtin.and_then(|e| e.version.clone()),
            environment: builtin.map(|e| e.name.clone()),
            problem: match builtin {
                Some(e) if e.ready => None,
                _ => Some("not installed: the studio can install it from PyPI".into()),
            },
            installable: true,
        });
        for e in listed.iter().filter(|e| !e.builtin && e.framework == f) {
            out.push(FrameworkChoice {
                key: format!("{f}@{}", e.name),
                framework: f.into(),
                title: format!("{} ({})", framework_title(f), e.name),
                installed: e.ready,
                version: e.version.clone(),
                environment: Some(e.name.clone()),
                problem: (!e.ready).then(|| format!("{} does not run", e.python.display())),
                installable: false,
            });
        }
    }
    out
}

fn machine(studio: &Studio) -> MachineDto {
    let prov = trainbench_probe::provenance(&studio.gpu);
    MachineDto {
        hostname: trainbench_store::hostname(),
        cpu_model: prov["cpu_model"].as_str().map(str::to_owned),
        cpu_cores: studio.cpu_cores(),
        memory_total_bytes: prov["memory_total_bytes"].as_u64(),
        gpus: studio
            .gpu
            .gpus()
            .into_iter()
            .map(|g| GpuDto {
                index: g.index,
                name: g.name,
                memory_total_bytes: g.memory_total_bytes,
            })
            .collect(),
        gpu_unavailable: studio.gpu.unavailable.clone(),
    }
}

#[tauri::command]
#[specta::specta]
pub fn app_info(studio: State<'_, Studio>) -> ApiResult<AppInfo> {
    let models = CATALOG
        .iter()
        .map(|m| {
            let cfg = m.default_config();
            ModelDto {
                name: m.name.into(),
                family: format!("{:?}", m.family).to_lowercase(),
                summary: m.summary.into(),
                cpu_friendly: m.cpu_friendly,
                param_count: cfg.param_count(),
                flops_per_sample: cfg.flops_per_sample(),
            }
        })
        .collect();
    let prices = studio.with_store(|s| s.prices())?;
    Ok(AppInfo {
        version: VERSION.into(),
        database: studio.db_path().display().to_string(),
        machine: machine(&studio),
        models,
        frameworks: frameworks(),
        precisions: Precision::ALL.iter().map(|p| p.as_str().into()).collect(),
        compile_modes: Compile::ALL.iter().map(|c| c.as_str().into()).collect(),
        data_sources: vec!["synthetic".into(), "mnist".into()],
        prices: prices.into_iter().map(|(p, _)| p).collect(),
        charts: ChartKind::ALL.to_vec(),
        settings: studio.settings(),
    })
}

// ------------------------------------------------------------------ sweeps

/// The wizard's verdict on a sweep before anything runs.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct PlanDto {
    /// Configurations that can run, as a person reads them.
    pub configurations: Vec<String>,
    pub repeats: u32,
    /// configurations × repeats.
    pub runs: u32,
    /// Combinations that cannot run, each with the field at fault and why.
    pub rejected: Vec<Rejected>,
}

fn plan_for(
    studio: &Studio,
    request: &SweepRequest,
) -> ApiResult<(trainbench_runner::sweep::SweepPlan, Vec<Rejected>)> {
    let gpus = u32::try_from(studio.gpu.gpus().len()).unwrap_or(0);
    let plan = plan_sweep(
        request,
        Machine {
            gpus,
            cpu_cores: studio.cpu_cores(),
        },
        gpus > 0,
    );
    let mut rejected = plan.rejected.clone();
    if let Some(r) = studio.with_store(|s| check_price(s, request.price.as_deref()))? {
        rejected.insert(0, r);
    }
    Ok((plan, rejected))
}

/// Checks a sweep with the same rules `trainbench run` applies.
#[tauri::command]
#[specta::specta]
pub fn plan(studio: State<'_, Studio>, request: SweepRequest) -> ApiResult<PlanDto> {
    let (plan, rejected) = plan_for(&studio, &request)?;
    Ok(PlanDto {
        configurations: plan.configs.iter().map(|c| c.label.clone()).collect(),
        repeats: plan.repeats,
        runs: u32::try_from(plan.runs()).unwrap_or(u32::MAX),
        rejected,
    })
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct Started {
    pub sweep_id: i64,
    /// In the order they will run (repeats interleaved).
    pub run_ids: Vec<i64>,
}

/// Stores the sweep's runs as queued and hands them to the queue. Refuses the
/// whole sweep (nothing stored) when a combination cannot run, unless
/// `skip_rejected`: then only the combinations that can run are queued. A
/// setting every combination shares (`label` "all") always refuses.
#[tauri::command]
#[specta::specta]
pub fn start_sweep(
    studio: State<'_, Studio>,
    request: SweepRequest,
    skip_rejected: bool,
) -> ApiResult<Started> {
    let (plan, rejected) = plan_for(&studio, &request)?;
    if let Some(r) = rejected
        .into_iter()
        .find(|r| !skip_rejected || r.label == "all")
    {
        return Err(r.into());
    }
    if plan.configs.is_empty() {
        return Err(ApiError::bad_input(
            "model",
            "(none)",
            "at least one configuration",
        ));
    }
    let command = format!(
        "desktop studio {VERSION}: {}",
        serde_json::to_string(&request).unwrap_or_default()
    );
    let (sweep_id, queued) =
        studio.with_store(|s| queue_sweep(s, &plan, request.price.as_deref(), &command))?;
    let db = studio.db_path();
    let jobs = queued
        .iter()
        .map(|q| Job {
            run_id: q.id,
            spec_json: q.spec_json.clone(),
            label: q.label.clone(),
            worker: plan.configs[q.config].worker.clone(),
            db: db.clone(),
        })
        .collect();
    studio.queue.push(jobs).map_err(ApiError::internal)?;
    Ok(Started {
        sweep_id,
        run_ids: queued.iter().map(|q| q.id).collect(),
    })
}

/// Streams a run's progress to `on_progress` (throttled); returns what there
/// is so far, or `null` when the run is not in this session's queue.
#[tauri::command]
#[specta::specta]
pub fn watch_run(
    studio: State<'_, Studio>,
    run_id: i64,
    on_progress: Channel<LiveUpdate>,
) -> Option<LiveRun> {
    studio.queue.watch(run_id, on_progress)
}

#[tauri::command]
#[specta::specta]
pub fn queue_entries(studio: State<'_, Studio>) -> Vec<QueueEntry> {
    studio.queue.entries()
}

/// Cancels a queued or running run.
#[tauri::command]
#[specta::specta]
pub fn cancel_run(studio: State<'_, Studio>, run_id: i64) -> ApiResult<()> {
    if studio.queue.cancel(run_id) {
        Ok(())
    } else {
        Err(ApiError::new(
            "not_found",
            format!("run {run_id} is not queued or running in this studio"),
        ))
    }
}

/// Runs queued or running (the window asks before closing when there are any).
#[tauri::command]
#[specta::specta]
pub fn unfinished_runs(studio: State<'_, Studio>) -> u32 {
    u32::try_from(studio.queue.unfinished()).unwrap_or(u32::MAX)
}

/// Cancels every unfinished run and waits (up to 30 s) until each is stored
/// as cancelled; the UI then closes the window.
#[tauri::command]
#[specta::specta]
pub async fn quit(studio: State<'_, Studio>) -> ApiResult<()> {
    studio.queue.cancel_all();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while studio.queue.unfinished() > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Ok(())
}

// -------------------------------------------------------------------- runs

/// A run as the runs table lists it: configuration and headline numbers.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct RunListItem {
    pub id: i64,
    pub status: RunStatus,
    pub status_reason: Option<String>,
    pub label: String,
    pub framework: String,
    pub model: String,
    pub precision: String,
    pub devices: u32,
    pub batch_size: u64,
    pub data: String,
    pub created_unix_ms: i64,
    pub duration_s: Option<f64>,
    pub throughput: Option<f64>,
    pub throughput_low: Option<f64>,
    pub throughput_high: Option<f64>,
    pub peak_memory_bytes: Option<u64>,
    pub time_to_accuracy_s: Option<f64>,
    /// The target the run trained towards; `None`: no target was set.
    pub target_accuracy: Option<f64>,
    pub target_reached: Option<bool>,
    pub cost_per_epoch_usd: Option<f64>,
    /// The price offering chosen; `None`: no cost is computed.
    pub price_offering: Option<String>,
    /// The host an imported run was measured on.
    pub imported_from: Option<String>,
}

pub fn list_item(r: &RunRow) -> RunListItem {
    let s = r.summary.as_ref();
    RunListItem {
        id: r.id,
        status: r.status,
        status_reason: r.status_reason.clone(),
        label: trainbench_core::compare::config_label(r),
        framework: r.framework.clone(),
        model: r.model.clone(),
        precision: r.precision.clone(),
        devices: r.devices,
        batch_size: r.batch_size,
        data: r.data.clone(),
        created_unix_ms: r.created_unix_ms,
        duration_s: match (r.started_unix_ms, r.ended_unix_ms) {
            (Some(a), Some(b)) if b >= a => Some((b - a) as f64 / 1000.0),
            _ => None,
        },
        throughput: s.and_then(|s| s.throughput_samples_per_s),
        throughput_low: s.and_then(|s| s.throughput_ci95).map(|c| c.low),
        throughput_high: s.and_then(|s| s.throughput_ci95).map(|c| c.high),
        peak_memory_bytes: s.and_then(|s| s.peak_memory_bytes),
        time_to_accuracy_s: s.and_then(|s| s.time_to_accuracy_s),
        target_accuracy: s.and_then(|s| s.target_accuracy),
        target_reached: s.and_then(|s| s.target_reached),
        cost_per_epoch_usd: s.and_then(|s| s.cost_per_epoch_usd),
        price_offering: r.price_offering.clone(),
        imported_from: r.origin.as_ref().map(|o| o.hostname.clone()),
    }
}

/// Every stored run, newest first.
#[tauri::command]
#[specta::specta]
pub fn list_runs(studio: State<'_, Studio>) -> ApiResult<Vec<RunListItem>> {
    let rows = studio.with_store(|s| s.list_runs())?;
    let mut items: Vec<RunListItem> = rows.iter().map(list_item).collect();
    items.sort_by_key(|r| std::cmp::Reverse(r.id));
    Ok(items)
}

/// One run in full, with its telemetry thinned to at most 2,000 samples per source.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct RunView {
    pub detail: RunDetail,
    pub label: String,
    pub telemetry: Vec<TelemetrySample>,
    pub telemetry_thinned: bool,
}

#[tauri::command]
#[specta::specta]
pub fn run_detail(studio: State<'_, Studio>, run_id: i64) -> ApiResult<RunView> {
    let (detail, telemetry) =
        studio.with_store(|s| Ok((s.run_detail(run_id)?, s.telemetry(run_id)?)))?;
    let (telemetry, thinned) = thin(telemetry, 2000);
    Ok(RunView {
        label: trainbench_core::compare::config_label(&detail.row),
        detail,
        telemetry,
        telemetry_thinned: thinned,
    })
}

/// Keeps every k-th sample of each source so no source has more than `max`.
fn thin(samples: Vec<TelemetrySample>, max: usize) -> (Vec<TelemetrySample>, bool) {
    let mut counts = std::collections::HashMap::<String, usize>::new();
    for s in &samples {
        *counts.entry(s.source.clone()).or_default() += 1;
    }
    let step: std::collections::HashMap<String, usize> = counts
        .into_iter()
        .map(|(k, n)| (k, n.div_ceil(max).max(1)))
        .collect();
    if step.values().all(|s| *s == 1) {
        return (samples, false);
    }
    let mut seen = std::collections::HashMap::<String, usize>::new();
    let kept = samples
        .into_iter()
        .filter(|s| {
            let i = seen.entry(s.source.clone()).or_default();
            let keep = (*i).is_multiple_of(step[&s.source]);
            *i += 1;
            keep
        })
        .collect();
    (kept, true)
}

/// Deletes runs (never queued or running ones); returns how many went.
#[tauri::command]
#[specta::specta]
pub fn delete_runs(studio: State<'_, Studio>, run_ids: Vec<i64>) -> ApiResult<u32> {
    let n = studio.with_store_mut(|s| s.delete_runs(&run_ids))?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

// ----------------------------------------------------------------- compare

/// A curve of one run over wall time (seconds since training started).
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct CurveDto {
    /// Index into the comparison's entries.
    pub entry: u32,
    pub run_id: i64,
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ChartMeta {
    pub kind: ChartKind,
    pub title: String,
    pub y_unit: String,
    pub x_unit: String,
}

/// A comparison ready to draw: the numbers, the curves, one colour per entry.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct CompareView {
    pub comparison: Comparison,
    /// `#rrggbb` per entry, the same as in exported charts and PDFs.
    pub colours: Vec<String>,
    pub throughput_curves: Vec<CurveDto>,
    pub loss_curves: Vec<CurveDto>,
    pub accuracy_curves: Vec<CurveDto>,
    pub charts: Vec<ChartMeta>,
}

fn compare_view(
    studio: &Studio,
    run_ids: &[i64],
    grouping: Grouping,
    baseline: Option<i64>,
) -> ApiResult<CompareView> {
    let loaded = studio.with_store(|s| s.load_comparison(run_ids, grouping, baseline))?;
    let data = charts::ChartData {
        comparison: &loaded.comparison,
        runs: &loaded.runs,
        hidden: &[],
    };
    let curves = |kind| {
        charts::curves(&data, kind)
            .into_iter()
            .map(|c| CurveDto {
                entry: u32::try_from(c.entry).unwrap_or(u32::MAX),
                run_id: c.run_id,
                points: c.points,
            })
            .collect()
    };
    Ok(CompareView {
        colours: (0..loaded.comparison.entries.len())
            .map(charts::colour_hex)
            .collect(),
        throughput_curves: curves(ChartKind::ThroughputOverTime),
        loss_curves: curves(ChartKind::LossOverTime),
        accuracy_curves: curves(ChartKind::AccuracyOverTime),
        charts: ChartKind::ALL
            .iter()
            .map(|k| {
                let (title, y, x) = charts::titles(*k);
                ChartMeta {
                    kind: *k,
                    title: title.into(),
                    y_unit: y.into(),
                    x_unit: x.into(),
                }
            })
            .collect(),
        comparison: loaded.comparison,
    })
}

/// Compares runs (or their configurations, repeats pooled) against a baseline.
#[tauri::command]
#[specta::specta]
pub fn compare(
    studio: State<'_, Studio>,
    run_ids: Vec<i64>,
    grouping: Grouping,
    baseline: Option<i64>,
) -> ApiResult<CompareView> {
    compare_view(&studio, &run_ids, grouping, baseline)
}

// ---------------------------------------------------------------- sessions

#[tauri::command]
#[specta::specta]
pub fn list_sessions(studio: State<'_, Studio>) -> ApiResult<Vec<SavedSession>> {
    studio.with_store(|s| s.sessions())
}

#[tauri::command]
#[specta::specta]
pub fn save_session(
    studio: State<'_, Studio>,
    name: String,
    run_ids: Vec<i64>,
    baseline: Option<i64>,
    settings: SessionSettings,
) -> ApiResult<SavedSession> {
    studio.with_store_mut(|s| s.save_session(&name, &run_ids, baseline, &settings))
}

#[tauri::command]
#[specta::specta]
pub fn update_session(
    studio: State<'_, Studio>,
    id: i64,
    run_ids: Vec<i64>,
    baseline: Option<i64>,
    settings: SessionSettings,
) -> ApiResult<SavedSession> {
    studio.with_store_mut(|s| s.update_session(id, &run_ids, baseline, &settings))
}

#[tauri::command]
#[specta::specta]
pub fn open_session(studio: State<'_, Studio>, id: i64) -> ApiResult<SavedSession> {
    studio.with_store(|s| s.session(id))
}

#[tauri::command]
#[specta::specta]
pub fn rename_session(studio: State<'_, Studio>, id: i64, name: String) -> ApiResult<SavedSession> {
    studio.with_store_mut(|s| s.rename_session(id, &name))
}

#[tauri::command]
#[specta::specta]
pub fn delete_session(studio: State<'_, Studio>, id: i64) -> ApiResult<()> {
    studio.with_store(|s| s.delete_session(id))
}

// ----------------------------------------------------------------- reports

/// What to report on: a saved session, or runs with a grouping and baseline.
#[derive(Debug, Clone, Deserialize, specta::Type)]
pub struct ReportSelection {
    pub session_id: Option<i64>,
    pub run_ids: Vec<i64>,
    pub grouping: Grouping,
    pub baseline: Option<i64>,
    pub settings: Option<SessionSettings>,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct Written {
    pub path: String,
    pub bytes: u64,
}

fn written(path: PathBuf, bytes: usize) -> Written {
    Written {
        path: path.display().to_string(),
        bytes: bytes as u64,
    }
}

/// The PDF report of a comparison or saved session.
#[tauri::command]
#[specta::specta]
pub fn export_pdf(
    studio: State<'_, Studio>,
    selection: ReportSelection,
    path: PathBuf,
) -> ApiResult<Written> {
    let (title, run_ids, grouping, baseline, settings) = match selection.session_id {
        Some(id) => {
            let s = studio.with_store(|st| st.session(id))?;
            let settings = selection.settings.unwrap_or(s.settings);
            (
                s.name,
                s.run_ids,
                settings.grouping,
                selection.baseline.or(s.baseline_run_id),
                settings,
            )
        }
        None => {
            let settings = selection.settings.unwrap_or(SessionSettings {
                grouping: selection.grouping,
                ..SessionSettings::default()
            });
            let title = format!(
                "runs {}",
                selection
                    .run_ids
                    .iter()
                    .map(|i| format!("#{i}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            (
                title,
                selection.run_ids,
                selection.grouping,
                selection.baseline,
                settings,
            )
        }
    };
    let loaded = studio.with_store(|s| s.load_comparison(&run_ids, grouping, baseline))?;
    let bytes = pdf::report(&pdf::ReportInput {
        title,
        comparison: &loaded.comparison,
        runs: &loaded.runs,
        charts: &settings.charts,
        hidden_series: &settings.hidden_series,
        prices: &loaded.prices,
        generated_unix_ms: now_unix_ms(),
        studio_version: VERSION,
        extra: &[],
    })?;
    trainbench_report::write_atomic(&path, &bytes)?;
    Ok(written(path, bytes.len()))
}

/// Runs with configuration and summary columns as CSV (all runs when `run_ids` is empty).
#[tauri::command]
#[specta::specta]
pub fn export_csv(
    studio: State<'_, Studio>,
    run_ids: Vec<i64>,
    path: PathBuf,
) -> ApiResult<Written> {
    let rows = studio.with_store(|s| {
        if run_ids.is_empty() {
            s.list_runs()
        } else {
            run_ids.iter().map(|id| s.run_row(*id)).collect()
        }
    })?;
    let mut bytes = Vec::new();
    csv::runs(&rows, &mut bytes)?;
    trainbench_report::write_atomic(&path, &bytes)?;
    Ok(written(path, bytes.len()))
}

/// A saved session as a portable file (runs, raw data, provenance, chart settings).
#[tauri::command]
#[specta::specta]
pub fn export_session(studio: State<'_, Studio>, id: i64, path: PathBuf) -> ApiResult<Written> {
    let file =
        studio.with_store(|s| s.export_session(id, &format!("TrainBench Studio {VERSION}")))?;
    let bytes = serde_json::to_vec_pretty(&file).map_err(|e| ApiError::internal(e.to_string()))?;
    trainbench_report::write_atomic(&path, &bytes)?;
    Ok(written(path, bytes.len()))
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ImportResult {
    pub session: SavedSession,
    /// `false` when the file's session was already here (nothing changed).
    pub session_created: bool,
    pub runs_imported: u32,
    pub runs_already_present: u32,
    pub from_host: String,
}

/// Imports a session file: all of it in one transaction, or nothing.
#[tauri::command]
#[specta::specta]
pub fn import_session(studio: State<'_, Studio>, path: PathBuf) -> ApiResult<ImportResult> {
    let bad = |why: String| ApiError::bad_input("file", path.display(), &why);
    let size = std::fs::metadata(&path)
        .map_err(|e| bad(format!("a readable session file ({e})")))?
        .len();
    let max = trainbench_core::session::MAX_SESSION_FILE_BYTES as u64;
    if size > max {
        return Err(bad(format!(
            "a session file of at most {max} bytes (it has {size})"
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| bad(format!("a readable session file ({e})")))?;
    let parsed = SessionFile::parse(&bytes)
        .map_err(|e| ApiError::new("bad_input", format!("file = {}: {e}", path.display())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let outcome = studio.with_store_mut(|s| s.import_session(&parsed, name.as_deref()))?;
    let session = studio.with_store(|s| s.session(outcome.session_id))?;
    Ok(ImportResult {
        session,
        session_created: outcome.session_created,
        runs_imported: u32::try_from(outcome.runs_imported).unwrap_or(u32::MAX),
        runs_already_present: u32::try_from(outcome.runs_already_present).unwrap_or(u32::MAX),
        from_host: parsed.machine.hostname,
    })
}

// ---------------------------------------------------------------- settings

/// A price-table row with whether the person entered it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct PriceEntry {
    pub row: PriceRow,
    pub by_user: bool,
}

#[tauri::command]
#[specta::specta]
pub fn prices(studio: State<'_, Studio>) -> ApiResult<Vec<PriceEntry>> {
    Ok(studio
        .with_store(|s| s.prices())?
        .into_iter()
        .map(|(row, by_user)| PriceEntry { row, by_user })
        .collect())
}

/// Adds or edits a price row (checked: positive prices, a source, an ISO date).
#[tauri::command]
#[specta::specta]
pub fn save_price(studio: State<'_, Studio>, row: PriceRow) -> ApiResult<Vec<PriceEntry>> {
    check_price_row(&row)?;
    studio.with_store(|s| s.upsert_price(&row, true))?;
    prices(studio)
}

pub fn check_price_row(row: &PriceRow) -> ApiResult<()> {
    if row.offering.trim().is_empty() {
        return Err(ApiError::bad_input(
            "offering",
            "(empty)",
            "a name for the offering",
        ));
    }
    if row.devices == 0 || row.devices > 64 {
        return Err(ApiError::bad_input("devices", row.devices, "1 to 64"));
    }
    for (field, v) in [
        ("usd_per_hour", row.usd_per_hour),
        ("usd_per_device_hour", row.usd_per_device_hour),
    ] {
        if !(v.is_finite() && v > 0.0 && v < 10_000.0) {
            return Err(ApiError::bad_input(
                field,
                v,
                "a price in US dollars above 0 and below 10,000",
            ));
        }
    }
    if row.source.trim().is_empty() {
        return Err(ApiError::bad_input(
            "source",
            "(empty)",
            "where the price comes from (a URL or a document)",
        ));
    }
    let date_ok = row.as_of.len() == 10
        && row.as_of.chars().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }
        });
    if !date_ok {
        return Err(ApiError::bad_input(
            "as_of",
            &row.as_of,
            "a date as YYYY-MM-DD",
        ));
    }
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub fn environments() -> ApiResult<Vec<FrameworkEnv>> {
    envs::list().map_err(|e| ApiError::new("environment", e.to_string()))
}

/// Installs (or repairs) the studio's environment for a Python framework,
/// streaming pip's output lines to `on_line`.
#[tauri::command]
#[specta::specta]
pub async fn install_framework(
    studio: State<'_, Studio>,
    framework: String,
    on_line: Channel<String>,
) -> ApiResult<FrameworkEnv> {
    let gpu = !studio.gpu.gpus().is_empty();
    tauri::async_runtime::spawn_blocking(move || {
        envs::install(&framework, gpu, |line| {
            let _ = on_line.send(line.to_owned());
        })
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?
    .map_err(|e| ApiError::new("environment", e.to_string()))
}

#[tauri::command]
#[specta::specta]
pub fn settings(studio: State<'_, Studio>) -> Settings {
    studio.settings()
}

/// Switches to another database file (created if new); refuses while runs
/// are queued or running, and keeps the current one when the new one cannot
/// be opened.
#[tauri::command]
#[specta::specta]
pub fn set_database(studio: State<'_, Studio>, path: PathBuf) -> ApiResult<Settings> {
    studio.set_database(path)
}

#[tauri::command]
#[specta::specta]
pub fn set_theme(studio: State<'_, Studio>, theme: Theme) -> ApiResult<Settings> {
    studio.set_theme(theme)
}

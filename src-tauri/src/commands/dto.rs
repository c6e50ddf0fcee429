//! What crosses to the UI and back, shaped for the window (the TypeScript
//! types in `ui/src/bindings.ts` are generated from these).

use serde::{Deserialize, Serialize};
use trainbench_app::frameworks::FrameworkChoice;
use trainbench_app::host::MachineInfo;
use trainbench_app::reports::{Selection, Source};
use trainbench_app::sweep::Rejected;
use trainbench_app::SessionRef;
use trainbench_core::compare::{Comparison, Grouping};
use trainbench_core::record::{RunDetail, RunRow};
use trainbench_core::reference::PriceRow;
use trainbench_core::session::{ChartKind, SavedSession, SessionSettings};
use trainbench_core::summary::RunStatus;
use trainbench_core::telemetry::TelemetrySample;

use crate::settings::Settings;

/// Everything the wizard needs to offer choices.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AppInfo {
    pub version: String,
    pub database: String,
    /// Runs the database holds (none: the app opens on its welcome view).
    pub runs_stored: u32,
    pub machine: MachineInfo,
    pub models: Vec<trainbench_app::models::ModelInfo>,
    pub frameworks: Vec<FrameworkChoice>,
    pub precisions: Vec<String>,
    pub compile_modes: Vec<String>,
    pub data_sources: Vec<String>,
    pub prices: Vec<PriceRow>,
    pub charts: Vec<ChartKind>,
    pub settings: Settings,
    /// Why the settings' database could not be opened (the app is on an
    /// empty database in memory until another file is chosen).
    pub database_problem: Option<String>,
    /// The studio's words explained (tooltips, the Glossary page).
    pub glossary: Vec<trainbench_app::glossary::Term>,
}

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
    /// What the figures will mean (a GPU price on CPU runs, text models
    /// without an epoch size); nothing is refused.
    pub notes: Vec<String>,
    /// How long it will take, judged by earlier runs here; `None` when no
    /// configuration of it has run on this machine before.
    pub duration: Option<trainbench_app::sweep::DurationEstimate>,
    /// Releases named (`jax==0.7.2`) that are not installed: Start makes
    /// them first (`install_releases`).
    pub to_install: Vec<String>,
}

/// A framework's releases to pick from (the wizard's version picker).
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ReleasesDto {
    pub framework: String,
    /// Newest first.
    pub releases: Vec<trainbench_app::releases::ReleaseChoice>,
    /// The range the studio supports, in words (`jax 0.6.0 to 0.10.x`).
    pub supported: String,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct Started {
    pub sweep_id: i64,
    /// In the order they will run (repeats interleaved).
    pub run_ids: Vec<i64>,
}

/// The runs table: every stored run that can be read, newest first, and
/// the runs left out because a column of their row is damaged (each with
/// its id, the column, the value and the line the window shows).
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct RunListDto {
    pub runs: Vec<RunListItem>,
    pub left_out: Vec<trainbench_app::LeftOutRun>,
}

/// A run as the runs table lists it: configuration and headline numbers.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct RunListItem {
    pub id: i64,
    pub status: RunStatus,
    pub status_reason: Option<String>,
    pub label: String,
    pub framework: trainbench_core::Framework,
    pub model: String,
    pub precision: trainbench_core::Precision,
    pub devices: u32,
    pub batch_size: u64,
    pub data: trainbench_core::DataSource,
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
    /// The cost is for a projected epoch (not one the run trained through).
    pub cost_is_projected: bool,
    /// The price offering chosen; `None`: no cost is computed.
    pub price_offering: Option<String>,
    /// The host an imported run was measured on.
    pub imported_from: Option<String>,
    /// The machine it trained on (its host name), the first GPU's name
    /// (`None`: a CPU run) and the framework's version, as the run reported.
    pub host: Option<String>,
    pub gpu: Option<String>,
    pub framework_version: Option<String>,
    /// Model FLOPs utilisation, 0–1, where a peak is known.
    pub mfu: Option<f64>,
    /// Joules per training sample, where the GPU reported its energy.
    pub energy_j_per_sample: Option<f64>,
}

impl From<&RunRow> for RunListItem {
    fn from(r: &RunRow) -> Self {
        let s = r.summary.as_ref();
        RunListItem {
            id: r.id,
            status: r.status,
            status_reason: r.status_reason.clone(),
            label: trainbench_core::compare::config_label(r),
            framework: r.framework,
            model: r.model.clone(),
            precision: r.precision,
            devices: r.devices,
            batch_size: r.batch_size,
            data: r.data,
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
            cost_is_projected: s.and_then(|s| s.cost_is_projected) == Some(true),
            price_offering: r.price_offering.clone(),
            imported_from: r.origin.as_ref().map(|o| o.hostname.clone()),
            host: r.measured_on.hostname.clone(),
            gpu: r.measured_on.gpu.clone(),
            framework_version: r.measured_on.framework_version.clone(),
            mfu: s.and_then(|s| s.mfu),
            energy_j_per_sample: s.and_then(|s| s.energy_j_per_sample),
        }
    }
}

/// One run in full, with its telemetry thinned to at most 2,000 samples per source.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct RunView {
    pub detail: RunDetail,
    pub label: String,
    pub telemetry: Vec<TelemetrySample>,
    pub telemetry_thinned: bool,
    /// Where it ran when it ran on a remote host.
    pub remote: Option<RemoteRunView>,
}

/// A run on a remote host: where, and whether its journal is still awaited.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct RemoteRunView {
    pub host: String,
    pub url: String,
    /// The run's folder on the host.
    pub dir: String,
    /// Journal bytes read and stored.
    pub journal_bytes: f64,
    /// Its end has not been read yet: it may still be training there.
    pub waiting: bool,
    /// This app's queue is reading its journal now.
    pub followed: bool,
}

/// A curve of one run over wall time (seconds since training started).
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct CurveDto {
    /// Index into the comparison's entries.
    pub entry: u32,
    pub run_id: i64,
    pub points: Vec<(f64, f64)>,
    /// Each point's training step (for curves against steps).
    pub steps: Vec<u64>,
    /// Seconds from the start of training to the run's first steady window
    /// (for curves from there); `None` before a summary.
    pub steady_from_s: Option<f64>,
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
    /// The metric the search these runs came from decided by (its chart
    /// leads); `None` unless every run came from one search.
    pub decided_by: Option<trainbench_core::compare::Metric>,
}

/// What to report on: a saved session, or runs with a grouping and baseline.
#[derive(Debug, Clone, Deserialize, specta::Type)]
pub struct ReportSelection {
    pub session_id: Option<i64>,
    pub run_ids: Vec<i64>,
    pub grouping: Grouping,
    pub baseline: Option<i64>,
    pub settings: Option<SessionSettings>,
}

impl From<ReportSelection> for Selection {
    /// A session keeps its own grouping unless settings are sent.
    fn from(s: ReportSelection) -> Self {
        let (source, grouping) = match s.session_id {
            Some(id) => (Source::Session(SessionRef::Id(id)), None),
            None => (Source::Runs(s.run_ids), Some(s.grouping)),
        };
        Selection {
            source,
            grouping,
            baseline: s.baseline,
            settings: s.settings,
        }
    }
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

/// A count for the UI (saturating: the UI's numbers are 32-bit).
pub fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

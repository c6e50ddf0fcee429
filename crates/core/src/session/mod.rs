//! Saved comparison sessions and the portable session file.
//!
//! A session is a named comparison: its runs, baseline and chart choices. A
//! session file carries one session with everything measured about its runs
//! (rows, raw windows, evaluations, memory peaks, telemetry, provenance), so
//! another machine's studio can show the same comparison. The file is JSON,
//! versioned; [`SessionFile::parse`] refuses anything truncated, malformed, of
//! another version or outside sane bounds before the store touches it.

use serde::{Deserialize, Serialize};

use crate::compare::{Grouping, Metric};
use crate::framework::Framework;
use crate::record::{RunOrigin, StoredWindow};
use crate::reference::PriceRow;
use crate::spec::{DataSource, Device, Precision};
use crate::summary::{RunStatus, RunSummary};
use crate::telemetry::TelemetrySample;

/// A chart a comparison can show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    Throughput,
    PeakMemory,
    CostPerEpoch,
    TimeToAccuracy,
    ThroughputOverTime,
    LossOverTime,
    AccuracyOverTime,
    Scaling,
    /// Where each entry's step goes, stacked per sample.
    StepBreakdown,
}

impl ChartKind {
    pub const ALL: [ChartKind; 9] = [
        ChartKind::Throughput,
        ChartKind::PeakMemory,
        ChartKind::CostPerEpoch,
        ChartKind::TimeToAccuracy,
        ChartKind::ThroughputOverTime,
        ChartKind::LossOverTime,
        ChartKind::AccuracyOverTime,
        ChartKind::Scaling,
        ChartKind::StepBreakdown,
    ];

    pub fn key(self) -> &'static str {
        match self {
            ChartKind::Throughput => "throughput",
            ChartKind::PeakMemory => "peak_memory",
            ChartKind::CostPerEpoch => "cost_per_epoch",
            ChartKind::TimeToAccuracy => "time_to_accuracy",
            ChartKind::ThroughputOverTime => "throughput_over_time",
            ChartKind::LossOverTime => "loss_over_time",
            ChartKind::AccuracyOverTime => "accuracy_over_time",
            ChartKind::Scaling => "scaling",
            ChartKind::StepBreakdown => "step_breakdown",
        }
    }

    pub fn parse(s: &str) -> Option<ChartKind> {
        ChartKind::ALL.into_iter().find(|c| c.key() == s)
    }

    /// The bar chart of a headline metric, when this is one.
    pub fn metric(self) -> Option<Metric> {
        Metric::parse(self.key())
    }
}

/// What a saved comparison shows besides its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct SessionSettings {
    pub grouping: Grouping,
    /// Charts in the order shown.
    pub charts: Vec<ChartKind>,
    /// Entry keys (run ids or configuration keys) whose series are hidden.
    #[serde(default)]
    pub hidden_series: Vec<String>,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            grouping: Grouping::Runs,
            charts: ChartKind::ALL.to_vec(),
            hidden_series: Vec::new(),
        }
    }
}

/// A saved session as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SavedSession {
    pub id: i64,
    pub uid: String,
    pub name: String,
    pub run_ids: Vec<i64>,
    pub baseline_run_id: Option<i64>,
    pub settings: SessionSettings,
    pub created_unix_ms: i64,
    pub updated_unix_ms: i64,
    /// The machine a session came from, when it was imported.
    pub imported_from: Option<String>,
}

/// Session names: 1–200 characters, no control characters, not blank.
pub fn check_session_name(name: &str) -> Result<(), SessionFileError> {
    let bad = |why: &str| SessionFileError::Invalid {
        field: "name".into(),
        message: format!("{name:?} is not allowed: {why}"),
    };
    if name.trim().is_empty() {
        return Err(bad("expected a non-blank name"));
    }
    if name.chars().count() > 200 {
        return Err(bad("expected at most 200 characters"));
    }
    if name.chars().any(char::is_control) {
        return Err(bad("expected no control characters"));
    }
    Ok(())
}

pub const SESSION_FORMAT: &str = "trainbench-session";
/// The newest version this studio reads and writes. Version 2 adds
/// `model_files`, version 3 `searches`; a file is written at the oldest
/// version that holds what it carries (without either: version 1, which
/// older studios read), and older files are read as ever.
pub const SESSION_VERSION: u32 = 3;
/// The oldest version this studio reads.
pub const OLDEST_SESSION_VERSION: u32 = 1;
/// Files larger than this are refused before parsing.
pub const MAX_SESSION_FILE_BYTES: usize = 512 * 1024 * 1024;
pub const MAX_RUNS: usize = 10_000;
pub const MAX_ROWS_PER_RUN: usize = 2_000_000;
const MAX_TEXT: usize = 1 << 20;
/// The size bounds of a session file's text fields, in bytes (JSON values:
/// as serialised). Every field a file carries has one; `docs/reliability.md`
/// lists them.
pub const TEXT_BOUNDS: &[(&str, usize)] = &[
    ("exported_by", 200),
    ("machine.hostname", 255),
    ("machine.machine_id", 255),
    ("runs[].config_key", 64 * 1024),
    ("runs[].model", 200),
    ("runs[].price_offering", 200),
    ("runs[].status_reason", 64 * 1024),
    ("runs[].error_class", 64),
    ("runs[].done_reason", 64 * 1024),
    ("runs[].stderr_tail", MAX_STDERR_TAIL),
    ("runs[].spec", MAX_TEXT),
    ("runs[].hello", MAX_TEXT),
    ("runs[].provenance", MAX_TEXT),
    ("runs[].memory[].device", 200),
    ("runs[].memory[].source", 200),
    ("runs[].telemetry[].source", 200),
    ("session.settings.hidden_series[]", 64 * 1024),
    ("model_files[].reference", 4096 + 1 + 100),
    ("model_files[].text", 1 << 20),
    ("searches[].model", 200),
    ("searches[].outcome", 16 << 20),
];
/// The longest log tail a run keeps (the runner keeps far less; older runs
/// are cut to it when exported).
pub const MAX_STDERR_TAIL: usize = 256 * 1024;

/// The bound of a text field named as in [`TEXT_BOUNDS`].
pub fn text_bound(field: &str) -> usize {
    TEXT_BOUNDS
        .iter()
        .find(|(f, _)| *f == field)
        .map_or(MAX_TEXT, |(_, b)| *b)
}

/// The name an imported session gets when `base` is taken here: `base
/// (imported from HOST)` or `…, N)`, held to the rules of a name typed by hand
/// (control characters become spaces, at most 200 characters: the base is
/// shortened first).
pub fn imported_name(base: &str, host: &str, n: u32) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    };
    let host: String = clean(host).chars().take(60).collect();
    let suffix = if n > 2 {
        format!(" (imported from {host}, {})", n - 1)
    } else {
        format!(" (imported from {host})")
    };
    let room = 200usize.saturating_sub(suffix.chars().count());
    let base: String = clean(base).chars().take(room).collect();
    format!("{base}{suffix}")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct MachineInfo {
    /// Random id of the exporting database, created once.
    pub machine_id: String,
    pub hostname: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct PortableSession {
    pub uid: String,
    pub name: String,
    /// Uid of the baseline run.
    pub baseline_run_uid: Option<String>,
    pub settings: SessionSettings,
    pub created_unix_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct PortableEval {
    pub step: u64,
    pub epoch: f64,
    pub elapsed_s: f64,
    pub accuracy: f64,
    pub loss: f64,
    pub samples: u64,
    pub t_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct PortableMemory {
    pub device: String,
    pub source: String,
    pub peak_bytes: u64,
    pub reserved_peak_bytes: Option<u64>,
}

/// One run with everything measured about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct PortableRun {
    /// Globally unique id of the run (stays with it across machines).
    pub uid: String,
    /// Its id in the exporting database.
    pub id: i64,
    /// Where it was measured, when the exporting studio had imported it.
    pub origin: Option<RunOrigin>,
    pub config_key: String,
    pub repeat_index: u32,
    pub framework: Framework,
    pub model: String,
    pub precision: Precision,
    #[cfg_attr(feature = "specta", specta(type = String))]
    pub device: Device,
    pub devices: u32,
    pub batch_size: u64,
    pub data: DataSource,
    pub spec: serde_json::Value,
    pub price_offering: Option<String>,
    /// The price row the cost was computed with, as it stood at export.
    pub price: Option<PriceRow>,
    /// The epoch size asked for cost per epoch (none: the data set's own,
    /// or the stated default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch_samples: Option<u64>,
    pub status: RunStatus,
    pub status_reason: Option<String>,
    pub error_class: Option<String>,
    pub exit_code: Option<i32>,
    pub stderr_tail: Option<String>,
    pub created_unix_ms: i64,
    pub started_unix_ms: Option<i64>,
    pub ended_unix_ms: Option<i64>,
    pub hello: Option<serde_json::Value>,
    pub param_count: Option<u64>,
    pub flops_per_sample: Option<f64>,
    pub first_step_s: Option<f64>,
    pub first_step_train_s: Option<f64>,
    pub compile_s: Option<f64>,
    pub train_start_ns: Option<u64>,
    pub done_reason: Option<String>,
    /// The dynamic loss scale at the end (amp-fp16 runs).
    #[serde(default)]
    pub loss_scale: Option<f64>,
    /// The step breakdown the worker measured (absent from older files).
    #[serde(default)]
    pub step_timings: Option<crate::protocol::StepTimings>,
    /// Recompilations after step 1 (absent from older files).
    #[serde(default)]
    pub compiles: Option<crate::protocol::CompileCount>,
    /// The operator profile (absent from older files and unprofiled runs).
    #[serde(default)]
    pub profile: Option<crate::protocol::OperatorProfile>,
    pub provenance: Option<serde_json::Value>,
    pub windows: Vec<StoredWindow>,
    pub evals: Vec<PortableEval>,
    pub memory: Vec<PortableMemory>,
    pub telemetry: Vec<TelemetrySample>,
    pub summary: Option<RunSummary>,
}

/// The copy of a model file that runs of the session trained (`--model
/// PATH.py:FUNCTION`): the bytes the studio read and hashed when it planned
/// them (UTF-8 Python, at most 1 MiB). Carried so a comparison can be read
/// and reproduced elsewhere; importing stores it after checking its hash and
/// never runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct PortableModelFile {
    /// The SHA-256 of `text`'s bytes, as the runs' `spec.model_sha256`.
    pub sha256: String,
    /// `PATH.py:FUNCTION` as the first run that read it named it.
    pub reference: String,
    /// The file's contents.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct SessionFile {
    pub format: String,
    pub version: u32,
    pub exported_unix_ms: i64,
    /// The studio version that wrote the file.
    pub exported_by: String,
    pub machine: MachineInfo,
    pub session: PortableSession,
    pub runs: Vec<PortableRun>,
    /// The model files the runs trained, each once (version 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_files: Vec<PortableModelFile>,
    /// The searches (`trainbench tune`) whose every run the file carries
    /// (version 3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub searches: Vec<PortableSearch>,
}

impl SessionFile {
    /// The oldest version that holds what the file carries.
    pub fn version_needed(&self) -> u32 {
        if !self.searches.is_empty() {
            SEARCHES_VERSION
        } else if !self.model_files.is_empty() {
            2
        } else {
            OLDEST_SESSION_VERSION
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionFileError {
    #[error("session file is {size} bytes: files over {max} bytes are refused")]
    TooLarge { size: usize, max: usize },
    #[error("session file is not a TrainBench session: {0}")]
    NotASession(String),
    #[error(
        "session file version = {found} is not supported: this studio reads versions {OLDEST_SESSION_VERSION} to {supported}"
    )]
    Version { found: u64, supported: u32 },
    #[error("session file is malformed at {path}: {message}")]
    Malformed { path: String, message: String },
    #[error("session file: {field} {message}")]
    Invalid { field: String, message: String },
}

mod searches;
mod validate;

pub use searches::{PortableSearch, SEARCHES_VERSION};

pub use validate::is_uid;

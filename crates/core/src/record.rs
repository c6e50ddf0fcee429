//! What the store holds about a run, as plain data: the listed row, the full
//! detail, timing windows and evaluations. The store fills these; the CLI, the
//! desktop shell, comparisons and reports read them.

use serde::{Deserialize, Serialize};

use crate::framework::Framework;
use crate::spec::{Compile, DataSource, Device, Parallel, Precision};
use crate::summary::{MemoryPeak, RunStatus, RunSummary};

/// A run as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunRow {
    pub id: i64,
    pub sweep_id: Option<i64>,
    /// Equal for the repeats of one configuration (see `spec::ConfigKeys`).
    pub config_key: String,
    /// Equal for configurations that differ at most in their device count.
    pub scaling_key: String,
    pub repeat_index: u32,
    pub framework: Framework,
    /// The registered environment of a Python framework; `None`: its own.
    pub environment: Option<String>,
    pub model: String,
    pub precision: Precision,
    pub compile: Compile,
    #[cfg_attr(feature = "specta", specta(type = String))]
    pub device: Device,
    pub devices: u32,
    pub parallel: Parallel,
    pub batch_size: u64,
    pub data: DataSource,
    pub status: RunStatus,
    pub status_reason: Option<String>,
    pub error_class: Option<String>,
    pub exit_code: Option<i32>,
    pub created_unix_ms: i64,
    pub started_unix_ms: Option<i64>,
    pub ended_unix_ms: Option<i64>,
    pub param_count: Option<u64>,
    pub price_offering: Option<String>,
    /// Where an imported run was measured; `None` for runs measured here.
    pub origin: Option<RunOrigin>,
    /// The machine, GPU and framework version the run reported.
    #[serde(default)]
    pub measured_on: MeasuredOn,
    pub summary: Option<RunSummary>,
    /// Environment variables the run set for its worker (`spec::env`).
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// The CPU threads the run asked for; `None`: the framework's own choice.
    #[serde(default)]
    pub threads: Option<u32>,
    /// cuDNN's benchmark mode the run asked for; `None`: the worker's default.
    #[serde(default)]
    pub cudnn_benchmark: Option<bool>,
}

/// What a run reported about where it trained (its provenance and the
/// worker's hello), for tables that list many runs; empty before it started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MeasuredOn {
    /// The machine's host name.
    pub hostname: Option<String>,
    /// The first GPU's name; `None` on a CPU.
    pub gpu: Option<String>,
    /// The framework's version as the worker reported it.
    pub framework_version: Option<String>,
}

/// The machine an imported run came from, and when it arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunOrigin {
    pub machine_id: String,
    pub hostname: String,
    /// The run's id in the database it was exported from.
    pub source_run_id: i64,
    pub imported_unix_ms: i64,
    /// The session file it was imported from (its file name).
    pub file: Option<String>,
}

/// Everything stored about one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunDetail {
    #[serde(flatten)]
    pub row: RunRow,
    pub spec: serde_json::Value,
    pub hello: Option<serde_json::Value>,
    pub provenance: Option<serde_json::Value>,
    pub stderr_tail: Option<String>,
    /// Start of training → end of step 1 (compilation included), seconds.
    pub first_step_train_s: Option<f64>,
    /// Compilation alone, where the framework measured it apart.
    pub compile_s: Option<f64>,
    /// The dynamic loss scale when the run finished (amp-fp16); `None` where
    /// no loss scaling ran or the worker did not report it.
    #[serde(default)]
    pub loss_scale: Option<f64>,
    /// The worker's step breakdown (runs measured before it have none).
    #[serde(default)]
    pub step_timings: Option<crate::protocol::StepTimings>,
    /// Recompilations after step 1, where the worker counted them.
    #[serde(default)]
    pub compiles: Option<crate::protocol::CompileCount>,
    /// The operator profile, where the run asked for one.
    #[serde(default)]
    pub profile: Option<crate::protocol::OperatorProfile>,
    pub windows: Vec<StoredWindow>,
    pub evals: Vec<StoredEval>,
    pub memory: Vec<MemoryPeak>,
    pub telemetry_samples: u64,
    /// How many telemetry samples the run had before they were averaged
    /// into time buckets (long runs; `crate::downsample`); `None`: none were.
    #[serde(default)]
    pub telemetry_raw_samples: Option<u64>,
}

impl RunDetail {
    /// The GPU the run trained on (`cuda:N`), by the name its provenance
    /// recorded when it started; `None` for CPU runs and unknown provenance.
    pub fn gpu_name(&self) -> Option<String> {
        let Device::Cuda(index) = self.row.device else {
            return None;
        };
        let index = u64::from(index);
        self.provenance.as_ref()?["gpus"]
            .as_array()?
            .iter()
            .find(|g| g["index"].as_u64() == Some(index))?["name"]
            .as_str()
            .map(str::to_owned)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StoredWindow {
    pub index: u64,
    pub first_step: u64,
    pub steps: u64,
    pub samples: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub loss_mean: f64,
    /// `None` where a person's training script did not pass one.
    pub lr: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StoredEval {
    pub step: u64,
    pub epoch: f64,
    pub elapsed_s: f64,
    pub accuracy: f64,
    /// `None` where a person's training script reported an accuracy alone.
    pub loss: Option<f64>,
}

impl From<&StoredWindow> for crate::stats::WindowTiming {
    fn from(w: &StoredWindow) -> Self {
        crate::stats::WindowTiming {
            samples: w.samples,
            start_ns: w.start_ns,
            end_ns: w.end_ns,
        }
    }
}

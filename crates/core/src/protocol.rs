//! The worker protocol, version 1: one JSON object per line on the worker's
//! stdout, tagged by `"event"`. Anything else on stdout or stderr is log text.
//! `docs/protocol.md` is the prose description; this module is the schema.
//!
//! Timestamps named `*_ns` are CLOCK_MONOTONIC nanoseconds, comparable between
//! processes on one machine (so the runner can line them up with telemetry).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::error_class::ErrorClass;

pub const PROTOCOL_VERSION: u32 = 1;

/// One device a worker sees or uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceInfo {
    /// `cpu` or `cuda:N`.
    pub id: String,
    /// Human name where the framework gives one (CPU model, GPU name).
    pub name: Option<String>,
}

/// Where a data set's samples come from and how they are split.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DataInfo {
    pub source: String,
    pub path: Option<String>,
    pub train_samples: u64,
    pub eval_samples: u64,
    /// Samples per epoch as trained (whole batches only: the last partial batch
    /// of an epoch is dropped so every step has the same batch size).
    pub samples_per_epoch: u64,
    /// A streamed source (an image folder): its class count, its layout,
    /// how many held-out images it has (at most 1,024 are evaluated) and the
    /// loader that decodes it while training runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_out_images: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loader: Option<String>,
}

/// A part of a training step that a worker times on its own in the step
/// breakdown (after the timed part; see [`StepTimings`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum StepPhase {
    /// Host batch preparation (the batch's indices) and the copy to the
    /// device, up to the batch on the device.
    Data,
    /// The forward pass and the loss.
    Forward,
    /// The backward pass, with the gradient all-reduce of a data-parallel run.
    Backward,
    /// The backward pass of the same step with the gradient all-reduce
    /// switched off (DDP's `no_sync`): backward minus this is the
    /// communication the backward pass did not hide.
    BackwardLocal,
    /// The optimizer update (with loss-scale unscaling and update where it runs).
    Optimizer,
    /// Everything after `data` in one program the framework will not split
    /// (a `tf.function` graph, an XLA executable): forward, backward,
    /// optimizer and any communication together.
    Step,
}

impl StepPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            StepPhase::Data => "data",
            StepPhase::Forward => "forward",
            StepPhase::Backward => "backward",
            StepPhase::BackwardLocal => "backward_local",
            StepPhase::Optimizer => "optimizer",
            StepPhase::Step => "step",
        }
    }
}

/// One phase's time in each measured step, seconds, in step order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PhaseSeries {
    pub phase: StepPhase,
    pub seconds: Vec<f64>,
}

/// The step breakdown a worker measures after its timed part: a few extra
/// steps, each phase closed by a device synchronisation, interleaved with as
/// many whole steps timed the same way (synchronised, unsplit), so that the
/// split's own cost shows as the difference. The timed windows are never
/// touched. `core::breakdown` turns this into the figures shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StepTimings {
    /// Whole steps (batch preparation included), each between two
    /// synchronisations, seconds.
    pub whole_step_s: Vec<f64>,
    /// The split steps' phases.
    pub phases: Vec<PhaseSeries>,
    /// What the framework runs as one program (the `step` phase), in words;
    /// null where the phases are split.
    #[serde(default)]
    pub fused: Option<String>,
    /// How a data-parallel run's communication is accounted for, in words
    /// (null for one device).
    #[serde(default)]
    pub communication: Option<String>,
}

impl StepTimings {
    pub fn series(&self, phase: StepPhase) -> Option<&[f64]> {
        self.phases
            .iter()
            .find(|p| p.phase == phase)
            .map(|p| p.seconds.as_slice())
    }
}

/// What an operator's time is spent on (the operator profile's categories).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum OpCategory {
    /// Matrix products and convolutions (GEMM kernels, `aten::mm`, XLA dots).
    MatmulConv,
    /// Fused attention (SDPA, flash/fmha kernels) or what runs under the
    /// workers' attention scope.
    Attention,
    /// Normalisation, activations, reductions and other elementwise work.
    NormElementwise,
    /// Everything the optimizer step runs.
    Optimizer,
    /// Copies and fills (host↔device, layout copies).
    Memory,
    /// Collectives (NCCL, gloo, XLA all-reduce).
    Communication,
    /// Framework and Python code between operators, and what fits no other.
    Other,
}

impl OpCategory {
    pub const ALL: [OpCategory; 7] = [
        OpCategory::MatmulConv,
        OpCategory::Attention,
        OpCategory::NormElementwise,
        OpCategory::Optimizer,
        OpCategory::Memory,
        OpCategory::Communication,
        OpCategory::Other,
    ];

    pub fn label(self) -> &'static str {
        match self {
            OpCategory::MatmulConv => "matmul/conv",
            OpCategory::Attention => "attention",
            OpCategory::NormElementwise => "norm/elementwise",
            OpCategory::Optimizer => "optimizer",
            OpCategory::Memory => "memory copies",
            OpCategory::Communication => "communication",
            OpCategory::Other => "other",
        }
    }
}

/// One operator's (or kernel's) self time over the profiled steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OpTime {
    pub name: String,
    pub category: OpCategory,
    /// Self time summed over the profiled steps, seconds.
    pub self_s: f64,
    pub calls: u64,
}

/// A category's self time summed over the profiled steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CategoryTime {
    pub category: OpCategory,
    pub self_s: f64,
}

/// The operators the profile does not list one by one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OtherOps {
    pub count: u64,
    pub self_s: f64,
}

/// Which timeline a profile's self times come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ProfileTimeline {
    /// Kernels and copies on the accelerator's streams.
    Device,
    /// Operators on the host's training (or XLA) threads.
    Host,
}

/// The operator profile (`--profile`): a few steps after the timed part and
/// the breakdown under the framework's own profiler, its trace reduced to
/// self time per operator and per category. `not_measured` says why there
/// is none (the other fields are then empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OperatorProfile {
    /// The profiler and framework version.
    #[serde(default)]
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
    /// Steps profiled (after one unprofiled step).
    #[serde(default)]
    pub steps: u64,
    /// The profiled steps' span in the trace, seconds.
    #[serde(default)]
    pub span_s: f64,
    #[serde(default)]
    pub timeline: Option<ProfileTimeline>,
    /// What the timeline holds, in words.
    #[serde(default)]
    pub what: String,
    /// The operators with the most self time, most first.
    #[serde(default)]
    pub ops: Vec<OpTime>,
    #[serde(default)]
    pub other_ops: OtherOps,
    #[serde(default)]
    pub categories: Vec<CategoryTime>,
    /// Time at least one operator ran (the union of the timeline's intervals).
    #[serde(default)]
    pub busy_s: f64,
    /// The span less the busy time: no operator ran.
    #[serde(default)]
    pub idle_s: f64,
}

impl OperatorProfile {
    /// Self time of `category` per profiled step, seconds.
    pub fn per_step(&self, category: OpCategory) -> Option<f64> {
        (self.steps > 0 && self.not_measured.is_none()).then(|| {
            self.categories
                .iter()
                .filter(|c| c.category == category)
                .map(|c| c.self_s)
                .sum::<f64>()
                / self.steps as f64
        })
    }

    /// Idle time per profiled step, seconds.
    pub fn idle_per_step(&self) -> Option<f64> {
        (self.steps > 0 && self.not_measured.is_none()).then(|| self.idle_s / self.steps as f64)
    }
}

/// How often the training step was compiled again after step 1, as the
/// framework counts it (torch.compile's recompiles, `tf.function` retraces).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CompileCount {
    /// Compilations of the training step after the first step.
    pub after_first_step: u64,
    /// What was counted, in words.
    pub source: String,
}

/// Everything a worker says, one line each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
#[expect(
    clippy::large_enum_variant,
    reason = "one short-lived event per output line; boxing buys nothing"
)]
pub enum Event {
    /// After model and data are built, before the first step.
    Hello {
        protocol: u32,
        worker: String,
        framework: String,
        framework_version: String,
        /// Other library versions worth recording (binding crate, CUDA, cuDNN …).
        libraries: Vec<(String, String)>,
        devices_visible: Vec<DeviceInfo>,
        device: DeviceInfo,
        model: String,
        /// Counted from the model's tensors; `null` where a person's training
        /// script did not hand its model to the studio (`trainbench.model`).
        param_count: Option<u64>,
        /// `null` where the worker could not count them on a person's own
        /// model (MFU is then not measured).
        flops_per_sample: Option<f64>,
        /// How `flops_per_sample` was obtained, where the worker counted it on
        /// the model (a library model: PyTorch's `FlopCounterMode` over one
        /// forward and backward); absent: the catalogue's analytical count.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flops_method: Option<String>,
        precision: String,
        /// What the precision means in this framework, in words.
        precision_in_effect: String,
        /// How the step runs: eager, `torch.compile`, a `tf.function` graph,
        /// XLA, `jax.jit` (absent from workers that predate the field).
        #[serde(default)]
        execution: Option<String>,
        /// Processes or devices training together (data parallel); 1 if absent.
        #[serde(default)]
        world_size: Option<u32>,
        batch_size: u64,
        total_steps: u64,
        threads: u32,
        /// The environment variables of the frameworks' own families
        /// (`spec::env`) in the worker's environment, set by the run or
        /// inherited: what it ran with (absent from older workers).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        settings_env: Vec<(String, String)>,
        data: DataInfo,
        /// Tokens one sample trains on, where only the worker knows its model
        /// to be a language model (a Hugging Face decoder, `hf:TYPE`): its
        /// sequence length, each position predicting the next token. Absent
        /// where the spec says it (a catalogue decoder, a file model fed
        /// `tokens:N`) or where samples are not token sequences.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens_per_sample: Option<u64>,
        /// When training starts (after model and data set-up): time-to-accuracy
        /// is measured from here.
        train_start_ns: u64,
        t_ns: u64,
    },
    /// The first optimizer step has finished (after a device synchronisation).
    FirstStep {
        /// From the worker process's start (kernel start time, 10 ms resolution)
        /// to the end of the first step: loading, set-up, graph capture, compile.
        /// `null` where the process start time cannot be read.
        since_process_start_s: Option<f64>,
        /// From the start of training to the end of the first step.
        since_train_start_s: f64,
        /// Compilation alone, where the framework compiles ahead of the step
        /// and it can be timed on its own (JAX's lower + compile, a traced
        /// `tf.function`); otherwise null and inside `since_train_start_s`.
        #[serde(default)]
        compile_s: Option<f64>,
        t_ns: u64,
    },
    /// A timing window: `steps` consecutive optimizer steps, timed between two
    /// device synchronisations. Evaluation never falls inside a window.
    Window {
        index: u64,
        first_step: u64,
        steps: u64,
        samples: u64,
        start_ns: u64,
        end_ns: u64,
        loss_mean: f64,
        /// The learning rate at the window's last step; `null` where a
        /// person's training script did not pass one.
        lr: Option<f64>,
    },
    /// A periodic evaluation on the held-out split.
    Eval {
        step: u64,
        epoch: f64,
        /// Since `train_start_ns`, including first-step compile and earlier evals.
        elapsed_s: f64,
        accuracy: f64,
        /// The held-out loss; `null` where a person's training script
        /// reported an accuracy alone.
        loss: Option<f64>,
        samples: u64,
        t_ns: u64,
    },
    /// Peak memory, with the measure named.
    Memory {
        device: String,
        /// `allocator` (framework allocator peak on an accelerator) or
        /// `process_rss` (the worker's peak resident set, VmHWM).
        source: String,
        peak_bytes: u64,
        /// Allocator peak of reserved (cached) memory, where there is one.
        reserved_peak_bytes: Option<u64>,
    },
    /// The step breakdown, after the last timed window and evaluation.
    Breakdown(StepTimings),
    /// The operator profile, after the breakdown, when the run asked for one.
    Profile(OperatorProfile),
    /// Terminal: the run finished.
    Done {
        steps: u64,
        samples: u64,
        /// `completed` or `target_reached`.
        reason: String,
        /// The dynamic loss scale at the end, where loss scaling ran
        /// (amp-fp16); absent otherwise and from workers that predate it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        loss_scale: Option<f64>,
        /// Recompilations of the training step after step 1, where the
        /// framework compiles and counts them; absent otherwise.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        compiles: Option<CompileCount>,
        t_ns: u64,
    },
    /// Terminal: the run failed.
    Error {
        class: ErrorClass,
        /// The spec field at fault, for `bad_config` and some `unsupported`.
        field: Option<String>,
        message: String,
        t_ns: u64,
    },
}

impl Event {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"event":"error","class":"internal","field":null,"message":"event not serialisable: {e}","t_ns":0}}"#)
        })
    }

    /// Parses one line of worker output; `None` for log text.
    pub fn parse_line(line: &str) -> Option<Event> {
        let trimmed = line.trim();
        if !trimmed.starts_with('{') {
            return None;
        }
        serde_json::from_str(trimmed).ok()
    }

    /// Why a line that names a protocol event (a JSON object with an
    /// `"event"` tag) does not parse as one; `None` for events and for log
    /// text. A worker bug, shown as such instead of passing for log text.
    pub fn malformed(line: &str) -> Option<String> {
        let trimmed = line.trim();
        if !trimmed.starts_with('{') {
            return None;
        }
        let value: serde_json::Value = serde_json::from_str(trimmed).ok()?;
        let tag = value.get("event")?.as_str()?.to_owned();
        match serde_json::from_value::<Event>(value) {
            Ok(_) => None,
            Err(e) => Some(format!("a malformed `{tag}` event from the worker ({e})")),
        }
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self, Event::Done { .. } | Event::Error { .. })
    }

    /// Optimizer steps finished when this event was printed: a window covers
    /// steps `first_step ..= first_step + steps - 1` (steps count from 1),
    /// `done` carries the total. `None` for events that say nothing of it.
    /// Every live view (the CLI's bar, the desktop app) counts with this.
    pub fn steps_finished(&self) -> Option<u64> {
        match self {
            Event::Window {
                first_step, steps, ..
            } => Some((first_step + steps).saturating_sub(1)),
            Event::FirstStep { .. } => Some(1),
            Event::Done { steps, .. } => Some(*steps),
            _ => None,
        }
    }

    /// A window's samples and clock times (what throughput is computed
    /// from); `None` for every other event.
    pub fn window_timing(&self) -> Option<crate::stats::WindowTiming> {
        match *self {
            Event::Window {
                samples,
                start_ns,
                end_ns,
                ..
            } => Some(crate::stats::WindowTiming {
                samples,
                start_ns,
                end_ns,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_finished_counts_from_one() {
        // Step 1 is timed alone (first_step); the first window then covers
        // steps 2..=6, as harness.py and the tch worker number them.
        let window = |first_step, steps| Event::Window {
            index: 0,
            first_step,
            steps,
            samples: steps * 8,
            start_ns: 1,
            end_ns: 2,
            loss_mean: 1.0,
            lr: Some(1e-3),
        };
        assert_eq!(window(2, 5).steps_finished(), Some(6));
        assert_eq!(window(7, 4).steps_finished(), Some(10));
        let done = Event::Done {
            steps: 10,
            samples: 80,
            reason: "completed".into(),
            loss_scale: None,
            compiles: None,
            t_ns: 3,
        };
        assert_eq!(done.steps_finished(), Some(10));
        let w = window(2, 5).window_timing().unwrap();
        assert_eq!((w.samples, w.start_ns, w.end_ns), (40, 1, 2));
        assert!(done.window_timing().is_none());
        let first = Event::FirstStep {
            since_process_start_s: Some(1.0),
            since_train_start_s: 0.5,
            compile_s: None,
            t_ns: 1,
        };
        assert_eq!(first.steps_finished(), Some(1));
    }

    #[test]
    fn events_round_trip_as_lines() {
        let e = Event::Window {
            index: 3,
            first_step: 31,
            steps: 10,
            samples: 640,
            start_ns: 1,
            end_ns: 2,
            loss_mean: 0.5,
            lr: Some(1e-3),
        };
        let line = e.to_line();
        assert!(line.starts_with(r#"{"event":"window""#), "{line}");
        assert_eq!(Event::parse_line(&line), Some(e));
        assert_eq!(Event::parse_line("some log text"), None);
        assert_eq!(Event::parse_line("{not json"), None);
        assert_eq!(Event::malformed("some log text"), None);
        assert_eq!(Event::malformed(&line), None);
        assert_eq!(Event::malformed(r#"{"level": "info"}"#), None);
        let bad = Event::malformed(r#"{"event": "breakdown", "whole_step_s": "fast"}"#).unwrap();
        assert!(
            bad.starts_with("a malformed `breakdown` event from the worker ("),
            "{bad}"
        );
    }

    #[test]
    fn error_class_names_are_stable() {
        let e = Event::Error {
            class: ErrorClass::BadConfig,
            field: Some("steps".into()),
            message: "m".into(),
            t_ns: 0,
        };
        assert!(e.to_line().contains(r#""class":"bad_config""#));
    }
}

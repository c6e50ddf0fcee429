//! What the live view of one queued run shows, and what its watchers have
//! been sent: its figures, curves, evaluations, telemetry (thinned to a
//! bounded number of points) and the tail of its log.

use serde::Serialize;
use trainbench_core::summary::RunStatus;

use crate::live_telemetry::{LiveTelemetry, Thinning};

/// Log lines kept per live run.
pub(crate) const LOG_TAIL: usize = 200;

/// One point of a live run's curves; times in seconds since the worker started.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct LivePoint {
    pub t_s: f64,
    pub step: u64,
    pub samples_per_s: f64,
    pub loss: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct LiveEval {
    pub t_s: f64,
    pub step: u64,
    pub accuracy: f64,
}

/// Where a run is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Queued,
    Starting,
    Training,
    Finished,
}

/// A live run's figures, replaced (not appended) by each update.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct LiveFigures {
    pub phase: Phase,
    /// The stored status once finished (`completed`, `failed`, …).
    pub status: Option<RunStatus>,
    pub reason: Option<String>,
    pub step: u64,
    pub total_steps: Option<u64>,
    /// The last window's throughput, samples/s.
    pub current_samples_per_s: Option<f64>,
    /// Median of the windows after warm-up so far (the summary's rule), samples/s.
    pub steady_samples_per_s: Option<f64>,
}

/// Everything the live view of one run shows.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct LiveRun {
    pub run_id: i64,
    pub label: String,
    #[serde(flatten)]
    pub figures: LiveFigures,
    pub points: Vec<LivePoint>,
    pub evals: Vec<LiveEval>,
    pub telemetry: Vec<LiveTelemetry>,
    pub log: Vec<String>,
    /// Log lines dropped from the front (the tail is kept).
    #[serde(skip)]
    #[specta(skip)]
    pub(crate) log_dropped: usize,
    /// How `telemetry` is kept to a bounded number of points.
    #[serde(skip)]
    #[specta(skip)]
    pub(crate) thinning: Thinning,
}

/// What changed since the last update: the figures, and the points, evaluations,
/// samples and log lines that are new (the UI appends them).
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct LiveUpdate {
    pub run_id: i64,
    #[serde(flatten)]
    pub figures: LiveFigures,
    pub points: Vec<LivePoint>,
    pub evals: Vec<LiveEval>,
    pub telemetry: Vec<LiveTelemetry>,
    /// `telemetry` is the whole series, older points thinned: it replaces
    /// what the window holds instead of being appended.
    pub telemetry_replace: bool,
    pub log: Vec<String>,
}

/// One entry of the queue as listed.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct QueueEntry {
    pub run_id: i64,
    pub label: String,
    pub phase: Phase,
    pub status: Option<RunStatus>,
    pub step: u64,
    pub total_steps: Option<u64>,
}

impl LiveRun {
    pub(crate) fn new(run_id: i64, label: String) -> LiveRun {
        LiveRun {
            run_id,
            label,
            figures: LiveFigures {
                phase: Phase::Queued,
                status: None,
                reason: None,
                step: 0,
                total_steps: None,
                current_samples_per_s: None,
                steady_samples_per_s: None,
            },
            points: Vec::new(),
            evals: Vec::new(),
            telemetry: Vec::new(),
            log: Vec::new(),
            log_dropped: 0,
            thinning: Thinning::default(),
        }
    }

    pub(crate) fn finished(&self) -> bool {
        self.figures.phase == Phase::Finished
    }

    pub(crate) fn update_from(&self, sent: &Sent) -> LiveUpdate {
        let replace = sent.telemetry_generation != self.thinning.generation;
        LiveUpdate {
            run_id: self.run_id,
            figures: self.figures.clone(),
            points: self.points[sent.points.min(self.points.len())..].to_vec(),
            evals: self.evals[sent.evals.min(self.evals.len())..].to_vec(),
            telemetry: if replace {
                self.telemetry.clone()
            } else {
                self.telemetry[sent.telemetry.min(self.telemetry.len())..].to_vec()
            },
            telemetry_replace: replace,
            log: self.log[sent
                .log
                .saturating_sub(self.log_dropped)
                .min(self.log.len())..]
                .to_vec(),
        }
    }

    pub(crate) fn entry(&self) -> QueueEntry {
        QueueEntry {
            run_id: self.run_id,
            label: self.label.clone(),
            phase: self.figures.phase,
            status: self.figures.status,
            step: self.figures.step,
            total_steps: self.figures.total_steps,
        }
    }
}

/// How much of a live run its watchers have been sent (log lines counted
/// from the first ever, dropped ones included).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Sent {
    pub(crate) points: usize,
    pub(crate) evals: usize,
    pub(crate) telemetry: usize,
    /// The telemetry's thinning generation when it was sent.
    pub(crate) telemetry_generation: u64,
    pub(crate) log: usize,
}

pub(crate) fn push_log(l: &mut LiveRun, line: String) {
    l.log.push(line);
    if l.log.len() > LOG_TAIL * 2 {
        let drop = l.log.len() - LOG_TAIL;
        l.log.drain(..drop);
        l.log_dropped += drop;
    }
}

//! The job types the use cases share: a queued run as the run loop takes
//! it, how it ended, and a combination that cannot run. A leaf: it imports
//! no other module of this crate, so planning, the run loop and remote
//! execution all use it without importing each other.

use serde::{Deserialize, Serialize};
use trainbench_core::spec::CheckedSpec;
use trainbench_remote::RemoteTarget;
use trainbench_runner::WorkerCommand;

pub use trainbench_runner::Finished;

/// A run the sweep queued (stored as `queued`), as the run loop takes it.
#[derive(Debug, Clone)]
pub struct Job {
    pub run_id: i64,
    pub spec: CheckedSpec,
    pub label: String,
    /// Index into the plan's configurations.
    pub config: usize,
    pub worker: WorkerCommand,
    /// Resident memory its worker may use (the sweep's `memory_limit`).
    pub memory_limit_bytes: Option<u64>,
    /// The remote host it runs on; `None`: this machine.
    pub remote: Option<RemoteTarget>,
}

/// A combination that cannot run, and why (the field, the value, what is allowed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Rejected {
    /// The combination, or `all` for a setting every combination shares.
    pub label: String,
    pub field: String,
    pub message: String,
}

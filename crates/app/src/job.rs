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

/// A combination that cannot run, and why (the field, the value, what is
/// allowed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Rejected {
    /// The combination refused; `None` when the setting is one every
    /// combination shares, so that nothing of the sweep can run.
    pub label: Option<String>,
    pub field: String,
    pub message: String,
}

impl Rejected {
    /// One combination refused (the others may run).
    pub fn combination(label: impl Into<String>, field: &str, message: String) -> Rejected {
        Rejected {
            label: Some(label.into()),
            field: field.into(),
            message,
        }
    }

    /// A setting every combination shares refused: nothing can run.
    pub fn shared(field: &str, message: String) -> Rejected {
        Rejected {
            label: None,
            field: field.into(),
            message,
        }
    }

    /// Whether every combination is refused with it.
    pub fn is_shared(&self) -> bool {
        self.label.is_none()
    }
}

impl std::fmt::Display for Rejected {
    /// `LABEL: MESSAGE`, or the message alone for a shared setting.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.label {
            Some(label) => write!(f, "{label}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_refusal_has_no_label_and_says_only_why() {
        let all = Rejected::shared("steps", "give steps or epochs".into());
        assert!(all.is_shared());
        assert_eq!(all.to_string(), "give steps or epochs");
        let json = serde_json::to_value(&all).unwrap();
        assert_eq!(json["label"], serde_json::Value::Null);
        let one = Rejected::combination("tch fp16", "precision", "fp16 needs a GPU".into());
        assert!(!one.is_shared());
        assert_eq!(one.to_string(), "tch fp16: fp16 needs a GPU");
        let e = crate::AppError::from(one);
        assert_eq!(e.code(), crate::ErrorCode::BadInput);
        assert_eq!(e.field(), Some("precision"));
    }
}

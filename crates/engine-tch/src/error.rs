//! The worker's one error type: it becomes the protocol's `error` event.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

use trainbench_core::protocol::ErrorClass;
use trainbench_core::spec::SpecError;

#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct WorkerError {
    pub class: ErrorClass,
    pub field: Option<String>,
    pub message: String,
}

impl WorkerError {
    pub fn bad_config(field: &str, message: impl Into<String>) -> Self {
        WorkerError {
            class: ErrorClass::BadConfig,
            field: Some(field.to_owned()),
            message: message.into(),
        }
    }

    pub fn unsupported(field: &str, message: impl Into<String>) -> Self {
        WorkerError {
            class: ErrorClass::Unsupported,
            field: Some(field.to_owned()),
            message: message.into(),
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        WorkerError {
            class: ErrorClass::Internal,
            field: None,
            message: message.into(),
        }
    }

    /// Classifies a libtorch error by its message (libtorch has no error codes):
    /// allocation failures are `oom`, everything else `internal`.
    pub fn from_torch(message: &str) -> Self {
        let lower = message.to_lowercase();
        let oom = lower.contains("out of memory")
            || lower.contains("can't allocate memory")
            || lower.contains("cannot allocate memory");
        let first_line = message.lines().next().unwrap_or(message).trim().to_owned();
        if oom {
            WorkerError {
                class: ErrorClass::Oom,
                field: None,
                message: format!("out of memory: {first_line}"),
            }
        } else {
            WorkerError::internal(format!("libtorch error: {first_line}"))
        }
    }
}

impl From<SpecError> for WorkerError {
    fn from(e: SpecError) -> Self {
        WorkerError::bad_config(&e.field.clone(), e.to_string())
    }
}

impl From<tch::TchError> for WorkerError {
    fn from(e: tch::TchError) -> Self {
        WorkerError::from_torch(&e.to_string())
    }
}

impl From<crate::shim::ShimError> for WorkerError {
    fn from(e: crate::shim::ShimError) -> Self {
        WorkerError::from_torch(&e.0)
    }
}

static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Runs `f`, turning a panic (tch panics on libtorch errors) into a typed error
/// without printing a panic trace.
pub fn guarded<T>(f: impl FnOnce() -> Result<T, WorkerError>) -> Result<T, WorkerError> {
    panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "unknown panic".to_owned()
        };
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        if let Ok(mut slot) = LAST_PANIC.lock() {
            *slot = Some(format!("{msg}{location}"));
        }
    }));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    let _ = panic::take_hook();
    match result {
        Ok(r) => r,
        Err(_) => {
            let msg = LAST_PANIC
                .lock()
                .ok()
                .and_then(|mut s| s.take())
                .unwrap_or_else(|| "unknown panic".into());
            Err(WorkerError::from_torch(&msg.replace("\\n", "\n")))
        }
    }
}

//! The worker's one error type: it becomes the protocol's `error` event.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

use trainbench_core::protocol::ErrorClass;
use trainbench_core::spec::SpecError;
use trainbench_core::text::panic_message;

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

    /// The same error, saying which part of the worker it came from
    /// ("device synchronisation on cuda:0 failed: …"): on a GPU the CUDA
    /// paths (autocast, loss scaling, synchronisation, allocator statistics)
    /// each name themselves.
    pub fn during(mut self, what: &str) -> Self {
        self.message = format!("{what} failed: {}", self.message);
        self
    }

    /// Classifies a libtorch error by its message (libtorch has no error codes):
    /// allocation failures are `oom`, everything else `internal`.
    pub fn from_torch(message: &str) -> Self {
        let lower = message.to_lowercase();
        let oom = lower.contains("out of memory")
            || lower.contains("can't allocate memory")
            || lower.contains("cannot allocate memory");
        let first_line = clean_torch_message(message);
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

/// The first line of a libtorch error, without tch's `unwrap` wrapper and
/// libtorch's `[enforce fail at file:line] cond.` prefix.
fn clean_torch_message(raw: &str) -> String {
    let mut m = raw.trim();
    if let Some(i) = m.find("Torch(\"") {
        m = &m[i + 7..];
    }
    let mut line = m
        .lines()
        .next()
        .unwrap_or(m)
        .trim()
        .trim_end_matches("\")")
        .to_owned();
    if line.starts_with("[enforce fail at") {
        if let Some(i) = line.find("] ") {
            line = line[i + 2..].to_owned();
        }
        if let Some(rest) = line.strip_prefix("err == 0. ") {
            line = rest.to_owned();
        }
    }
    line
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
        let msg = panic_message(info.payload())
            .unwrap_or("unknown panic")
            .to_owned();
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        // Where it panicked is for developers: stderr (log text), not the event.
        eprintln!("trainbench-worker-tch: libtorch call failed{location}");
        if let Ok(mut slot) = LAST_PANIC.lock() {
            *slot = Some(msg);
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

/// Runs a libtorch call that panics on failure (tch's non-`f_` calls, such
/// as `Cuda::synchronize`), the panic becoming an error that names `what`.
pub fn caught<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, WorkerError> {
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let msg = LAST_PANIC
            .lock()
            .ok()
            .and_then(|mut s| s.take())
            .or_else(|| panic_message(payload.as_ref()).map(str::to_owned))
            .unwrap_or_else(|| "unknown panic".into());
        WorkerError::from_torch(&msg.replace("\\n", "\n")).during(what)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_cuda_path_names_itself() {
        let e = guarded(|| {
            caught::<()>("device synchronisation on cuda:0", || {
                panic!("Torch(\"CUDA error: an illegal memory access was encountered\")")
            })
        })
        .unwrap_err();
        assert_eq!(e.class, ErrorClass::Internal);
        assert_eq!(
            e.message,
            "device synchronisation on cuda:0 failed: libtorch error: CUDA error: an illegal memory access was encountered"
        );
        let e = WorkerError::from_torch("CUDA out of memory. Tried to allocate 2 GiB")
            .during("loss scaling (amp-fp16)");
        assert_eq!(e.class, ErrorClass::Oom);
        assert!(
            e.message
                .starts_with("loss scaling (amp-fp16) failed: out of memory"),
            "{}",
            e.message
        );
    }

    #[test]
    fn torch_messages_are_cleaned_and_classified() {
        let raw = "called `Result::unwrap()` on an `Err` value: Torch(\"[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 12 bytes.\\nException raised from x\")";
        let e = WorkerError::from_torch(&raw.replace("\\n", "\n"));
        assert_eq!(e.class, ErrorClass::Oom);
        assert_eq!(e.message, "out of memory: DefaultCPUAllocator: can't allocate memory: you tried to allocate 12 bytes.");
        let e = WorkerError::from_torch("Torch(\"shape mismatch\")");
        assert_eq!(
            (e.class, e.message.as_str()),
            (ErrorClass::Internal, "libtorch error: shape mismatch")
        );
    }
}

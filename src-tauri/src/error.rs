//! Errors as the UI receives them: `{code, message}`, shown where they happened.

use serde::Serialize;
use trainbench_store::StoreError;

/// An error crossing to the UI. `code` is stable and machine-readable
/// (`bad_input`, `not_found`, `run_active`, `io`, `store`, `busy`,
/// `internal`); `message` is for people and names the field, the value and
/// what is allowed where the input was wrong.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn new(code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            code: code.into(),
            message: message.into(),
        }
    }

    pub fn bad_input(field: &str, value: impl std::fmt::Display, allowed: &str) -> ApiError {
        ApiError::new(
            "bad_input",
            format!("{field} = {value} is not allowed: expected {allowed}"),
        )
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new("internal", message)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        let code = match &e {
            StoreError::NotFound { .. } => "not_found",
            StoreError::Invalid { .. } | StoreError::SessionFile(_) | StoreError::Compare(_) => {
                "bad_input"
            }
            StoreError::RunActive { .. } => "run_active",
            _ => "store",
        };
        ApiError::new(code, e.to_string())
    }
}

impl From<trainbench_runner::sweep::Rejected> for ApiError {
    fn from(r: trainbench_runner::sweep::Rejected) -> Self {
        let message = if r.label == "all" {
            r.message
        } else {
            format!("{}: {}", r.label, r.message)
        };
        ApiError::new("bad_input", message)
    }
}

impl From<trainbench_report::ReportError> for ApiError {
    fn from(e: trainbench_report::ReportError) -> Self {
        ApiError::new("report", e.to_string())
    }
}

impl From<std::io::Error> for ApiError {
    fn from(e: std::io::Error) -> Self {
        ApiError::new("io", e.to_string())
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

//! Errors as the UI receives them: `{code, message}`, shown where they happened.

use serde::Serialize;
use trainbench_app::AppError;

/// An error crossing to the UI. `code` is stable and machine-readable
/// (the app layer's: `bad_input`, `not_found`, `run_active`, `store`,
/// `report`, `environment`, `busy`, `internal`; and `io`); `message` is for
/// people and names the field, the value and what is allowed where the input
/// was wrong.
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

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new("internal", message)
    }
}

impl From<AppError> for ApiError {
    fn from(e: AppError) -> Self {
        ApiError::new(e.code(), e.to_string())
    }
}

impl From<std::io::Error> for ApiError {
    fn from(e: std::io::Error) -> Self {
        ApiError::new("io", e.to_string())
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

//! Errors as the UI receives them: `{code, message}`, shown where they happened.

use serde::Serialize;
use trainbench_app::{AppError, ErrorCode};

/// An error crossing to the UI. `code` is one of the app layer's stable
/// codes (a union type in TypeScript, so the UI cannot test for a code that
/// does not exist); `message` is for people and names the field, the value
/// and what is allowed where the input was wrong; `field` is that field.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub field: Option<String>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
            field: None,
        }
    }

    /// Input a person fixes, naming the field.
    pub fn bad_input(field: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            code: ErrorCode::BadInput,
            message: message.into(),
            field: Some(field.into()),
        }
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::Internal, message)
    }
}

impl From<AppError> for ApiError {
    fn from(e: AppError) -> Self {
        ApiError {
            code: e.code(),
            message: e.to_string(),
            field: e.field().map(str::to_owned),
        }
    }
}

impl From<std::io::Error> for ApiError {
    fn from(e: std::io::Error) -> Self {
        ApiError::new(ErrorCode::Io, e.to_string())
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

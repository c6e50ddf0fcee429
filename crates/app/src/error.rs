//! One error type for every use case. Each shell decides how to show it: the
//! CLI as an exit code (2 for input a person fixes, 1 otherwise) with the
//! field, the app as `{code, message}`. The field, the value and what is
//! allowed are in the message of every bad-input error.

use serde::{Deserialize, Serialize};
use trainbench_core::compare::CompareError;
use trainbench_core::spec::SpecError;
use trainbench_remote::RemoteError;
use trainbench_report::ReportError;
use trainbench_runner::envs::EnvError;
use trainbench_store::StoreError;

pub use crate::job::Rejected;

/// The stable, machine-readable kind of an error, as the shells hand it on
/// (the CLI's `--json` errors, the desktop's `{code, message}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum ErrorCode {
    /// Input a person fixes; the error names the field.
    BadInput,
    /// Something asked for by id or name is not there.
    NotFound,
    /// A run that is queued or running cannot be changed.
    RunActive,
    Store,
    Report,
    Environment,
    /// Something must finish first.
    Busy,
    Cancelled,
    /// The database could not be opened (the desktop's own: it then runs on
    /// an empty one and asks for another file).
    Database,
    /// A file the shell itself reads or writes (settings).
    Io,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadInput => "bad_input",
            ErrorCode::NotFound => "not_found",
            ErrorCode::RunActive => "run_active",
            ErrorCode::Store => "store",
            ErrorCode::Report => "report",
            ErrorCode::Environment => "environment",
            ErrorCode::Busy => "busy",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Database => "database",
            ErrorCode::Io => "io",
            ErrorCode::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Input a person can fix; `message` names the field, the value and what
    /// is allowed.
    #[error("{message}")]
    BadInput { field: String, message: String },
    /// Something asked for by id or name is not there.
    #[error("{what} {id} does not exist")]
    NotFound { what: String, id: String },
    #[error(transparent)]
    Store(StoreError),
    #[error(transparent)]
    Report(ReportError),
    #[error(transparent)]
    Environment(EnvError),
    /// The studio is doing something that must finish first.
    #[error("{0}")]
    Busy(String),
    /// The user cancelled what was going on (a batch search).
    #[error("cancelled by the user")]
    Cancelled,
    #[error("{0}")]
    Internal(String),
}

pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    /// `field = value is not allowed: expected allowed`.
    pub fn bad_input(field: &str, value: impl std::fmt::Display, allowed: &str) -> AppError {
        AppError::BadInput {
            field: field.to_owned(),
            message: format!("{field} = {value} is not allowed: expected {allowed}"),
        }
    }

    /// A bad-input error with a message of its own (it still names the field).
    pub fn bad(field: &str, message: impl Into<String>) -> AppError {
        AppError::BadInput {
            field: field.to_owned(),
            message: message.into(),
        }
    }

    /// The stable, machine-readable kind of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            AppError::BadInput { .. } => ErrorCode::BadInput,
            AppError::NotFound { .. } => ErrorCode::NotFound,
            AppError::Store(StoreError::RunActive { .. }) => ErrorCode::RunActive,
            AppError::Store(_) => ErrorCode::Store,
            AppError::Report(_) => ErrorCode::Report,
            AppError::Environment(_) => ErrorCode::Environment,
            AppError::Busy(_) => ErrorCode::Busy,
            AppError::Cancelled => ErrorCode::Cancelled,
            AppError::Internal(_) => ErrorCode::Internal,
        }
    }

    /// The input field at fault, for errors a person fixes by changing input
    /// (bad input, a missing id or name, a run that is still active).
    pub fn field(&self) -> Option<&str> {
        match self {
            AppError::BadInput { field, .. } => Some(field),
            AppError::NotFound { what, .. } => Some(what),
            AppError::Store(StoreError::RunActive { .. }) => Some("runs"),
            // A file that cannot be written where asked (`output`).
            AppError::Report(ReportError::Invalid { field, .. }) => Some(field),
            _ => None,
        }
    }
}

impl From<StoreError> for AppError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { what, id } => AppError::NotFound {
                what: what.to_owned(),
                id,
            },
            StoreError::Invalid { field, .. } => AppError::bad(field, e.to_string()),
            StoreError::SessionFile(ref f) => AppError::bad("file", f.to_string()),
            StoreError::Compare(c) => c.into(),
            other => AppError::Store(other),
        }
    }
}

impl From<CompareError> for AppError {
    fn from(e: CompareError) -> Self {
        let field = match e {
            CompareError::TooFew { .. } => "ids",
            CompareError::BaselineNotCompared(_) => "baseline",
        };
        AppError::bad(field, e.to_string())
    }
}

impl From<SpecError> for AppError {
    fn from(e: SpecError) -> Self {
        AppError::bad(&e.field, e.to_string())
    }
}

impl From<EnvError> for AppError {
    fn from(e: EnvError) -> Self {
        match &e {
            EnvError::Bad { field, .. } => AppError::bad(field, e.to_string()),
            _ => AppError::Environment(e),
        }
    }
}

impl From<trainbench_files::FileError> for AppError {
    /// A path the field may not name is bad input; a refused write (no
    /// space, no permission) is the machine's, said as the system said it.
    fn from(e: trainbench_files::FileError) -> Self {
        match e.field() {
            Some(field) => AppError::bad(field, e.to_string()),
            None => AppError::Internal(e.to_string()),
        }
    }
}

impl From<ReportError> for AppError {
    fn from(e: ReportError) -> Self {
        AppError::Report(e)
    }
}

impl From<Rejected> for AppError {
    /// A combination that cannot run: the message says which (unless the
    /// setting is shared by all of them).
    fn from(r: Rejected) -> Self {
        AppError::bad(&r.field, r.to_string())
    }
}

impl From<RemoteError> for AppError {
    fn from(e: RemoteError) -> Self {
        match e {
            RemoteError::BadInput { field, message } => AppError::BadInput { field, message },
            RemoteError::Store(s) => s.into(),
            RemoteError::Internal(m) => AppError::Internal(m),
        }
    }
}

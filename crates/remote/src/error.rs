//! What can go wrong reaching a host, typed the way the application layer
//! shows errors: input a person fixes (with the field at fault), the
//! store's own errors, and the rest (ssh, the host, the kit) in words.

use trainbench_core::spec::SpecError;
use trainbench_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// Input a person can fix; `message` names the field, the value and
    /// what is allowed.
    #[error("{message}")]
    BadInput { field: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(String),
}

pub type RemoteResult<T> = Result<T, RemoteError>;

impl From<SpecError> for RemoteError {
    fn from(e: SpecError) -> Self {
        RemoteError::BadInput {
            field: e.field.clone(),
            message: e.to_string(),
        }
    }
}

impl From<trainbench_files::FileError> for RemoteError {
    /// A path the field may not name is bad input; a refused write is the
    /// machine's, said as the system said it.
    fn from(e: trainbench_files::FileError) -> Self {
        match e.field() {
            Some(field) => RemoteError::BadInput {
                field: field.to_owned(),
                message: e.to_string(),
            },
            None => RemoteError::Internal(e.to_string()),
        }
    }
}

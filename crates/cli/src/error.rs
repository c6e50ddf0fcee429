//! The CLI's errors: input a person fixes (exit 2, the field named) or a
//! failure (exit 1). Every use case's [`AppError`] maps onto one of them.

use trainbench_app::envs::EnvError;
use trainbench_app::sweep::Rejected;
use trainbench_app::AppError;
use trainbench_core::compare::CompareError;
use trainbench_core::spec::SpecError;

#[derive(Debug)]
pub enum CliError {
    BadInput { field: String, message: String },
    Failed(String),
}

pub fn bad(field: &str, message: String) -> CliError {
    CliError::BadInput {
        field: field.to_owned(),
        message,
    }
}

impl From<AppError> for CliError {
    fn from(e: AppError) -> Self {
        match e.field() {
            Some(field) => CliError::BadInput {
                field: field.to_owned(),
                message: e.to_string(),
            },
            None => CliError::Failed(e.to_string()),
        }
    }
}

/// Errors of the layers below, through the app's one mapping.
macro_rules! through_app {
    ($($t:ty),*) => {$(
        impl From<$t> for CliError {
            fn from(e: $t) -> Self {
                AppError::from(e).into()
            }
        }
    )*};
}
through_app!(SpecError, EnvError, Rejected, CompareError);

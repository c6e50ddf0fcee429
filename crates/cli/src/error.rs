//! The CLI's errors: input a person fixes (exit 2, the field named), a
//! failure (exit 1), or a failure after part of a streamed document was
//! written (exit 1, said on stderr only). Every use case's [`AppError`] maps
//! onto one of them.

use trainbench_app::envs::EnvError;
use trainbench_app::sweep::Rejected;
use trainbench_app::AppError;
use trainbench_core::compare::CompareError;
use trainbench_core::spec::SpecError;

#[derive(Debug)]
pub enum CliError {
    BadInput {
        field: String,
        message: String,
    },
    Failed(String),
    /// A failure after part of a streamed document was written (exit 1):
    /// said on stderr only, so that nothing follows the part on stdout.
    Unfinished(String),
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

/// Arguments clap refused, as the documented bad-input error: the field is
/// the flag or argument at fault (`--batch-size` as `batch_size`), the
/// message clap's first line. `--help` and `--version` are not errors.
pub fn argument_error(e: &clap::Error) -> Option<CliError> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        return None;
    }
    let name = |arg: &str| {
        // `--batch-size <B>` → batch_size, `<NEW_NAME>` → new_name.
        let arg = arg.trim_start_matches(['-', '<']);
        arg.split([' ', '=', '<', '>'])
            .next()
            .unwrap_or(arg)
            .replace('-', "_")
            .to_lowercase()
    };
    let invalid = e
        .get(ContextKind::InvalidArg)
        .or_else(|| e.get(ContextKind::InvalidSubcommand));
    let (field, missing) = match invalid {
        Some(ContextValue::String(arg)) => (name(arg), String::new()),
        // Required arguments not given: the first is the field, all are said.
        Some(ContextValue::Strings(args)) if !args.is_empty() => {
            (name(&args[0]), format!(" {}", args.join(", ")))
        }
        _ => ("arguments".to_owned(), String::new()),
    };
    let rendered = e.render().to_string();
    let said = rendered
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ");
    // `invalid value '-3' for '--batch-cap <N>': -3 is not in 0..=…` as
    // `batch_cap = -3 is not allowed: -3 is not in 0..=…`.
    let message = match e.get(ContextKind::InvalidValue) {
        Some(ContextValue::String(value)) => {
            let why = said.rsplit_once("': ").map_or(said, |(_, why)| why);
            let value = if value.is_empty() { "(empty)" } else { value };
            format!("{field} = {value} is not allowed: {why}")
        }
        _ => format!("{field}: {said}{missing}"),
    };
    Some(CliError::BadInput { field, message })
}

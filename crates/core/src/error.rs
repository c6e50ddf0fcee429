//! The error every bad value in a run specification or model option becomes.

use std::fmt;

/// A bad value in a run specification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} = {value} is not allowed: expected {allowed}")]
pub struct SpecError {
    pub field: String,
    pub value: String,
    pub allowed: String,
}

impl SpecError {
    pub fn new(field: &str, value: impl fmt::Display, allowed: &str) -> Self {
        SpecError {
            field: field.to_owned(),
            value: value.to_string(),
            allowed: allowed.to_owned(),
        }
    }
}

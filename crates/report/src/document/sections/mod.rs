//! The report's sections, one function each, in the order [`super::report`]
//! lays them out:
//!
//! - `overview`: the title line, the question, the caller's sections, the
//!   configurations;
//! - `results`: the decision matrix, the summary with deltas, scaling
//!   efficiency, warnings, the charts;
//! - `details`: each run's configuration and status, energy and
//!   utilisation, provenance;
//! - `cost`: each run's epoch time and cost per epoch, projected ones said so;
//! - `method`: how the figures were measured, with the price rows used.

mod cost;
mod details;
mod method;
mod overview;
mod results;

pub use overview::question;

use trainbench_core::protocol::OpCategory;

/// A category's column heading in the PDF's narrow profile tables.
fn category_header(c: OpCategory) -> &'static str {
    match c {
        OpCategory::MatmulConv => "matmul, conv",
        OpCategory::NormElementwise => "norm, elementwise",
        OpCategory::Memory => "copies",
        OpCategory::Communication => "comms",
        other => other.label(),
    }
}

pub(crate) use cost::cost;
pub(crate) use details::{energy, profiles, provenance, runs};
pub(crate) use method::method;
pub(crate) use overview::{configurations, extra, the_question, title};
pub(crate) use results::{
    breakdown, charts, decisions, profile_gaps, scaling, speedups, summary, warnings,
};

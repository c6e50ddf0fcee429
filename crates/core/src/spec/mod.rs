//! The run specification: what one worker process trains, and how.
//!
//! A worker receives it as JSON (see `docs/protocol.md`). [`RunSpec::from_json`]
//! parses and validates it; every error names the field, the value and what is
//! allowed, so a person can fix the input without reading code.
//!
//! - [`options`]: the enumerated settings (precision, device, compile, parallel, data).
//! - [`raw`]: [`RawSpec`], the spec as written (loose types, defaults).
//! - [`run`]: [`RunSpec`], the spec validated and typed; [`validate`] makes it.
//! - [`plan`]: the plan a Python worker reads (resolved warm-up, analytical counts).
//! - [`runnable`]: whether a spec can run with a framework on this machine.
//! - [`schedule`]: the sweep order and the learning-rate schedule.
//! - [`schema`]: the worker plan's JSON Schema, which the Python workers check a
//!   plan against.
//! - [`key`]: the configuration keys runs are grouped by.
//! - [`env`]: the environment variables a run sets for its worker (checked, labelled).
//! - `file_model`, `script`: the specs of a model from a person's file and of
//!   a person's training script; `own_data`: the real data sets a person's
//!   model (a file or a library name) can train on, and the checks every data
//!   set makes of a model's input.

pub mod env;
pub mod env_safety;
mod fields;
mod file_model;
pub mod key;
pub mod options;
mod own_data;
pub mod plan;
pub mod raw;
pub mod run;
pub mod runnable;
pub mod schedule;
pub mod schema;
mod script;
pub mod validate;

pub use crate::error::SpecError;
pub use crate::framework::Framework;
pub use key::ConfigKeys;
pub use options::{Compile, DataSource, Device, Parallel, Precision};
pub use plan::breakdown_steps;
pub use plan::default_warmup;
pub use plan::{PlanWarmup, ProfileRule, WorkerPlan};
pub use raw::RawSpec;
pub use runnable::{check_runnable, Machine};
pub use schedule::{interleaved_plan, learning_rate};
pub use validate::{CheckedSpec, Length, RunSpec, DEFAULT_LOADER_WORKERS, MAX_LOADER_WORKERS};

#[cfg(test)]
mod tests;

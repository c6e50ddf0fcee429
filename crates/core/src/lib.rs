//! TrainBench core: the domain every other crate shares.
//!
//! - [`framework`]: the frameworks (libtorch from Rust, PyTorch, TensorFlow, JAX).
//! - [`error`]: [`SpecError`], a bad value with its field and what is allowed.
//! - [`spec`]: the run specification a worker receives, parsed and validated with
//!   errors that name the field, the value and what is allowed.
//! - [`models`]: the model catalogue (ViT, ResNet, BERT and small CPU variants) with
//!   analytical parameter counts and FLOPs per training sample. Workers build the
//!   real networks; their tensor-derived counts must equal these.
//! - [`protocol`]: the JSON-lines events a worker prints (see `docs/protocol.md`).
//! - [`stats`]: medians, confidence intervals and the warm-up rule behind every
//!   throughput the studio shows.
//! - [`breakdown`]: where a step's time goes (data, forward, backward,
//!   communication, optimizer) and how a gap between two runs splits over it.
//! - [`checks`]: the validity checks behind each run's badges.
//! - [`summary`]: a run's summary (throughput, memory, time-to-accuracy, cost,
//!   energy, MFU) exactly as `docs/metrics.md` defines it.
//! - [`reference`]: GPU peaks and default prices shipped in `data/`.
//! - [`record`]: a stored run as plain data (row, detail, windows, evaluations).
//! - [`compare`]: a comparison of runs — intervals, deltas, the winner per
//!   metric, scaling and warnings — shared by the CLI, the app and reports.
//! - [`session`]: saved comparison sessions and the portable session file.
//! - [`acceptance`]: the GPU acceptance checks of `trainbench gpu-check`.
//! - [`tune`]: the search for the best way to train a model here: the space
//!   of candidates, successive halving with these statistics, the budget.
//!
//! This crate is pure: no IO, no tauri, tch, nvml-wrapper or rusqlite (checked by
//! `scripts/check-deps.sh` in CI).

pub mod acceptance;
pub mod batch_search;
pub mod bisect;
pub mod breakdown;
pub mod checks;
pub mod compare;
pub mod downsample;
pub mod error;
pub mod error_class;
pub mod framework;
pub mod gate;
pub mod models;
pub mod profile;
pub mod projection;
pub mod protocol;
pub mod published;
pub mod record;
pub mod reference;
pub mod session;
pub mod spec;
pub mod stats;
pub mod summary;
pub mod telemetry;
pub mod text;
pub mod tune;
pub mod versions;

pub use error::SpecError;
pub use framework::Framework;
pub use models::{ModelConfig, ModelOptions};
pub use protocol::{ErrorClass, Event, PROTOCOL_VERSION};
pub use spec::{DataSource, Device, Precision, RunSpec};

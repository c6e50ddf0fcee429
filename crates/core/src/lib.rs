//! TrainBench core: the domain every other crate shares.
//!
//! - [`framework`]: the frameworks (libtorch from Rust, PyTorch, TensorFlow, JAX).
//! - [`error`]: [`SpecError`], a bad value with its field and what is allowed.
//! - [`spec`]: the run specification a worker receives, parsed and validated with
//!   errors that name the field, the value and what is allowed.
//! - [`models`]: the model catalogue (ViT, ResNet, BERT and small CPU variants) with
//!   analytical parameter counts and FLOPs per training sample. Workers build the
//!   real networks; their tensor-derived counts must equal these.
//! - [`protocol`]: the JSON-lines events a worker prints (see `docs/protocol.md`);
//!   [`events_schema`]: their JSON Schema, committed beside the workers.
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
//! - [`batch_search`]: the largest batch that fits (`--batch-size max`):
//!   doubling from the first batch tried.
//! - [`bisect`]: bisection over a framework's releases: which release first
//!   changed a metric (throughput), by binary search between a good and a bad
//!   release.
//! - [`downsample`]: telemetry of long runs, averaged into time buckets once
//!   the run's summary has been computed from every sample.
//! - [`error_class`]: why a run ended in error: the classes a worker sends in
//!   its `error` event, and the one the runner adds for a worker that died
//!   without one.
//! - [`gate`]: the performance gate of `trainbench gate`: whether a candidate
//!   is slower than its baseline by more than a threshold, on this machine.
//! - [`profile`]: the operator profile's figures: self time per category per
//!   sample, and how the gap between two runs splits over the categories
//!   (`explain`).
//! - [`projection`]: what a measured run would do on hardware it did not run on
//!   — always a band, always labelled projected, never mixed with measurements.
//! - [`published`]: published training results (`data/published_results.csv`):
//!   one row per result as its source states it.
//! - [`telemetry`]: one telemetry sample, as the probe takes it and the store
//!   keeps it.
//! - [`text`]: text from elsewhere (workers, hosts, imported files) made safe
//!   to keep and to show: cut to a size with a marker, and control characters
//!   escaped before they reach a terminal (where they could move the cursor,
//!   change colours or rewrite what was printed before).
//! - [`versions`]: framework versions as an axis (`jax==0.7.2`), and the
//!   releases each Python worker is claimed to run on unchanged.
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
pub mod events_schema;
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

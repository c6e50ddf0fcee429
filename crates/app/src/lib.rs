//! TrainBench's use cases, once, for both front ends: the `trainbench` CLI
//! parses and prints, the desktop app adapts to DTOs, channels and its live
//! view, and both reach the services (store, runner, probe, report) only
//! through this crate (`scripts/check-deps.sh` checks it).
//!
//! - [`workspace`]: the database opened one way; runs and saved sessions.
//! - [`sweep`]: a sweep planned on this machine (every combination's verdict,
//!   the price checked) and queued; [`batch`]: the largest batch that fits,
//!   searched, and [`batch_words`] its progress in words; [`execute`]: the one run loop, through an `Executor` for
//!   this machine or a remote host.
//! - [`tune`]: the best way to train a model here, searched by successive
//!   halving over frameworks, compile modes, precisions, batches and
//!   threads within a time budget, stored as a sweep with its trace.
//! - [`bisect`]: which release of a framework first changed a metric, by
//!   binary search between a good and a bad release, stored as a sweep.
//! - [`gate`]: a performance gate for continuous integration: a baseline and
//!   a candidate run in pairs A B B A until the ratio's interval settles
//!   against a slowdown threshold, stored as a sweep with the verdict.
//! - [`live`]: a run's figures while it trains (steps, throughput).
//! - [`reports`]: a selection turned into a comparison; PDF, CSV, charts and
//!   session files out and in.
//! - [`prices`]: the price table under one rule set (core's `PriceRow::validate`).
//! - [`frameworks`], [`models`], [`host`]: what a person can choose, and
//!   this machine; [`model_search`]: a model found among the catalogue's
//!   and the installed libraries' by name, family, size and CPU; [`describe`]: a library model or a model from a person's
//!   file built once by its worker and counted.
//! - [`releases`]: a framework's releases the registry lists, to pick from.
//! - [`first_run`]: a newcomer's quick benchmark and the second run that
//!   makes it a comparison.
//! - [`glossary`]: the studio's words explained, for tooltips, the CLI and
//!   docs/glossary.md.
//! - [`projection`]: a run projected to hardware it did not use, as a band.
//! - [`published`]: published training results with their implied MFU and
//!   plausibility, and a run placed beside them.
//! - [`query`]: one read-only SQL statement over the store's documented
//!   views, bounded in rows and time, as CSV or JSON.
//! - [`explain`]: two runs' step breakdowns turned into the gap part by part.
//! - [`gpu_check`]: the GPU acceptance suite (plan, checks, report). The
//!   GPU session (the most valuable GPU measurements within a time budget,
//!   with peers) is a crate of its own above this one,
//!   `trainbench-gpu-session`.
//! - [`job`]: the job types the use cases share (a leaf module); [`remote`]:
//!   hosts over ssh, from `trainbench-remote`.
//! - [`settings`]: the settings file both front ends read, and which
//!   database a command works on; [`shortened`]: every planned run capped
//!   in steps by `TRAINBENCH_EXAMPLE_STEPS` (the docs' examples, tested).
//! - [`error`]: one error type with a stable code and the field at fault.

pub mod batch;
pub mod batch_words;
pub mod bisect;
pub mod describe;
pub mod error;
pub mod execute;
pub mod explain;
pub mod first_run;
pub mod frameworks;
pub mod gate;
pub mod glossary;
pub mod gpu_check;
pub mod host;
pub mod job;
pub mod live;
pub mod model_search;
pub mod models;
pub mod prices;
pub mod projection;
pub mod published;
pub mod query;
pub mod releases;
pub mod remote;
pub mod reports;
pub mod settings;
pub mod shortened;
pub mod sweep;
pub mod tune;
pub mod workspace;

pub use error::{AppError, AppResult, ErrorCode};
pub use host::Host;
pub use workspace::{LeftOutRun, Listed, RunListing, SessionRef, Workspace};

pub use trainbench_core::versions;
/// What the shells need of the services, re-exported so they depend on this
/// crate alone: the progress trait and runner options, the framework
/// environments, stored-data types, report sections and provenance helpers.
pub use trainbench_files as files;
pub use trainbench_probe::{self_cpu_seconds, GpuInfo, GIT_REVISION};
pub use trainbench_report::document::{utc_text, Section};
pub use trainbench_runner::envs;
pub use trainbench_runner::{Progress, RunnerOptions, WorkerCommand};
pub use trainbench_store::{
    hostname, now_unix_ms, ImportOutcome, LoadedComparison, StoredBatchSearch,
};

/// This studio's version (the workspace's).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

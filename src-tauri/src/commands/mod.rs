//! The commands the UI calls, by area. Each is an adapter of a few lines: it
//! turns what the UI sent into an app-layer call (`trainbench-app`, the layer
//! the CLI uses too) and the answer into a DTO ([`dto`]) or an `ApiError`.
//! No benchmark logic lives here.

pub mod bisect;
pub mod compare;
pub mod dto;
pub mod files;
pub mod first_run;
pub mod hosts;
pub mod info;
pub mod own_model;
pub mod record;
pub mod runs;
pub mod sessions;
pub mod settings;
pub mod sweeps;
pub mod tune;

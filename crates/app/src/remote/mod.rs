//! Remote hosts over SSH: the studio drives a GPU server through
//! the system `ssh` (so `~/.ssh/config`, ProxyJump and the agent work;
//! connections shared with ControlMaster), copies a versioned kit there (this
//! `trainbench` binary and the Python workers), checks which frameworks and
//! GPUs the host has, and runs each job as a detached **agent**
//! (`trainbench agent run DIR` on the host) that runs the worker with the
//! ordinary runner and appends everything it measures to `DIR/journal.jsonl`.
//! The studio reads the journal from a byte offset it stores with what it
//! read, so a dropped connection, a killed `ssh` client or a stopped studio
//! loses nothing: reading resumes where the database says it stopped
//! (`trainbench attach ID`). Cancelling sends the agent SIGTERM; it stops the
//! worker and journals the cancellation.

mod agent;
mod check;
mod follow;
mod hosts;
mod kit;
mod shell;
mod start;
mod url;

pub use agent::{agent_run, JournalLine, RemoteJob};
pub use follow::{abandon, attach, attach_job};
pub use hosts::{
    add_host, check_host, host, hosts, parse_env, remove_host, Inventory, RemoteFramework,
    RemoteHost, SlurmInventory, SlurmSettings,
};
pub(crate) use start::run_job;
pub use start::RemoteTarget;
pub use url::SshUrl;

use crate::error::AppError;

/// The remote root when the address names none (relative to the login's home).
pub const DEFAULT_ROOT: &str = ".trainbench-remote";

fn bad(field: &str, message: String) -> AppError {
    AppError::BadInput {
        field: field.into(),
        message,
    }
}

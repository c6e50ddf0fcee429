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
//!
//! Beneath the application layer: it knows the store, the runner and the
//! probe, never a use case; the app's executor for remote jobs calls
//! [`run_job`].

mod agent;
mod check;
mod error;
mod follow;
mod hosts;
mod kit;
mod list;
mod shell;
/// The one quoting function for a word a POSIX shell reads.
pub use shell::quote as shell_quote;
mod start;
mod url;

pub use agent::{agent_run, JournalLine, RemoteJob};
pub use error::{RemoteError, RemoteResult};
pub use follow::{abandon, attach, waiting_run};
pub use hosts::{parse_env, Inventory, RemoteFramework, RemoteHost, SlurmInventory, SlurmSettings};
pub use list::{add_host, check_host, host, hosts, remove_host};
pub use start::{run_job, HostJob, RemoteTarget};
pub use url::SshUrl;

/// The remote root when the address names none (relative to the login's home).
pub const DEFAULT_ROOT: &str = ".trainbench-remote";

fn bad(field: &str, message: String) -> RemoteError {
    RemoteError::BadInput {
        field: field.into(),
        message,
    }
}

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
//!
//! Modules:
//! - [`address`]: where a host is: `ssh://…` or `ray://HEAD[:PORT]`.
//! - [`agent`]: the agent: what runs a job on a host (`trainbench agent run
//!   DIR`), detached from the connection, journaling everything it measures.
//! - [`check`]: a host's check: the kit sent (or found), then one script that
//!   reports the host's name, cores, root folder, each interpreter's frameworks
//!   and GPUs, and Slurm's nodes; the peers get the kit and are checked for the
//!   interpreter the host uses.
//! - [`error`]: what can go wrong reaching a host, typed the way the
//!   application layer shows errors: input a person fixes.
//! - [`follow`]: following a remote run: its journal read over ssh from the
//!   offset the database holds, stored in batches with the offset, reconnecting
//!   when the connection drops; the agent's (or the Slurm job's) liveness
//!   polled so a run whose agent died still ends; cancelling on the host;
//!   attaching again.
//! - [`hosts`]: what a host of the studio's list is, what its last check found,
//!   and the rules every field obeys.
//! - [`kit`]: the kit a host needs to run jobs: the studio's command-line
//!   binary and the Python workers, sent once per version.
//! - [`kit_packs`]: the kit's gzipped tar, packed once per kit and kept in
//!   the studio's home.
//! - [`list`]: the studio's host list (`$TRAINBENCH_HOME/hosts.json`): read.
//! - [`place`]: the places a run goes to behind one seam (an agent detached
//!   over ssh, a Slurm batch job, a Ray job): start, state, cancel, and a
//!   reader of the journal from an offset.
//! - [`shell`]: everything the studio says to a remote shell goes through here:
//!   one quoting function.
//! - [`start`]: starting a job at its place and recording where it runs.
//! - [`url`]: `ssh://[user@]host[:port][/folder]`: where a remote host is and
//!   which folder on it holds the studio's kits and runs.

mod address;
mod agent;
mod check;
mod error;
mod follow;
mod hosts;
mod kit;
mod kit_packs;
mod list;
mod place;
mod shell;
/// The one quoting function for a word a POSIX shell reads.
pub use shell::quote as shell_quote;
mod start;
mod url;

pub use address::{HostUrl, RayUrl, RAY_DEFAULT_PORT};
pub use agent::{agent_run, JournalLine, RemoteJob};
pub use error::{RemoteError, RemoteResult};
pub use follow::{abandon, attach, waiting_run};
pub use hosts::{
    parse_env, ClusterInventory, Inventory, RemoteFramework, RemoteHost, SlurmSettings,
};
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

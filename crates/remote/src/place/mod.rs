//! Places to run behind one seam: a machine reached over ssh (the agent
//! detached there), a Slurm cluster behind a login host (a batch job whose
//! first node runs the agent), a Ray cluster (a job submitted to its head's
//! job API, the kit as its working folder). Each is a [`Launcher`]: start a
//! run, say how its job stands, cancel it, and open a reader of its journal
//! from a byte offset. Following, attaching and storing are the same for
//! every place ([`crate::follow`]).
//!
//! Modules:
//! - [`detached`]: the agent started over ssh with `setsid nohup`; its pid
//!   file says whether it lives; SIGTERM cancels.
//! - [`slurm`]: `sbatch`, `squeue`/`sacct`/`scontrol`, `scancel`.
//! - [`ray`]: Ray's job-submission API over HTTP: the kit uploaded once as
//!   a package, the agent as the job's entry point echoing its journal to
//!   the job's log, the log read from the stored offset, `stop` to cancel.
//! - [`reader`]: a journal's bytes as they come: an ssh `tail -F` or the
//!   job's log polled over HTTP.
//! - [`http`]: the few HTTP/1.1 requests Ray's job API takes.
//! - [`zip`]: the kit as a stored zip archive that keeps file modes.

pub(crate) mod detached;
mod http;
pub(crate) mod ray;
pub(crate) mod reader;
pub(crate) mod slurm;
mod zip;

use trainbench_core::spec::CheckedSpec;
use trainbench_store::RemoteRun;

use crate::address::HostUrl;
use crate::error::RemoteResult;
use crate::hosts::{Inventory, RemoteHost};
pub(crate) use reader::Reader;

/// A run to start at a place: its id, its checked spec, the job the agent
/// runs (`job.json`'s bytes), and what the host's last check found.
pub(crate) struct Launch<'a> {
    pub run_id: i64,
    pub spec: &'a CheckedSpec,
    pub job_json: &'a [u8],
    pub inv: &'a Inventory,
    /// A folder name of this studio's for the run: `HOST-runN-MS`.
    pub name: &'a str,
}

/// A run started: its folder where it runs, and the place's id of its job.
pub(crate) struct Started {
    pub dir: String,
    pub place_job: Option<String>,
    /// Said to the person when it is started (`[slurm] submitted job 12`).
    pub said: Option<String>,
}

/// How a run's job stands, as its place says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JobState {
    /// Not started yet by the place's own means (an agent with no pid file).
    Starting,
    /// Waiting in the place's queue: said once.
    Waiting,
    Running,
    /// Ended as `state` says (`SUCCEEDED`, `CANCELLED`, `ENDED` …);
    /// `cancelled` when the place stopped it on request.
    Ended {
        state: String,
        cancelled: bool,
    },
}

/// What every place does for a run.
pub(crate) trait Launcher {
    /// Starts the run; its folder and job id there, or why not.
    fn start(&self, launch: &Launch<'_>) -> Result<Started, String>;
    /// How the run's job stands; `None` when the place could not be asked.
    fn state(&self, rr: &RemoteRun) -> Option<JobState>;
    /// Why a job that ended (or never started) without its outcome in the
    /// journal failed, and the last lines of its log.
    fn ended_unjournaled(&self, rr: &RemoteRun, state: &JobState) -> (String, String);
    /// Asks the place to stop the run; whether the request went through.
    fn cancel(&self, rr: &RemoteRun) -> bool;
    /// A reader of the run's journal from byte `offset`, living no longer
    /// than this studio.
    fn reader(&self, rr: &RemoteRun, offset: u64) -> RemoteResult<Reader>;
    /// How a person names the place in messages (`[slurm] job 12 …`).
    fn kind(&self) -> &'static str;
    /// A line read where the journal is that is not a journal line, as the
    /// run's log shows it: in a journal file, damage said as such.
    fn other_line(&self, line: &[u8]) -> String {
        format!(
            "[journal] unreadable line: {}",
            String::from_utf8_lossy(line).trim_end()
        )
    }
}

/// The launcher of `h`'s place.
pub(crate) fn launcher(h: &RemoteHost) -> Box<dyn Launcher + '_> {
    match (&h.url, &h.slurm) {
        (HostUrl::Ray(url), _) => Box::new(ray::RayJobs { h, url }),
        (HostUrl::Ssh(url), Some(settings)) => Box::new(slurm::SlurmJobs { h, url, settings }),
        (HostUrl::Ssh(url), None) => Box::new(detached::Detached { h, url }),
    }
}

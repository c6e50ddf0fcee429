//! A machine reached over ssh: the run's agent started there detached
//! (`setsid nohup`), so it outlives the connection; its pid file says
//! whether it lives; SIGTERM to it cancels.

use trainbench_store::RemoteRun;

use super::{JobState, Launch, Launcher, Reader, Started};
use crate::agent::agent_alive;
use crate::error::RemoteResult;
use crate::hosts::RemoteHost;
use crate::shell::{host_sh, quote};
use crate::url::SshUrl;

pub(crate) struct Detached<'h> {
    pub h: &'h RemoteHost,
    pub url: &'h SshUrl,
}

impl Launcher for Detached<'_> {
    fn start(&self, launch: &Launch<'_>) -> Result<Started, String> {
        let dir = format!("{}/runs/{}", launch.inv.root_dir, launch.name);
        let tb = quote(&format!("{}/bin/trainbench", launch.inv.kit_dir));
        let script = format!(
            "set -e; mkdir -p {d}; cat > {d}/job.json; cd {d}; setsid nohup {tb} agent run {d} > {d}/agent.log 2>&1 < /dev/null & echo started",
            d = quote(&dir),
        );
        host_sh(self.h, &script, Some(launch.job_json)).map_err(|e| e.to_string())?;
        Ok(Started {
            dir,
            place_job: None,
            said: None,
        })
    }

    /// `RUNNING`, `ENDED` (gone, a zombie an init that does not reap left,
    /// or its pid now another process's) or `STARTING` (no pid file yet).
    fn state(&self, rr: &RemoteRun) -> Option<JobState> {
        let d = quote(&rr.dir);
        let script = format!(
            "if [ ! -f {d}/agent.pid ]; then echo STARTING; else {}; \
             if [ $alive = 1 ]; then echo RUNNING; else echo ENDED; fi; fi",
            agent_alive(&d)
        );
        let out = host_sh(self.h, &script, None).ok()?;
        Some(match out.trim() {
            "STARTING" => JobState::Starting,
            "RUNNING" => JobState::Running,
            other => JobState::Ended {
                state: other.to_owned(),
                cancelled: false,
            },
        })
    }

    fn ended_unjournaled(&self, rr: &RemoteRun, state: &JobState) -> (String, String) {
        let what = match state {
            JobState::Starting => "did not start",
            _ => "ended without writing the run's outcome",
        };
        let tail = host_sh(
            self.h,
            &format!(
                "tail -n 20 {}/agent.log 2>/dev/null || true",
                quote(&rr.dir)
            ),
            None,
        )
        .unwrap_or_default();
        (
            format!(
                "the run's agent on host {} {what} (its log: {}/agent.log)",
                self.h.name, rr.dir
            ),
            tail,
        )
    }

    /// SIGTERM to the run's agent, only if the process with its pid is
    /// still the agent that wrote it.
    fn cancel(&self, rr: &RemoteRun) -> bool {
        let script = format!(
            "{}; if [ $alive = 1 ]; then kill -TERM \"$p\"; fi",
            agent_alive(&quote(&rr.dir))
        );
        host_sh(self.h, &script, None).is_ok()
    }

    fn reader(&self, rr: &RemoteRun, offset: u64) -> RemoteResult<Reader> {
        Reader::ssh_tail(self.url, &rr.dir, offset)
    }

    fn kind(&self) -> &'static str {
        "agent"
    }
}

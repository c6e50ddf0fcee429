//! A Slurm cluster behind a login host reached over ssh: each run a batch
//! job (`sbatch`) whose first node runs the agent (and, for several nodes,
//! the worker's srun + torchrun); its state from `squeue`, then `sacct` or
//! `scontrol`; `scancel` to cancel.

use trainbench_core::spec::Device;
use trainbench_store::RemoteRun;

use super::{JobState, Launch, Launcher, Reader, Started};
use crate::error::RemoteResult;
use crate::hosts::{RemoteHost, SlurmSettings};
use crate::shell::{host_sh, quote};
use crate::url::SshUrl;

pub(crate) struct SlurmJobs<'h> {
    pub h: &'h RemoteHost,
    pub url: &'h SshUrl,
    pub settings: &'h SlurmSettings,
}

/// Slurm job states in which the job is still to run or running.
const SLURM_ACTIVE: [&str; 6] = [
    "CONFIGURING",
    "RUNNING",
    "COMPLETING",
    "SUSPENDED",
    "REQUEUED",
    "RESIZING",
];

impl SlurmJobs<'_> {
    /// The batch script: one task per node, the agent on the first.
    fn batch_script(&self, launch: &Launch<'_>, dir: &str) -> String {
        let spec = &launch.spec.spec;
        let tb = quote(&format!("{}/bin/trainbench", launch.inv.kit_dir));
        let mut lines = vec![
            "#!/bin/sh".to_owned(),
            format!("#SBATCH --job-name=trainbench-run{}", launch.run_id),
            format!("#SBATCH --nodes={}", spec.nodes),
            "#SBATCH --ntasks-per-node=1".to_owned(),
            // Relative to the job's folder (sbatch runs there): no path
            // of the host's in a directive, where Slurm reads `%`.
            "#SBATCH --output=slurm-%j.out".to_owned(),
        ];
        if let Some(p) = &self.settings.partition {
            lines.push(format!("#SBATCH --partition={p}"));
        }
        if spec.device != Device::Cpu {
            lines.push(format!("#SBATCH --gres=gpu:{}", spec.devices));
        }
        lines.push(format!("exec {tb} agent run {}", quote(dir)));
        lines.join("\n") + "\n"
    }
}

impl Launcher for SlurmJobs<'_> {
    fn start(&self, launch: &Launch<'_>) -> Result<Started, String> {
        let dir = format!("{}/runs/{}", launch.inv.root_dir, launch.name);
        let script = format!(
            "set -e; mkdir -p {d}; cat > {d}/job.json; printf '%s' {sc} > {d}/job.sbatch; cd {d}; sbatch --parsable {d}/job.sbatch",
            d = quote(&dir),
            sc = quote(&self.batch_script(launch, &dir)),
        );
        let out = host_sh(self.h, &script, Some(launch.job_json)).map_err(|e| e.to_string())?;
        // "12345" or "12345;cluster".
        let id = out
            .trim()
            .lines()
            .last()
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .to_owned();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit() || c == '_') {
            return Err(format!(
                "sbatch on host {} gave no job id: {out:?}",
                self.h.name
            ));
        }
        Ok(Started {
            dir,
            said: Some(format!("[slurm] submitted job {id} on {}", self.h.name)),
            place_job: Some(id),
        })
    }

    /// squeue while the job is known there, then sacct (where accounting is
    /// on) or scontrol (while the controller remembers it).
    fn state(&self, rr: &RemoteRun) -> Option<JobState> {
        let j = quote(rr.place_job.as_deref()?);
        let script = format!(
            "s=$(squeue -h -j {j} -o %T 2>/dev/null); \
             [ -z \"$s\" ] && s=$(sacct -X -n -P -j {j} -o State 2>/dev/null | head -n 1 | cut -d' ' -f1); \
             [ -z \"$s\" ] && s=$(scontrol show job {j} 2>/dev/null | sed -n 's/.*JobState=\\([A-Z_]*\\).*/\\1/p' | head -n 1); \
             echo \"$s\""
        );
        let out = host_sh(self.h, &script, None).ok()?;
        let s = out.trim();
        Some(match s {
            "" => return None,
            "PENDING" => JobState::Waiting,
            s if SLURM_ACTIVE.contains(&s) => JobState::Running,
            s => JobState::Ended {
                state: s.to_owned(),
                cancelled: s == "CANCELLED",
            },
        })
    }

    fn ended_unjournaled(&self, rr: &RemoteRun, state: &JobState) -> (String, String) {
        let job = rr.place_job.as_deref().unwrap_or("?");
        let tail = host_sh(
            self.h,
            &format!(
                "tail -n 20 {}/slurm-{}.out 2>/dev/null || true",
                quote(&rr.dir),
                quote(job)
            ),
            None,
        )
        .unwrap_or_default();
        let how = match state {
            JobState::Ended { state, .. } => state.as_str(),
            _ => "",
        };
        (
            format!(
                "Slurm job {job} ended {how} before the run's agent wrote its outcome (the job's output: {}/slurm-{job}.out)",
                rr.dir
            ),
            tail,
        )
    }

    /// `scancel`: Slurm sends the agent SIGTERM, or drops the job from the
    /// queue.
    fn cancel(&self, rr: &RemoteRun) -> bool {
        let Some(job) = rr.place_job.as_deref() else {
            return false;
        };
        host_sh(self.h, &format!("scancel {}", quote(job)), None).is_ok()
    }

    fn reader(&self, rr: &RemoteRun, offset: u64) -> RemoteResult<Reader> {
        Reader::ssh_tail(self.url, &rr.dir, offset)
    }

    fn kind(&self) -> &'static str {
        "slurm"
    }
}

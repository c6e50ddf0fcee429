//! The agent: what runs a job on a host (`trainbench agent run DIR`),
//! detached from the connection, journaling everything it measures; and
//! the shell tests the studio uses to ask whether it is still alive.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use trainbench_core::protocol::Event;
use trainbench_core::spec::{CheckedSpec, RawSpec};
use trainbench_core::summary::RunStatus;
use trainbench_core::telemetry::TelemetrySample;
use trainbench_core::Framework;
use trainbench_runner::{Progress, Runner, RunnerOptions, WorkerCommand};
use trainbench_store::{NewRun, Store};

use crate::error::{RemoteError, RemoteResult};

/// What the agent on the host runs (`DIR/job.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RemoteJob {
    pub framework: Framework,
    pub environment: Option<String>,
    pub spec: RawSpec,
    pub worker: WorkerCommand,
    pub memory_limit_bytes: Option<u64>,
    pub silence_timeout_s: u64,
    /// The model file the spec names, sent with the job (nothing else of
    /// the studio machine's disk is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_file: Option<SentModelFile>,
}

/// A model file sent with a job: written into the job's folder on the host
/// and checked against the run's SHA-256 before anything runs, as the kit
/// is against its manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SentModelFile {
    /// The file's name (no folder): `model.py`.
    pub name: String,
    pub sha256: String,
    pub text: String,
}

/// Lowercase hexadecimal SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes the job's model file into `DIR/model/` and points the spec at it,
/// once its bytes hash to the SHA-256 the run stored; else why not.
fn place_model_file(dir: &Path, job: &mut RemoteJob) -> Result<(), String> {
    let Some(sent) = job.model_file.take() else {
        return Ok(());
    };
    let stored = job.spec.model_sha256.clone().unwrap_or_default();
    let actual = sha256_hex(sent.text.as_bytes());
    if actual != stored || sent.sha256 != stored {
        return Err(format!(
            "the model file {} sent with the job hashes to {actual} on the host, not to the run's SHA-256 {stored}: not run",
            sent.name
        ));
    }
    let function = match job.spec.model.rsplit_once(':') {
        Some((_, f)) => f.to_owned(),
        None => return Err(format!("model = {} names no function", job.spec.model)),
    };
    if sent.name.contains('/') || !sent.name.ends_with(".py") {
        return Err(format!(
            "the model file's name {:?} is not a file name ending in .py",
            sent.name
        ));
    }
    let folder = std::path::absolute(dir.join("model")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let path = folder.join(&sent.name);
    trainbench_files::write_atomic("model", &path, sent.text.as_bytes())
        .map_err(|e| e.to_string())?;
    job.spec.model = format!("{}:{function}", path.display());
    Ok(())
}

/// One line of a run's journal on the host.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "journal", rename_all = "snake_case")]
#[expect(
    clippy::large_enum_variant,
    reason = "one short-lived line at a time; boxing buys nothing"
)]
pub enum JournalLine {
    /// The host's provenance, first.
    Provenance {
        provenance: serde_json::Value,
    },
    Event {
        event: Event,
    },
    Telemetry {
        samples: Vec<TelemetrySample>,
    },
    Log {
        line: String,
    },
    /// How the run ended, last.
    Outcome {
        status: RunStatus,
        reason: Option<String>,
        error_class: Option<String>,
        exit_code: Option<i32>,
        stderr_tail: String,
    },
}

/// The agent: runs `DIR/job.json` with the ordinary runner on this machine,
/// journaling everything to `DIR/journal.jsonl` (and to stdout with
/// `echo`: a Ray job's log); SIGTERM cancels.
pub async fn agent_run(dir: &Path, echo: bool) -> RemoteResult<()> {
    let io = |what: &str, e: std::io::Error| {
        RemoteError::Internal(format!("{what} in {}: {e}", dir.display()))
    };
    let job: RemoteJob = serde_json::from_str(
        &std::fs::read_to_string(dir.join("job.json")).map_err(|e| io("job.json", e))?,
    )
    .map_err(|e| RemoteError::Internal(format!("job.json: {e}")))?;
    // The pid with the process's start time: a pid alone may name another
    // process once this one has ended.
    let started = own_start_ticks().unwrap_or(0);
    trainbench_files::write_atomic(
        "agent.pid",
        &dir.join("agent.pid"),
        format!("{} {started}\n", std::process::id()).as_bytes(),
    )?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("journal.jsonl"))
        .map_err(|e| io("journal.jsonl", e))?;
    let mut journal = Journal { file, echo };
    let mut job = job;
    whole_python_path(&mut job.worker)?;
    if let Err(reason) = place_model_file(dir, &mut job) {
        return journal.write(&JournalLine::Outcome {
            status: RunStatus::Failed,
            reason: Some(reason),
            error_class: Some(trainbench_core::ErrorClass::Internal.as_str().into()),
            exit_code: None,
            stderr_tail: String::new(),
        });
    }
    let gpu = trainbench_probe::GpuProbe::open();
    let spec = CheckedSpec::new(job.spec.clone()).map_err(RemoteError::from)?;
    let mut store = Store::open(&dir.join("agent.sqlite"))?;
    let id = store.insert_run(&NewRun::of_spec(
        job.framework,
        job.environment.clone(),
        &spec,
    ))?;
    journal.write(&JournalLine::Provenance {
        provenance: trainbench_probe::provenance(&gpu),
    })?;
    let (tx, rx) = watch::channel(false);
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| RemoteError::Internal(format!("SIGTERM handler: {e}")))?;
    tokio::spawn(async move {
        term.recv().await;
        let _ = tx.send(true);
    });
    let runner = Runner {
        worker: job.worker.clone(),
        gpu: &gpu,
        opts: RunnerOptions {
            memory_limit_bytes: job.memory_limit_bytes,
            silence_timeout: Duration::from_secs(job.silence_timeout_s.max(1)),
            ..RunnerOptions::default()
        },
    };
    let outcome = runner.run(&mut store, id, &spec, &mut journal, rx).await;
    let detail = store.run_detail(id)?;
    let line = match outcome {
        Ok(o) => JournalLine::Outcome {
            status: o.status,
            reason: o.reason,
            error_class: o.error_class,
            exit_code: detail.row.exit_code,
            stderr_tail: detail.stderr_tail.unwrap_or_default(),
        },
        Err(e) => JournalLine::Outcome {
            status: RunStatus::Failed,
            reason: Some(format!("the agent on the host failed: {e}")),
            error_class: Some(trainbench_core::ErrorClass::Internal.as_str().into()),
            exit_code: None,
            stderr_tail: String::new(),
        },
    };
    journal.write(&line)
}

struct Journal {
    file: std::fs::File,
    echo: bool,
}

/// A relative `PYTHONPATH` (a Ray job's: relative to the kit) made whole
/// against the kit's folder (`TRAINBENCH_KIT_DIR`, else the folder the
/// agent started in), so the worker finds the workers wherever it runs.
fn whole_python_path(worker: &mut WorkerCommand) -> RemoteResult<()> {
    for (k, v) in &mut worker.env {
        if k == "PYTHONPATH" && !v.is_empty() && !v.starts_with('/') {
            let kit = match std::env::var_os("TRAINBENCH_KIT_DIR") {
                Some(dir) => std::path::PathBuf::from(dir),
                None => std::env::current_dir()
                    .map_err(|e| RemoteError::Internal(format!("the agent's folder: {e}")))?,
            };
            *v = kit.join(&*v).display().to_string();
        }
    }
    Ok(())
}

impl Journal {
    fn write(&mut self, line: &JournalLine) -> RemoteResult<()> {
        let mut text =
            serde_json::to_string(line).map_err(|e| RemoteError::Internal(e.to_string()))?;
        text.push('\n');
        // One write per line (O_APPEND): a reader never sees half of one
        // unless the disk fills, and then it waits for the rest.
        self.file
            .write_all(text.as_bytes())
            .map_err(|e| RemoteError::Internal(format!("journal: {e}")))?;
        if self.echo {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| RemoteError::Internal(format!("journal to stdout: {e}")))?;
        }
        Ok(())
    }
}

impl Progress for Journal {
    fn event(&mut self, _run_id: i64, event: &Event) {
        let _ = self.write(&JournalLine::Event {
            event: event.clone(),
        });
    }
    fn log(&mut self, _run_id: i64, line: &str) {
        let _ = self.write(&JournalLine::Log { line: line.into() });
    }
    fn telemetry(&mut self, _run_id: i64, samples: &[TelemetrySample]) {
        if !samples.is_empty() {
            let _ = self.write(&JournalLine::Telemetry {
                samples: samples.to_vec(),
            });
        }
    }
}

/// This process's start time in clock ticks since boot (`/proc/self/stat`,
/// field 22), as the host's shell reads it back for [`agent_alive`].
fn own_start_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name (in parentheses, which may hold spaces) come
    // the fields from the third on: the start time is the 20th of them.
    stat.rsplit_once(") ")?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// Shell text (for `sh`) that sets `p` to the agent's pid and `alive` to 1
/// when the process with that pid is the agent of the run in `dir` (quoted):
/// alive, not a zombie, and started when the agent wrote down.
pub(crate) fn agent_alive(dir: &str) -> String {
    format!(
        "alive=0; p=; t=; if [ -f {dir}/agent.pid ]; then read p t < {dir}/agent.pid; \
         st=$(sed 's/^.*) //' \"/proc/$p/stat\" 2>/dev/null | awk '{{print $1 \" \" $20}}'); \
         case \"$st\" in ''|Z*|X*) ;; *\" $t\") alive=1;; *) [ -z \"$t\" ] && alive=1;; esac; fi"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn ticks(pid: u32) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        stat.rsplit_once(") ")
            .unwrap()
            .1
            .split_whitespace()
            .nth(19)
            .unwrap()
            .parse()
            .unwrap()
    }

    fn alive(dir: &Path, pid_file: &str) -> String {
        std::fs::write(dir.join("agent.pid"), pid_file).unwrap();
        let script = format!(
            "{}; echo $alive",
            agent_alive(&crate::shell::quote(&dir.display().to_string()))
        );
        let out = Command::new("sh").arg("-c").arg(script).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    #[test]
    fn an_agent_is_alive_only_with_its_pid_and_its_start_time() {
        let dir = std::env::temp_dir().join(format!("tb agent's {}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let (pid, t) = (child.id(), ticks(child.id()));
        assert_eq!(own_start_ticks(), Some(ticks(std::process::id())));
        assert_eq!(alive(&dir, &format!("{pid} {t}\n")), "1");
        // The same pid with another start time: another process.
        assert_eq!(alive(&dir, &format!("{pid} {}\n", t + 1)), "0");
        // An agent from before start times were written: the pid alone.
        assert_eq!(alive(&dir, &format!("{pid}\n")), "1");
        child.kill().unwrap();
        let zombie = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !zombie() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        // A zombie (not yet reaped) is not alive; nor is a pid that is gone.
        assert_eq!(alive(&dir, &format!("{pid} {t}\n")), "0");
        child.wait().unwrap();
        assert_eq!(alive(&dir, &format!("{pid} {t}\n")), "0");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

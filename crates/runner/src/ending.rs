//! How a run ended: the status, reason and error class decided from the
//! worker's last event and its exit (the runner decides, not the worker),
//! and the records of it the run loop hands back.

use std::process::ExitStatus;

use trainbench_core::protocol::{ErrorClass, Event};
use trainbench_core::summary::{RunStatus, RunSummary};

/// How a job ended, as stored: what the run loop of either place (this
/// machine or a remote host) hands back.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub run_id: i64,
    pub status: RunStatus,
    pub reason: Option<String>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub run_id: i64,
    pub status: RunStatus,
    pub reason: Option<String>,
    pub error_class: Option<String>,
    pub summary: RunSummary,
}

pub(crate) fn describe_exit(status: &ExitStatus) -> (Option<i32>, String) {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        let name = match sig {
            9 => "SIGKILL; the kernel's OOM killer sends this too",
            15 => "SIGTERM",
            11 => "SIGSEGV",
            6 => "SIGABRT",
            _ => "signal",
        };
        (
            None,
            format!("the worker was killed by signal {sig} ({name})"),
        )
    } else {
        let code = status.code();
        (
            code,
            format!(
                "the worker exited with code {}",
                code.map_or("?".into(), |c| c.to_string())
            ),
        )
    }
}

/// A run's status, reason and error class from how it ended: a stop the
/// runner made (cancel, timeout) wins; else `done` with exit 0 is completed;
/// `done` with another exit, an `error` event, or an exit without either is
/// failed with the reason (a signal without a terminal event: `crashed`).
pub(crate) fn decide_status(
    stopped: Option<(RunStatus, String, Option<ErrorClass>)>,
    terminal: Option<&Event>,
    exit: Option<&ExitStatus>,
) -> (RunStatus, Option<String>, Option<String>) {
    let (exit_code, exit_text) = exit
        .map(describe_exit)
        .unwrap_or((None, "the worker's exit status is unknown".into()));
    match (stopped, terminal) {
        (Some((status, reason, class)), _) => {
            (status, Some(reason), class.map(|c| c.as_str().to_owned()))
        }
        (None, Some(Event::Done { .. })) if exit.is_some_and(ExitStatus::success) => {
            (RunStatus::Completed, None, None)
        }
        (None, Some(Event::Done { .. })) => (
            RunStatus::Failed,
            Some(format!("{exit_text} after reporting done")),
            Some(ErrorClass::Internal.as_str().to_owned()),
        ),
        (None, Some(Event::Error { class, message, .. })) => (
            RunStatus::Failed,
            Some(message.clone()),
            Some(class.as_str().to_owned()),
        ),
        (None, _) => (
            RunStatus::Failed,
            Some(format!("{exit_text} without a done or error event")),
            Some(
                if exit_code.is_none() {
                    ErrorClass::Crashed
                } else {
                    ErrorClass::Internal
                }
                .as_str()
                .to_owned(),
            ),
        ),
    }
}

//! How a run ended: the status, reason and error class decided from the
//! worker's last event and its exit (the runner decides, not the worker),
//! and the records of it the run loop hands back; what was left stored,
//! waiting out a busy or full disk.

use std::collections::BTreeMap;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use trainbench_core::protocol::{ErrorClass, Event};
use trainbench_core::summary::{RunStatus, RunSummary};
use trainbench_probe::GpuProbe;
use trainbench_store::{Store, StoreError, TelemetrySample};

use crate::{finish_summary, lines, patient, Progress, RunnerError};

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

/// How long a worker ended by a signal, without a last word, waits for a
/// stop asked at the same moment (see [`stop_asked_meanwhile`]).
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(3);

/// Whether a stop was asked while the worker was ending: already, or — for
/// a worker ended by a signal without a `done` or `error` — within
/// [`STOP_GRACE`]. A place that stops a run signals its agent and the
/// worker together (Ray's job stop sends SIGTERM to the entry point and
/// every process under it); the worker's end may then be seen before the
/// agent's own signal has reached its cancel channel, and the run is still
/// one its user cancelled, not a crash.
pub(crate) async fn stop_asked_meanwhile(
    cancel: &mut tokio::sync::watch::Receiver<bool>,
    exit: Option<&ExitStatus>,
) -> bool {
    use std::os::unix::process::ExitStatusExt;
    if *cancel.borrow() {
        return true;
    }
    if exit.is_none_or(|e| e.signal().is_none()) {
        return false;
    }
    // A sender gone (nobody can cancel any more) ends the wait at once.
    matches!(
        tokio::time::timeout(STOP_GRACE, cancel.wait_for(|asked| *asked)).await,
        Ok(Ok(_))
    )
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

/// What a run left when its worker stopped: the events and samples not yet
/// stored, a stop the runner made, the last event, the exit, the log tail.
pub(crate) struct Ending {
    pub(crate) events: Vec<Event>,
    pub(crate) samples: Vec<TelemetrySample>,
    pub(crate) stopped: Option<(RunStatus, String, Option<ErrorClass>)>,
    pub(crate) terminal: Option<Event>,
    pub(crate) exit: Option<ExitStatus>,
    pub(crate) tail: Arc<Mutex<lines::Tail>>,
    /// NVML's peak of the worker's memory per GPU index.
    pub(crate) nvml_peaks: BTreeMap<u32, u64>,
}

/// Stores the rest of a run and how it ended, then its summary; a full disk
/// is waited out (the measurements stay in memory), saying so.
pub(crate) async fn store_end(
    store: &mut Store,
    run_id: i64,
    gpu: &GpuProbe,
    progress: &mut dyn Progress,
    mut e: Ending,
) -> Result<Outcome, RunnerError> {
    for m in nvml_memory_events(std::mem::take(&mut e.nvml_peaks)) {
        progress.event(run_id, &m);
        e.events.push(m);
    }
    // Progress sees everything stored (a remote agent's journal is made of it).
    progress.telemetry(run_id, &e.samples);
    store.set_busy_timeout(trainbench_store::BUSY_TIMEOUT)?;
    let patience = patient::STORE_PATIENCE;
    let mut full = |e: &StoreError| {
        progress.log(
            run_id,
            &format!("[studio] the disk holding the database is full ({e}): free some space; run {run_id}'s measurements are kept in memory and stored as soon as there is room"),
        );
    };
    patient::patiently(
        patience,
        || store.record(run_id, &e.events, &e.samples),
        &mut full,
    )
    .await?;
    // Let the stderr reader drain what the worker wrote last.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let stderr_tail = e.tail.lock().map(|t| t.text()).unwrap_or_default();
    let exit_code = e.exit.as_ref().and_then(ExitStatus::code);
    let (status, reason, class) = decide_status(e.stopped, e.terminal.as_ref(), e.exit.as_ref());
    patient::patiently(
        patience,
        || {
            store.finish_run(
                run_id,
                status,
                reason.as_deref(),
                class.as_deref(),
                exit_code,
                &stderr_tail,
            )
        },
        &mut full,
    )
    .await?;
    let summary =
        patient::patiently(patience, || finish_summary(store, run_id, gpu), &mut full).await?;
    Ok(Outcome {
        run_id,
        status,
        reason,
        error_class: class,
        summary,
    })
}

/// Writes what was measured since the last flush; a busy or full store
/// keeps it for the next (said once) while the worker trains on.
pub(crate) fn flush(
    store: &mut Store,
    run_id: i64,
    progress: &mut dyn Progress,
    events: &mut Vec<Event>,
    unstored: &mut Vec<TelemetrySample>,
    told_busy: &mut bool,
) -> Result<(), RunnerError> {
    match store.record(run_id, events, unstored) {
        Ok(()) => {
            events.clear();
            unstored.clear();
        }
        Err(e) if patient::transient(&e) => {
            if !*told_busy {
                progress.log(run_id, &format!("[studio] the database is busy or full ({e}): measurements are kept in memory and written when it is free"));
                *told_busy = true;
            }
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// NVML's view of the worker's memory, one peak per GPU it used.
fn nvml_memory_events(peaks: BTreeMap<u32, u64>) -> Vec<Event> {
    peaks
        .into_iter()
        .map(|(index, peak)| Event::Memory {
            device: format!("cuda:{index}"),
            source: "nvml_process".into(),
            peak_bytes: peak,
            reserved_peak_bytes: None,
        })
        .collect()
}

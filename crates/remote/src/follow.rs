//! Following a remote run, the same at every place: its journal read from
//! the offset the database holds (through the place's [`crate::place::Reader`]),
//! stored in batches with the offset, reconnecting when the connection
//! drops; the job's state polled so a run whose agent died still ends;
//! cancelling through the place; attaching again.

use std::time::{Duration, Instant};

use tokio::sync::watch;
use trainbench_core::protocol::{ErrorClass, Event};
use trainbench_core::summary::RunStatus;
use trainbench_core::telemetry::TelemetrySample;
use trainbench_runner::lines::{LineSplitter, Piece};
use trainbench_runner::Progress;
use trainbench_store::{JournalEnd, RemoteRun};

use crate::agent::JournalLine;
use crate::bad;
use crate::error::{RemoteError, RemoteResult};
use crate::hosts::RemoteHost;
use crate::list::host;
use crate::place::{JobState, Launcher};
use trainbench_probe::GpuProbe;
use trainbench_runner::Finished;
use trainbench_store::Store;

/// How long the studio keeps trying to reach a host before it leaves a run
/// detached (`TRAINBENCH_REMOTE_GIVE_UP_S`, default 120 s).
fn give_up_after() -> Duration {
    Duration::from_secs(
        std::env::var("TRAINBENCH_REMOTE_GIVE_UP_S")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(120),
    )
}

/// How long a run whose agent (or Slurm job) ended is given for its
/// outcome to arrive through the journal before it is failed without one
/// (`TRAINBENCH_REMOTE_ENDED_GRACE_S`, default 10 s; the tests that kill an
/// agent set less).
fn ended_grace() -> Duration {
    Duration::from_secs(
        std::env::var("TRAINBENCH_REMOTE_ENDED_GRACE_S")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10),
    )
}

/// The longest journal line read (a telemetry batch is a few KiB); a longer
/// one is skipped whole, its bytes still counted in the offset.
const JOURNAL_LINE_CAP: usize = 16 << 20;

/// Where following a run stands, across reconnections.
struct Follow<'a> {
    place: Box<dyn Launcher + 'a>,
    rr: &'a RemoteRun,
    /// Journal bytes read (and, after each flush, stored).
    offset: u64,
    started: bool,
    cancel_sent: bool,
    last_contact: Instant,
    said_pending: bool,
    /// When the agent or the job was first seen ended, and how.
    ended_at: Option<Instant>,
}

/// What one connection read and did not store yet.
#[derive(Default)]
struct Batch {
    events: Vec<Event>,
    samples: Vec<TelemetrySample>,
}

/// Reads a remote run's journal from where the database says reading
/// stopped, to its outcome: reconnecting when ssh drops, cancelling on the
/// host when `cancel` turns on. A host unreachable for longer than
/// [`give_up_after`] leaves the run detached (still `running`; `attach`
/// resumes it).
pub(crate) async fn follow(
    store: &mut Store,
    gpu: &GpuProbe,
    h: &RemoteHost,
    rr: RemoteRun,
    progress: &mut dyn Progress,
    mut cancel: watch::Receiver<bool>,
) -> RemoteResult<Finished> {
    let run_id = rr.run_id;
    let mut f = Follow {
        place: crate::place::launcher(h),
        rr: &rr,
        offset: rr.journal_offset,
        started: store.run_row(run_id)?.status == RunStatus::Running,
        cancel_sent: false,
        last_contact: Instant::now(),
        said_pending: false,
        ended_at: None,
    };
    loop {
        f.cancel_if_asked(&cancel);
        let mut batch = Batch::default();
        let ended = f.read(store, progress, &mut cancel, &mut batch).await?;
        if let Some(line) = ended {
            let (status, reason, error_class, exit_code, tail) = outcome(line, h);
            if !f.started {
                store.start_run(run_id, &serde_json::json!({}))?;
            }
            let end = JournalEnd {
                status,
                reason: reason.as_deref(),
                error_class: error_class.as_deref(),
                exit_code,
                stderr_tail: &tail,
            };
            store.finish_journal(run_id, &batch.events, &batch.samples, f.offset, &end)?;
            trainbench_runner::finish_summary(store, run_id, gpu)?;
            return Ok(Finished {
                run_id,
                status,
                reason,
            });
        }
        store.record_journal(run_id, &batch.events, &batch.samples, f.offset)?;
        if f.last_contact.elapsed() > give_up_after() {
            return Err(RemoteError::Internal(format!(
                "lost contact with host {} ({}) for {} s: run {run_id} is still running there; `trainbench attach {run_id}` resumes reading it",
                h.name,
                h.url,
                f.last_contact.elapsed().as_secs()
            )));
        }
        progress.log(
            run_id,
            &format!(
                "[remote] the connection to {} ended; reconnecting from byte {}",
                h.name, f.offset
            ),
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The run's end from its outcome line: a status that is not an end
/// (`running`, `queued`) is refused and the run failed with why; the log
/// tail is bounded like a local run's.
fn outcome(
    line: JournalLine,
    h: &RemoteHost,
) -> (
    RunStatus,
    Option<String>,
    Option<String>,
    Option<i32>,
    String,
) {
    let JournalLine::Outcome {
        status,
        reason,
        error_class,
        exit_code,
        stderr_tail,
    } = line
    else {
        unreachable!("only an outcome ends a journal")
    };
    let tail = trainbench_core::text::cut(stderr_tail, trainbench_core::session::MAX_STDERR_TAIL);
    if matches!(status, RunStatus::Queued | RunStatus::Running) {
        return (
            RunStatus::Failed,
            Some(format!(
                "the run's agent on host {} wrote an outcome that is not an end (status {}); the run is stored as failed",
                h.name,
                status.as_str()
            )),
            Some(ErrorClass::Internal.as_str().into()),
            exit_code,
            tail,
        );
    }
    (status, reason, error_class, exit_code, tail)
}

impl Follow<'_> {
    fn cancel_if_asked(&mut self, cancel: &watch::Receiver<bool>) {
        if *cancel.borrow() && !self.cancel_sent {
            self.cancel_sent = self.place.cancel(self.rr);
        }
    }

    /// One connection reading the journal from the offset (an ssh
    /// `tail -F`, a job's log polled: [`crate::place::Reader`]), until the outcome, the
    /// connection's end, or the run's end seen by a poll of its place.
    /// Flushes what it read every 0.5 s; the rest is left in `batch`.
    async fn read(
        &mut self,
        store: &mut Store,
        progress: &mut dyn Progress,
        cancel: &mut watch::Receiver<bool>,
        batch: &mut Batch,
    ) -> RemoteResult<Option<JournalLine>> {
        let run_id = self.rr.run_id;
        let mut reader = self.place.reader(self.rr, self.offset)?;
        let mut lines = LineSplitter::new(JOURNAL_LINE_CAP);
        let mut buf = vec![0u8; 64 * 1024];
        let mut flush = tokio::time::interval(Duration::from_millis(500));
        let mut poll = tokio::time::interval(Duration::from_secs(3));
        let spawned = Instant::now();
        let mut stored = self.offset;
        let mut cancellable = true;
        let ended = loop {
            tokio::select! {
                bytes = reader.next(&mut buf) => match bytes {
                    None => break None,
                    Some(bytes) => {
                        self.last_contact = Instant::now();
                        lines.push(&bytes);
                        if let Some(o) = self.take_lines(store, progress, &mut lines, batch)? {
                            break Some(o);
                        }
                    }
                },
                _ = flush.tick() => {
                    // The reader has been up a while (ssh's keep-alives end
                    // it within 15 s when the host is gone; a failed poll
                    // ends a log's): the place is in contact.
                    if spawned.elapsed() > Duration::from_secs(2) {
                        self.last_contact = Instant::now();
                    }
                    if self.offset != stored {
                        store.record_journal(run_id, &batch.events, &batch.samples, self.offset)?;
                        *batch = Batch::default();
                        stored = self.offset;
                    }
                },
                changed = cancel.changed(), if cancellable => {
                    cancellable = changed.is_ok();
                    self.cancel_if_asked(cancel);
                },
                _ = poll.tick() => {
                    self.cancel_if_asked(cancel);
                    if let Some(o) = self.ended_without_outcome(progress) {
                        break Some(o);
                    }
                },
            }
        };
        reader.close().await;
        Ok(ended)
    }

    /// Every whole line read so far: events and samples into `batch`, logs
    /// to `progress`, the provenance starting the run; the outcome, if
    /// read, ends it (what follows it is not read).
    fn take_lines(
        &mut self,
        store: &mut Store,
        progress: &mut dyn Progress,
        lines: &mut LineSplitter,
        batch: &mut Batch,
    ) -> RemoteResult<Option<JournalLine>> {
        let run_id = self.rr.run_id;
        while let Some(piece) = lines.next_piece() {
            self.offset += piece.len();
            let line = match piece {
                Piece::Line(l) => l,
                Piece::Cut(n) => {
                    progress.log(run_id, &format!("[journal] a line of {n} bytes, over the {JOURNAL_LINE_CAP}-byte cap, was skipped"));
                    continue;
                }
            };
            let Ok(parsed) = serde_json::from_slice::<JournalLine>(&line) else {
                progress.log(run_id, &self.place.other_line(&line));
                continue;
            };
            match parsed {
                JournalLine::Provenance { provenance } => {
                    if !self.started {
                        store.start_run(run_id, &provenance)?;
                        self.started = true;
                    }
                }
                JournalLine::Event { event } => {
                    progress.event(run_id, &event);
                    batch.events.push(event);
                }
                JournalLine::Telemetry { samples } => {
                    progress.telemetry(run_id, &samples);
                    batch.samples.extend(samples);
                }
                JournalLine::Log { line } => progress.log(run_id, &line),
                o @ JournalLine::Outcome { .. } => return Ok(Some(o)),
            }
        }
        Ok(None)
    }

    /// The run's end when its job ended without journaling an outcome:
    /// after [`ended_grace`] (10 s) for the journal to catch up (60 s for
    /// an agent that never started), an outcome saying so with the log's
    /// tail; cancelled when the place says it stopped the job.
    fn ended_without_outcome(&mut self, progress: &mut dyn Progress) -> Option<JournalLine> {
        let state = self.place.state(self.rr)?;
        let (limit, cancelled) = match &state {
            JobState::Running => {
                self.ended_at = None;
                return None;
            }
            JobState::Waiting => {
                if !self.said_pending {
                    self.said_pending = true;
                    progress.log(
                        self.rr.run_id,
                        &format!(
                            "[{}] job {} is waiting in the queue",
                            self.place.kind(),
                            self.rr.place_job.as_deref().unwrap_or("?")
                        ),
                    );
                }
                return None;
            }
            JobState::Starting => (Duration::from_secs(60), false),
            JobState::Ended { cancelled, .. } => (ended_grace(), *cancelled),
        };
        if self.ended_at.get_or_insert_with(Instant::now).elapsed() <= limit {
            return None;
        }
        let (reason, tail) = self.place.ended_unjournaled(self.rr, &state);
        Some(JournalLine::Outcome {
            status: if cancelled {
                RunStatus::Cancelled
            } else {
                RunStatus::Failed
            },
            reason: Some(reason),
            error_class: (!cancelled).then(|| ErrorClass::Internal.as_str().to_owned()),
            exit_code: None,
            stderr_tail: tail,
        })
    }
}

/// The remote row of run `run_id`, or why there is none.
pub(crate) fn remote_run_of(store: &Store, run_id: i64) -> RemoteResult<RemoteRun> {
    store.remote_run(run_id)?.ok_or_else(|| {
        bad(
            "run",
            format!("run = {run_id} is not allowed: it did not run on a remote host"),
        )
    })
}

/// The remote row of run `run_id` when its journal's end is still awaited.
pub fn waiting_run(store: &Store, run_id: i64) -> RemoteResult<RemoteRun> {
    let rr = remote_run_of(store, run_id)?;
    if rr.finished {
        return Err(bad(
            "run",
            format!("run = {run_id} is not allowed: its journal was read to the end already (it is not waiting for its host)"),
        ));
    }
    Ok(rr)
}

/// Re-attaches to a remote run the studio stopped following.
pub async fn attach(
    store: &mut Store,
    gpu: &GpuProbe,
    run_id: i64,
    progress: &mut dyn Progress,
    cancel: watch::Receiver<bool>,
) -> RemoteResult<Finished> {
    let rr = waiting_run(store, run_id)?;
    let h = host(&rr.host)?;
    follow(store, gpu, &h, rr, progress, cancel).await
}

/// Stops waiting for a remote run whose host is gone for good: stored as
/// `interrupted` with why (what was read stays), so it can be deleted. The
/// host is not contacted: the run may still be training there, in its
/// folder, which is left alone.
pub fn abandon(store: &mut Store, run_id: i64) -> RemoteResult<()> {
    let rr = waiting_run(store, run_id)?;
    let reason = format!(
        "abandoned: the studio stopped waiting for host {} ({}); the {} journal bytes read before are kept; the run's folder there ({}) was left alone",
        rr.host, rr.url, rr.journal_offset, rr.dir
    );
    store.abandon_remote_run(run_id, &reason)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SshUrl;

    #[test]
    fn an_outcome_that_is_not_an_end_fails_the_run_and_tails_are_bounded() {
        let h = RemoteHost {
            name: "box".into(),
            url: crate::HostUrl::Ssh(SshUrl::parse("ssh://box").unwrap()),
            pythons: vec!["python3".into()],
            env: Vec::new(),
            slurm: None,
            peers: Vec::new(),
            inventory: None,
        };
        let line = |status| JournalLine::Outcome {
            status,
            reason: Some("why".into()),
            error_class: None,
            exit_code: Some(0),
            stderr_tail: "x".repeat(1 << 20),
        };
        for status in [RunStatus::Running, RunStatus::Queued] {
            let (s, reason, class, _, tail) = outcome(line(status), &h);
            assert_eq!(s, RunStatus::Failed);
            assert!(reason.unwrap().contains("not an end"));
            assert_eq!(class.as_deref(), Some("internal"));
            assert!(tail.len() < trainbench_core::session::MAX_STDERR_TAIL + 100);
        }
        let (s, reason, ..) = outcome(line(RunStatus::Completed), &h);
        assert_eq!((s, reason.as_deref()), (RunStatus::Completed, Some("why")));
    }
}

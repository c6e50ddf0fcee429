//! A long task the window waits for, told in words as it goes: the wizard's
//! batch search (`batch_size = max`: each probe as it starts and ends, the
//! lines the CLI prints, and Cancel) and a remote host's add or check (each
//! step: the kit sent or found, the host asked, the peers). One task of each
//! kind at a time; its lines stay until the next one starts.

use std::sync::{Mutex, MutexGuard};

use serde::Serialize;
use tokio::sync::watch;
use trainbench_app::AppError;

/// What the window shows while it waits.
#[derive(Debug, Clone, Default, Serialize, specta::Type)]
pub struct NarrationStatus {
    /// The task is under way.
    pub running: bool,
    /// The latest task's lines, oldest first.
    pub lines: Vec<String>,
}

#[derive(Debug, Default)]
struct State {
    status: NarrationStatus,
    cancel: Option<watch::Sender<bool>>,
}

/// One kind of task of the desktop app.
#[derive(Debug, Default)]
pub struct Narration {
    state: Mutex<State>,
}

/// Marks the task ended when dropped (finished, failed or cancelled).
pub struct Running<'a>(&'a Narration);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.status.running = false;
        s.cancel = None;
    }
}

impl Narration {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a task: its cancel flag, and the guard that ends it. Refused
    /// while another of its kind runs (`what` says which, in the refusal).
    pub fn begin(&self, what: &str) -> Result<(watch::Receiver<bool>, Running<'_>), AppError> {
        let mut s = self.lock();
        if s.status.running {
            return Err(AppError::Busy(format!(
                "{what} is under way already: wait for it to end"
            )));
        }
        let (tx, rx) = watch::channel(false);
        *s = State {
            status: NarrationStatus {
                running: true,
                lines: Vec::new(),
            },
            cancel: Some(tx),
        };
        Ok((rx, Running(self)))
    }

    /// One line of the task's progress.
    pub fn say(&self, line: String) {
        self.lock().status.lines.push(line);
    }

    pub fn status(&self) -> NarrationStatus {
        self.lock().status.clone()
    }

    /// Whether a task of this kind is under way (without copying its lines).
    pub fn is_running(&self) -> bool {
        self.lock().status.running
    }

    /// Cancels the task under way; false when none is.
    pub fn cancel(&self) -> bool {
        let s = self.lock();
        match &s.cancel {
            Some(tx) => tx.send(true).is_ok(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_search_at_a_time_its_lines_kept_after_it_ends() {
        let searches = Narration::default();
        let (cancel, running) = searches.begin("a batch search").expect("first");
        let refused = searches
            .begin("a batch search")
            .err()
            .expect("a second is refused");
        assert!(
            refused.to_string().contains("a batch search is under way"),
            "{refused}"
        );
        searches.say("probing batch 1".into());
        assert!(searches.cancel());
        assert!(*cancel.borrow());
        drop(running);
        let status = searches.status();
        assert!(!status.running);
        assert_eq!(status.lines, ["probing batch 1"]);
        assert!(!searches.cancel(), "nothing to cancel");
        let (_c, _r) = searches.begin("a batch search").expect("again once ended");
        assert!(searches.status().lines.is_empty());
    }
}

//! The wizard's batch search (`batch_size = max`) while it runs: its probes
//! in words as they start and end (`trainbench_app::batch_words`, the lines
//! the CLI prints), and Cancel. One search at a time.

use std::sync::{Mutex, MutexGuard};

use serde::Serialize;
use tokio::sync::watch;
use trainbench_app::AppError;

/// What the wizard shows under Start.
#[derive(Debug, Clone, Default, Serialize, specta::Type)]
pub struct SearchStatus {
    /// A search is under way.
    pub running: bool,
    /// The latest search's lines, oldest first.
    pub lines: Vec<String>,
}

#[derive(Debug, Default)]
struct State {
    status: SearchStatus,
    cancel: Option<watch::Sender<bool>>,
}

/// The batch search of the desktop app.
#[derive(Debug, Default)]
pub struct Searches {
    state: Mutex<State>,
}

/// Marks the search ended when dropped (finished, failed or cancelled).
pub struct Running<'a>(&'a Searches);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.status.running = false;
        s.cancel = None;
    }
}

impl Searches {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a search: its cancel flag, and the guard that ends it. Refused
    /// while another runs.
    pub fn begin(&self) -> Result<(watch::Receiver<bool>, Running<'_>), AppError> {
        let mut s = self.lock();
        if s.status.running {
            return Err(AppError::Busy(
                "a batch search is running already: wait for it or cancel it".into(),
            ));
        }
        let (tx, rx) = watch::channel(false);
        *s = State {
            status: SearchStatus {
                running: true,
                lines: Vec::new(),
            },
            cancel: Some(tx),
        };
        Ok((rx, Running(self)))
    }

    /// One line of the search's progress.
    pub fn say(&self, line: String) {
        self.lock().status.lines.push(line);
    }

    pub fn status(&self) -> SearchStatus {
        self.lock().status.clone()
    }

    /// Cancels the search under way; false when none is.
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
        let searches = Searches::default();
        let (cancel, running) = searches.begin().expect("first");
        assert!(searches.begin().is_err(), "a second is refused");
        searches.say("probing batch 1".into());
        assert!(searches.cancel());
        assert!(*cancel.borrow());
        drop(running);
        let status = searches.status();
        assert!(!status.running);
        assert_eq!(status.lines, ["probing batch 1"]);
        assert!(!searches.cancel(), "nothing to cancel");
        let (_c, _r) = searches.begin().expect("again once ended");
        assert!(searches.status().lines.is_empty());
    }
}

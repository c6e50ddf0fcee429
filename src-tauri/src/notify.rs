//! Told when it's done: a system notification (the freedesktop `Notify` call
//! to the desktop's notification service) when a run, a sweep,
//! a search or a bisection ends while the studio's window is not in front —
//! behind another window, minimised or on another workspace. With the
//! window in front nothing is sent: the person sees it end.
//!
//! What a notice says is decided here ([`Ended::notice`], tested as plain
//! text); how it is shown is the sink the app installs at start
//! ([`Notifier::install`]); the command tests install one that records.

use std::sync::{Arc, OnceLock};

use trainbench_core::summary::RunStatus;

/// What ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// One run started on its own (or a run of a sweep that failed).
    Run {
        id: i64,
        label: String,
        status: RunStatus,
        reason: Option<String>,
    },
    /// The last run of a sweep (several runs started together).
    Sweep {
        runs: usize,
        completed: usize,
        failed: usize,
    },
    /// A search for the fastest setup: its verdict, or why it stopped.
    Search { outcome: Result<String, String> },
    /// A bisection over releases: its verdict, or why it stopped.
    Bisection { outcome: Result<String, String> },
}

/// A notification's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub title: String,
    pub body: String,
}

/// What the queue still holds, in words.
fn left_words(left: usize) -> String {
    match left {
        0 => "The queue is empty.".into(),
        1 => "1 run left in the queue.".into(),
        n => format!("{n} runs left in the queue."),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

impl Ended {
    /// The notice for this end, with `left` runs still in the queue; `None`
    /// for what the person did themselves (a run they cancelled).
    pub fn notice(&self, left: usize) -> Option<Notice> {
        let left = left_words(left);
        let (title, body) = match self {
            Ended::Run {
                status: RunStatus::Cancelled,
                ..
            } => return None,
            Ended::Run {
                id,
                label,
                status,
                reason,
            } => {
                let why = reason
                    .as_deref()
                    .filter(|_| *status != RunStatus::Completed)
                    .map(|r| format!(": {}", first_line(r)))
                    .unwrap_or_default();
                (
                    format!("Run #{id} {}", status.as_str()),
                    format!("{label}{why}. {left}"),
                )
            }
            Ended::Sweep {
                runs,
                completed,
                failed,
            } => {
                let others = runs.saturating_sub(completed + failed);
                let mut parts = vec![format!("{completed} completed")];
                if *failed > 0 {
                    parts.push(format!("{failed} failed"));
                }
                if others > 0 {
                    parts.push(format!("{others} cancelled or not run"));
                }
                (
                    format!("Sweep of {runs} runs ended"),
                    format!("{}. {left}", parts.join(", ")),
                )
            }
            Ended::Search { outcome } => match outcome {
                Ok(verdict) => ("Search finished".into(), first_line(verdict).to_owned()),
                Err(e) => ("Search stopped".into(), first_line(e).to_owned()),
            },
            Ended::Bisection { outcome } => match outcome {
                Ok(verdict) => ("Bisection finished".into(), first_line(verdict).to_owned()),
                Err(e) => ("Bisection stopped".into(), first_line(e).to_owned()),
            },
        };
        Some(Notice { title, body })
    }
}

/// Shows a notice unless the window is in front; the app's is installed at
/// start ([`desktop_sink`]).
pub type Sink = Box<dyn Fn(&Notice) + Send + Sync>;

/// Where ends are told; nothing is shown until a sink is installed.
#[derive(Default)]
pub struct Notifier {
    sink: OnceLock<Sink>,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier")
            .field("installed", &self.sink.get().is_some())
            .finish()
    }
}

impl Notifier {
    /// Installs where notices go (once; a second sink is ignored).
    pub fn install(&self, sink: Sink) {
        let _ = self.sink.set(sink);
    }

    /// Tells that `ended` ended, with `left` runs still in the queue.
    pub fn tell(&self, ended: &Ended, left: usize) {
        if let (Some(sink), Some(notice)) = (self.sink.get(), ended.notice(left)) {
            sink(&notice);
        }
    }
}

/// A shared notifier.
pub type SharedNotifier = Arc<Notifier>;

/// A search's or bisection's outcome as told: its verdict or why it
/// stopped; `None` when the person cancelled it (they know).
pub fn outcome<T>(
    found: &Result<T, trainbench_app::AppError>,
    verdict: impl Fn(&T) -> String,
) -> Option<Result<String, String>> {
    match found {
        Ok(v) => Some(Ok(verdict(v))),
        Err(trainbench_app::AppError::Cancelled) => None,
        Err(e) => Some(Err(e.to_string())),
    }
}

/// Whether the window is where the person looks: focused, shown and not
/// minimised. A window that cannot say is taken as not in front (a notice
/// too many beats a missed end).
pub fn in_front(focused: Option<bool>, visible: Option<bool>, minimized: Option<bool>) -> bool {
    focused == Some(true) && visible != Some(false) && minimized != Some(true)
}

/// The real app's sink: a system notification ([`show`]), unless the main
/// window is in front.
pub fn desktop_sink<R: tauri::Runtime>(app: tauri::AppHandle<R>) -> Sink {
    use tauri::Manager;
    Box::new(move |n: &Notice| {
        let front = app.get_webview_window("main").is_some_and(|w| {
            in_front(
                w.is_focused().ok(),
                w.is_visible().ok(),
                w.is_minimized().ok(),
            )
        });
        if front {
            return;
        }
        if let Err(e) = show(n) {
            eprintln!("trainbench-studio: notification not shown: {e}");
        }
    })
}

/// The name the notification service shows the notice under, and its icon's.
const APP: &str = "trainbench-studio";

/// Shows `n` through the desktop's notification service: the freedesktop
/// `Notify` call on the session bus (application, no notice replaced, icon,
/// title, body, no actions, no hints, the service's own timeout), made with
/// the D-Bus client of GIO, which the window's toolkit already brings.
fn show(n: &Notice) -> Result<(), String> {
    use gio::glib::ToVariant;
    let bus = gio::bus_get_sync(gio::BusType::Session, gio::Cancellable::NONE)
        .map_err(|e| format!("no session bus: {e}"))?;
    let hints = std::collections::HashMap::<String, gio::glib::Variant>::new();
    let args = (
        APP.to_owned(),
        0u32,
        APP.to_owned(),
        n.title.clone(),
        n.body.clone(),
        Vec::<String>::new(),
        hints,
        -1i32,
    )
        .to_variant();
    bus.call_sync(
        Some("org.freedesktop.Notifications"),
        "/org/freedesktop/Notifications",
        "org.freedesktop.Notifications",
        "Notify",
        Some(&args),
        None,
        gio::DBusCallFlags::NONE,
        5_000,
        gio::Cancellable::NONE,
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_end_says_what_ended_how_and_what_is_left() {
        let run = |status, reason: Option<&str>| Ended::Run {
            id: 7,
            label: "resnet_mini tch fp32".into(),
            status,
            reason: reason.map(str::to_owned),
        };
        let done = run(RunStatus::Completed, None).notice(0).expect("told");
        assert_eq!(done.title, "Run #7 completed");
        assert_eq!(done.body, "resnet_mini tch fp32. The queue is empty.");
        let failed = run(RunStatus::Failed, Some("out of memory\ntraceback"))
            .notice(2)
            .expect("told");
        assert_eq!(failed.title, "Run #7 failed");
        assert_eq!(
            failed.body,
            "resnet_mini tch fp32: out of memory. 2 runs left in the queue."
        );
        assert_eq!(run(RunStatus::Cancelled, None).notice(0), None);
        let sweep = Ended::Sweep {
            runs: 4,
            completed: 2,
            failed: 1,
        }
        .notice(1)
        .expect("told");
        assert_eq!(sweep.title, "Sweep of 4 runs ended");
        assert_eq!(
            sweep.body,
            "2 completed, 1 failed, 1 cancelled or not run. 1 run left in the queue."
        );
        let search = Ended::Search {
            outcome: Err("cancelled by the user".into()),
        }
        .notice(0)
        .expect("told");
        assert_eq!(
            (search.title.as_str(), search.body.as_str()),
            ("Search stopped", "cancelled by the user")
        );
    }

    #[test]
    fn only_a_focused_shown_window_is_in_front() {
        assert!(in_front(Some(true), Some(true), Some(false)));
        assert!(!in_front(Some(false), Some(true), Some(false)));
        assert!(!in_front(Some(true), Some(true), Some(true)));
        assert!(!in_front(Some(true), Some(false), Some(false)));
        assert!(!in_front(None, None, None));
    }

    #[test]
    fn nothing_is_shown_before_a_sink_and_every_notice_after() {
        let n = Notifier::default();
        n.tell(
            &Ended::Sweep {
                runs: 2,
                completed: 2,
                failed: 0,
            },
            0,
        );
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = Arc::clone(&seen);
        n.install(Box::new(move |notice| {
            into.lock().unwrap().push(notice.clone())
        }));
        n.tell(
            &Ended::Sweep {
                runs: 2,
                completed: 2,
                failed: 0,
            },
            0,
        );
        assert_eq!(seen.lock().unwrap().len(), 1);
    }
}

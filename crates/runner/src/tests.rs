use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use trainbench_core::protocol::ErrorClass;

use super::*;
use crate::ending::decide_status;

fn done() -> Event {
    Event::Done {
        steps: 10,
        samples: 80,
        reason: "completed".into(),
        loss_scale: None,
        compiles: None,
        t_ns: 1,
    }
}

/// `wait(2)` statuses: exit code `c` is `c << 8`; a signal is its number.
fn exited(code: i32) -> ExitStatus {
    ExitStatus::from_raw(code << 8)
}

#[test]
fn done_and_exit_0_is_completed_and_anything_else_says_why() {
    assert_eq!(
        decide_status(None, Some(&done()), Some(&exited(0))),
        (RunStatus::Completed, None, None)
    );
    let (status, reason, class) = decide_status(None, Some(&done()), Some(&exited(3)));
    assert_eq!(
        (status, class.as_deref()),
        (RunStatus::Failed, Some("internal"))
    );
    assert_eq!(
        reason.as_deref(),
        Some("the worker exited with code 3 after reporting done")
    );
    let oom = Event::Error {
        class: ErrorClass::Oom,
        field: None,
        message: "out of memory at batch 4096".into(),
        t_ns: 2,
    };
    assert_eq!(
        decide_status(None, Some(&oom), Some(&exited(3))),
        (
            RunStatus::Failed,
            Some("out of memory at batch 4096".into()),
            Some("oom".into())
        )
    );
}

#[test]
fn a_signal_without_a_terminal_event_is_a_crash_and_a_stop_wins() {
    let (status, reason, class) = decide_status(None, None, Some(&ExitStatus::from_raw(9)));
    assert_eq!(
        (status, class.as_deref()),
        (RunStatus::Failed, Some("crashed"))
    );
    assert!(
        reason.as_deref().is_some_and(
            |r| r.contains("signal 9") && r.ends_with("without a done or error event")
        ),
        "{reason:?}"
    );
    let (_, _, class) = decide_status(None, None, Some(&exited(0)));
    assert_eq!(class.as_deref(), Some("internal"));
    let (_, reason, _) = decide_status(None, None, None);
    assert_eq!(
        reason.as_deref(),
        Some("the worker's exit status is unknown without a done or error event")
    );
    // The runner's own stop (cancel, timeout) wins over what the worker said.
    let stopped = Some((
        RunStatus::Cancelled,
        "cancelled by the user".to_owned(),
        None,
    ));
    assert_eq!(
        decide_status(stopped, Some(&done()), Some(&ExitStatus::from_raw(9))),
        (
            RunStatus::Cancelled,
            Some("cancelled by the user".into()),
            None
        )
    );
    // A stop over the memory limit keeps its class.
    let stopped = Some((
        RunStatus::Failed,
        "over the memory limit".to_owned(),
        Some(trainbench_core::ErrorClass::Oom),
    ));
    assert_eq!(
        decide_status(stopped, None, Some(&ExitStatus::from_raw(9))).2,
        Some("oom".to_owned())
    );
}

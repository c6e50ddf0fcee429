//! A stop and the worker's death at once: a place that stops a run signals
//! its agent and the worker together (Ray's job stop sends SIGTERM to the
//! entry point and to every process under it), so the worker's end can be
//! seen before the stop reaches the runner's cancel channel. The run is
//! still the cancelled run its user asked for, not a crash; a worker that
//! dies of a signal with nobody stopping it is still a crash.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use trainbench_core::protocol::Event;
use trainbench_core::spec::CheckedSpec;
use trainbench_core::summary::RunStatus;
use trainbench_core::Framework;
use trainbench_probe::GpuProbe;
use trainbench_runner::{Outcome, Progress, Runner, RunnerOptions, WorkerCommand};
use trainbench_store::{NewRun, Store};

struct Quiet;

impl Progress for Quiet {
    fn event(&mut self, _run_id: i64, _event: &Event) {}
}

/// A worker that reads its spec, leaves a mark, then dies of SIGTERM
/// without a `done` or `error` event.
fn signalled_worker(mark: &Path) -> WorkerCommand {
    WorkerCommand {
        program: PathBuf::from("/bin/sh"),
        args: vec![
            "-c".into(),
            r#"cat >/dev/null; : > "$MARK"; kill -TERM $$"#.into(),
        ],
        env: vec![("MARK".into(), mark.display().to_string())],
        plan_for: None,
        release: None,
    }
}

/// Runs the signalled worker; `stop_after`: the cancel sent that long after
/// the worker left its mark (about when it died), or never (the sender kept).
fn run(name: &str, stop_after: Option<Duration>) -> Outcome {
    let dir = std::env::temp_dir().join(format!(
        "trainbench-stop-race-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut store = Store::open(&dir.join("s.sqlite")).unwrap();
    let spec = serde_json::json!({"model": "resnet_mini", "batch_size": 4, "steps": 2});
    let spec = CheckedSpec::new(serde_json::from_value(spec).unwrap()).unwrap();
    let id = store
        .insert_run(&NewRun::of_spec(Framework::Tch, None, &spec))
        .unwrap();
    let gpu = GpuProbe::open();
    let mark = dir.join("dying");
    let runner = Runner {
        worker: signalled_worker(&mark),
        gpu: &gpu,
        opts: RunnerOptions::default(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (tx, cancel) = tokio::sync::watch::channel(false);
    let outcome = rt.block_on(async {
        let stopper = tokio::spawn(async move {
            while !mark.exists() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            if let Some(after) = stop_after {
                tokio::time::sleep(after).await;
                let _ = tx.send(true);
            }
            tx
        });
        let outcome = runner.run(&mut store, id, &spec, &mut Quiet, cancel).await;
        drop(stopper.await.unwrap());
        outcome.unwrap()
    });
    assert_eq!(store.run_row(id).unwrap().status, outcome.status);
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

#[test]
fn a_worker_signalled_as_its_run_is_stopped_is_cancelled_not_crashed() {
    let outcome = run("stopped", Some(Duration::from_millis(200)));
    assert_eq!(outcome.status, RunStatus::Cancelled, "{outcome:?}");
    assert_eq!(outcome.reason.as_deref(), Some("cancelled by the user"));
    assert_eq!(outcome.error_class, None);
}

#[test]
fn a_worker_signalled_with_nobody_stopping_it_is_a_crash() {
    let outcome = run("crashed", None);
    assert_eq!(outcome.status, RunStatus::Failed, "{outcome:?}");
    assert_eq!(outcome.error_class.as_deref(), Some("crashed"));
    assert!(
        outcome
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("signal 15")),
        "{outcome:?}"
    );
}

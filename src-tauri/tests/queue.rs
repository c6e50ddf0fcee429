//! The desktop's run queue on its own thread, with a real database and real
//! tch workers: a panic while a run is under way fails that run with the
//! panic's message, and the queue goes on with the next one; each end is
//! told as the window's notifications would tell it (a sweep once, at its
//! last run; a failed run at once; a run started alone when it ends).

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use trainbench_app::sweep::SweepRequest;
use trainbench_app::{Host, RunnerOptions, Workspace};
use trainbench_core::summary::RunStatus;
use trainbench_studio::notify::Notice;
use trainbench_studio::queue::Queue;

fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("queue-{name}"))
}

/// Panics for the first run of the database (id 1) only.
fn panic_on_first(run_id: i64) {
    assert_ne!(run_id, 1, "a bug in the queue, injected by the test");
}

#[test]
fn a_panic_in_the_queue_fails_that_run_with_its_message_and_the_queue_goes_on() {
    let exe = std::env::current_exe().expect("test binary");
    let worker = exe
        .parent()
        .and_then(std::path::Path::parent)
        .map(|d| d.join("trainbench-worker-tch"))
        .expect("target dir");
    assert!(worker.is_file(), "{} is missing", worker.display());
    std::env::set_var("TRAINBENCH_WORKER_TCH", worker);
    std::env::set_var("TRAINBENCH_NO_NVML", "1");
    std::env::set_var("OMP_NUM_THREADS", "1");

    let db = scratch("panic").join("studio.sqlite");
    let (ws, _) = Workspace::open(&db).expect("database");
    let request = SweepRequest {
        model: vec!["resnet_mini".into()],
        batch_size: vec![8],
        steps: Some(6),
        repeats: 2,
        ..SweepRequest::default()
    };
    let plan = ws.plan(&request, &Host::open()).expect("plan");
    let (_, jobs) = ws.queue(&plan, None, "queue test").expect("queued");
    assert_eq!(
        jobs.iter().map(|j| j.run_id).collect::<Vec<_>>(),
        [1, 2],
        "two runs"
    );

    let queue = Queue::start_with_hook(RunnerOptions::default(), panic_on_first);
    let told = Arc::new(Mutex::new(Vec::<Notice>::new()));
    let into = Arc::clone(&told);
    queue.notifier().install(Box::new(move |n| {
        into.lock().expect("notices").push(n.clone())
    }));
    queue.push(db.clone(), jobs).expect("pushed");
    wait(&queue);
    let first = ws.run(1).expect("run 1");
    assert_eq!(first.status, RunStatus::Failed);
    let reason = first.status_reason.unwrap_or_default();
    assert!(reason.contains("internal error"), "{reason}");
    assert!(reason.contains("injected by the test"), "{reason}");
    let second = ws.run(2).expect("run 2");
    assert_eq!(second.status, RunStatus::Completed, "the queue went on");
    let entries = queue.entries();
    assert!(
        entries.iter().any(|e| e.run_id == 1),
        "the live view shows the failed run"
    );
    let said: Vec<(String, String)> = told
        .lock()
        .unwrap()
        .iter()
        .map(|n| (n.title.clone(), n.body.clone()))
        .collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert_eq!(said[0].0, "Run #1 failed");
    assert!(
        said[0].1.contains("injected by the test")
            && said[0].1.ends_with("1 run left in the queue."),
        "{said:?}"
    );
    assert_eq!(
        said[1],
        (
            "Sweep of 2 runs ended".into(),
            "1 completed, 1 failed. The queue is empty.".into()
        )
    );

    // A run started on its own is told when it ends.
    let one = SweepRequest {
        repeats: 1,
        ..request
    };
    let plan = ws.plan(&one, &Host::open()).expect("plan");
    let (_, jobs) = ws.queue(&plan, None, "queue test").expect("queued");
    queue.push(db, jobs).expect("pushed");
    wait(&queue);
    let last = told.lock().expect("notices").last().cloned().expect("told");
    assert_eq!(last.title, "Run #3 completed");
    assert!(last.body.ends_with("The queue is empty."), "{last:?}");
}

fn wait(queue: &Queue) {
    let started = Instant::now();
    while queue.unfinished() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "the queue never finished"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

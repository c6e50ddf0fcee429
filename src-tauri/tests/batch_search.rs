//! The wizard's batch search (`batch_size = max`) through the app's
//! commands: its probes shown as they run, and Cancel, against real tch
//! workers on the CPU and a real SQLite file.

mod common;

use std::time::{Duration, Instant};

use serde_json::json;

use common::app::{open_app, request, scratch};

#[test]
fn a_batch_search_shows_each_probe_and_can_be_cancelled() {
    let dir = scratch("batch-search");
    let app = open_app(&dir);
    // A second thread watches the search as the wizard does, and cancels it
    // once the first probe has ended.
    let searches = std::sync::Arc::clone(&app.studio().searches);
    let watcher = std::thread::Builder::new()
        .name("search watcher".into())
        .spawn(move || {
            let t0 = Instant::now();
            loop {
                let status = searches.status();
                if status.lines.iter().any(|l| l.contains("batch 1 fits")) {
                    assert!(status.running);
                    assert!(
                        status.lines[0].contains("probing batch 1"),
                        "{:?}",
                        status.lines
                    );
                    assert!(searches.cancel());
                    return status.lines;
                }
                assert!(
                    t0.elapsed() < Duration::from_secs(120),
                    "no probe ended: {status:?}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        })
        .expect("a thread");
    let started = app.call(
        "start_sweep",
        json!({"request": request(json!({
            "batch_size": [], "batch_max": true, "memory_limit_bytes": 8u64 << 30,
            "steps": 12, "window_steps": 3
        })), "skipRejected": false}),
    );
    let seen = watcher.join().expect("the watcher");
    let status = app.ok("batch_search_status", json!({}));
    let lines: Vec<String> = serde_json::from_value(status["lines"].clone()).unwrap();
    assert!(
        lines.starts_with(&seen),
        "the lines stay after the search: {lines:?}"
    );
    let e = started.expect_err("a cancelled search queues nothing");
    assert_eq!(e["code"], "cancelled", "{e}");
    let status = app.ok("batch_search_status", json!({}));
    assert_eq!(status["running"], false, "{status}");
    assert_eq!(
        app.ok("cancel_batch_search", json!({})),
        false,
        "nothing left to cancel"
    );
    assert_eq!(
        app.ok("list_runs", json!({}))["runs"],
        json!([]),
        "no run was queued"
    );
}

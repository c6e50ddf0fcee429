//! The wizard's Start with a ticked release that is not installed, through
//! real IPC: the plan names it to install and still counts its runs; the
//! sweep is refused naming `framework` while it is missing; Start's install
//! (`install_releases`, a real install of JAX 0.6.2 from PyPI with uv into a
//! scratch home) makes it, removes an older release over the disk budget
//! and says so, keeps one that is in use over it and says that too, and
//! the sweep then trains in it, its release kept from the budget while it
//! is queued and trains. Its own test binary: it points `TRAINBENCH_HOME`
//! at the scratch home.

mod common;

use std::time::Duration;

use common::app::{assert_error, open_app_without_worker, request, scratch};
use serde_json::json;

#[test]
fn start_installs_a_ticked_release_then_trains_in_it() {
    let dir = scratch("release-start");
    std::env::set_var("TRAINBENCH_HOME", dir.join("home"));
    let app = open_app_without_worker(&dir);
    let sweep = request(json!({
        "framework": ["jax==0.6.2"], "steps": 4, "batch_size": [4], "window_steps": 2
    }));

    let plan = app.ok("plan", json!({"request": sweep}));
    assert_eq!(plan["to_install"], json!(["jax==0.6.2"]), "{plan}");
    assert_eq!(plan["runs"], 1, "its runs are planned: {plan}");
    assert_eq!(plan["rejected"], json!([]), "{plan}");
    assert!(
        plan["notes"][0]
            .as_str()
            .is_some_and(|n| n.starts_with("jax==0.6.2 is not installed here")),
        "{plan}"
    );

    // Nothing is queued into an environment that is not there.
    let e = app.err(
        "start_sweep",
        json!({"request": sweep, "skipRejected": true}),
    );
    assert_error(
        &e,
        "bad_input",
        &["framework = jax==0.6.2", "an installed release"],
    );
    assert_eq!(e["field"], "framework", "{e}");
    assert_eq!(app.ok("list_runs", json!({}))["runs"], json!([]));

    // An older release's environment, last used long ago, and a disk budget
    // of 1 MiB: after Start's install, it is removed (never the release the
    // sweep names), and Start says so.
    let versions = dir.join("home/envs/versions");
    let old = versions.join("jax-0.6.1");
    std::fs::create_dir_all(&old).expect("older release");
    std::fs::write(old.join("weights.bin"), vec![0u8; 3 << 20]).expect("its files");
    std::fs::write(old.join(".trainbench-used"), "1").expect("last used");
    std::fs::write(versions.join(".budget"), (1u64 << 20).to_string()).expect("budget");
    // Another release, used since, that something else uses now (a
    // bisection in another window; its lock held here): kept, and said.
    let busy = versions.join("jax-0.6.0");
    std::fs::create_dir_all(&busy).expect("release in use");
    std::fs::write(busy.join("weights.bin"), vec![0u8; 2 << 20]).expect("its files");
    std::fs::write(busy.join(".trainbench-used"), "2").expect("last used");
    let busy_pin = trainbench_app::versions::parse_pin("jax==0.6.0")
        .expect("pin")
        .expect("a release");
    let using = trainbench_app::envs::pinned::in_use(busy_pin).expect("in use");

    // Start's install, then the sweep.
    let made = app.ok(
        "install_releases",
        json!({"frameworks": ["jax==0.6.2"], "onUpdate": "__CHANNEL__:1"}),
    );
    assert_eq!(made["made"], json!(["jax==0.6.2"]), "{made}");
    assert_eq!(made["removed"][0]["release"], "jax==0.6.1", "{made}");
    assert!(
        made["removed"][0]["bytes"]
            .as_u64()
            .is_some_and(|b| (3 << 20..4 << 20).contains(&b)),
        "its disk: {made}"
    );
    assert_eq!(
        made["removed"][0]["words"],
        "removed jax==0.6.1's environment (3 MiB, the least recently used): \
         the releases' environments were over their 1 MiB disk budget",
        "{made}"
    );
    assert_eq!(made["removed"].as_array().map(Vec::len), Some(1), "{made}");
    assert!(!old.exists(), "removed from disk");
    assert_eq!(made["kept"].as_array().map(Vec::len), Some(1), "{made}");
    assert_eq!(made["kept"][0]["release"], "jax==0.6.0", "{made}");
    assert_eq!(
        made["kept"][0]["words"],
        "kept jax==0.6.0's environment (2 MiB) although the releases' environments are over \
         their 1 MiB disk budget: it is in use (a run, a sweep, a bisection or an install); \
         it is removed when it is free",
        "{made}"
    );
    assert!(busy.exists(), "kept on disk");
    let plan = app.ok("plan", json!({"request": sweep}));
    assert_eq!(plan["to_install"], json!([]), "{plan}");
    // Installing again makes nothing.
    let again = app.ok(
        "install_releases",
        json!({"frameworks": ["jax==0.6.2"], "onUpdate": "__CHANNEL__:2"}),
    );
    assert_eq!(again, json!({"made": [], "removed": [], "kept": []}));

    let started = app.ok(
        "start_sweep",
        json!({"request": sweep, "skipRejected": false}),
    );
    assert_eq!(started["run_ids"].as_array().map(Vec::len), Some(1));
    // The other user lets go: still over the budget, its release is
    // removed, never the one the queued sweep runs in.
    drop(using);
    assert!(!busy.exists(), "removed when free");
    app.wait_idle(Duration::from_secs(300));
    let runs = app.ok("list_runs", json!({}))["runs"].take();
    assert_eq!(runs[0]["status"], "completed", "{runs}");
    assert!(
        runs[0]["label"]
            .as_str()
            .is_some_and(|l| l.starts_with("jax==0.6.2")),
        "{runs}"
    );
}

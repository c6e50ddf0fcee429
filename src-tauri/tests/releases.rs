//! The wizard's version picker and bisection through real IPC: the releases
//! PyPI lists (the test needs the package registry), and bisections refused
//! naming the field before anything is installed or run.

mod common;

use common::app::{assert_error, open_app, request, scratch};
use serde_json::{json, Value};

fn bisect(good: &str, bad: &str, extra: Value) -> Value {
    json!({"request": {
        "framework": "jax", "good": good, "bad": bad, "metric": "throughput",
        "min_repeats": 3, "max_repeats": 9, "base": request(extra)
    }})
}

#[test]
fn releases_are_listed_and_bad_bisections_are_refused_naming_the_field() {
    let dir = scratch("releases");
    let app = open_app(&dir);
    let listed = app.ok("framework_releases", json!({"framework": "jax"}));
    let versions: Vec<&str> = listed["releases"]
        .as_array()
        .expect("releases")
        .iter()
        .map(|r| r["version"].as_str().expect("version"))
        .collect();
    assert!(
        versions.contains(&"0.6.2") && versions.contains(&"0.7.2"),
        "{listed}"
    );
    assert_eq!(versions.last(), Some(&"0.6.0"), "newest first: {listed}");
    assert_eq!(
        listed["releases"][0]["key"],
        format!("jax=={}", versions[0])
    );
    assert!(
        listed["supported"]
            .as_str()
            .is_some_and(|s| s.starts_with("jax 0.6.0 to")),
        "{listed}"
    );
    assert_error(
        &app.err("framework_releases", json!({"framework": "tch"})),
        "bad_input",
        &["framework = tch is not allowed"],
    );

    assert_error(
        &app.err("start_bisect", bisect("0.7.2", "0.6.2", json!({}))),
        "bad_input",
        &["bad = 0.6.2 is not allowed", "after good = 0.7.2"],
    );
    assert_error(
        &app.err("start_bisect", bisect("0.4.30", "0.6.2", json!({}))),
        "bad_input",
        &["good = 0.4.30 is not allowed", "0.6.0, 0.6.1"],
    );
    assert_error(
        &app.err(
            "start_bisect",
            bisect("0.6.2", "0.7.2", json!({"host": "box"})),
        ),
        "bad_input",
        &["host = box is not allowed"],
    );
    // Two precisions are two configurations at each release.
    assert_error(
        &app.err(
            "start_bisect",
            bisect("0.6.2", "0.7.2", json!({"precision": ["fp32", "amp-bf16"]})),
        ),
        "bad_input",
        &["one configuration at each release", "these settings make 2"],
    );
    let status = app.ok("bisect_status", json!({}));
    assert_eq!(status["running"], false, "{status}");
    assert_eq!(app.ok("cancel_bisect", json!({"framework": "jax"})), false);
}

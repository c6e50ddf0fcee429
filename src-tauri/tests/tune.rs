//! "Find the fastest setup" through the app's commands, against real tch
//! workers on the CPU and a real SQLite file: a search's candidates shown as
//! they run and its answer returned, a bad setting refused naming the field
//! before anything runs, one search at a time, and Cancel keeping what ran.

mod common;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::app::{assert_error, open_app, request, scratch};

fn tune(axes: Value, base: Value, extra: Value) -> Value {
    let mut r = json!({
        "base": request(base),
        "axes": {"framework": ["tch"], "compile": ["off"], "precision": ["fp32"],
                 "batch_size": [2, 4], "threads": [1]},
        "objective": "throughput",
        "budget": null,
        "confirm_repeats": 2
    });
    if let (Some(a), Some(e)) = (r["axes"].as_object_mut(), axes.as_object()) {
        for (k, v) in e {
            a.insert(k.clone(), v.clone());
        }
    }
    if let (Some(r), Some(e)) = (r.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            r.insert(k.clone(), v.clone());
        }
    }
    json!({ "request": r })
}

#[test]
fn a_search_shows_its_candidates_as_they_run_and_returns_its_answer() {
    let dir = scratch("tune");
    let app = open_app(&dir);
    assert_error(
        &app.err(
            "start_tune",
            tune(json!({}), json!({}), json!({"objective": "fastest"})),
        ),
        "bad_input",
        &["objective = fastest is not allowed"],
    );
    assert_error(
        &app.err(
            "start_tune",
            tune(json!({}), json!({}), json!({"budget": "soon"})),
        ),
        "bad_input",
        &["budget = soon is not allowed"],
    );
    assert_eq!(app.ok("list_runs", json!({}))["runs"], json!([]));

    // A watcher reads the table while the search runs, as the window does.
    let tunes = std::sync::Arc::clone(&app.studio().tunes);
    let watcher = std::thread::Builder::new()
        .name("search watcher".into())
        .spawn(move || {
            let t0 = Instant::now();
            let mut seen_training = None;
            loop {
                let s = tunes.status();
                if s.running && seen_training.is_none() {
                    if let Some(t) = &s.training {
                        assert_eq!(s.candidates.len(), 2, "{s:?}");
                        assert_eq!(s.model.as_deref(), Some("resnet_mini"));
                        seen_training = Some(t.clone());
                    }
                }
                if !s.running && seen_training.is_some() {
                    return seen_training;
                }
                assert!(t0.elapsed() < Duration::from_secs(300), "{s:?}");
                std::thread::sleep(Duration::from_millis(20));
            }
        })
        .expect("a thread");
    let found = app.ok(
        "start_tune",
        tune(json!({}), json!({"steps": 8, "window_steps": 2}), json!({})),
    );
    let training = watcher.join().expect("the watcher");
    assert!(
        training.is_some_and(|t| t.contains("resnet_mini")),
        "a run was seen training"
    );
    assert_eq!(found["ended"], "finished", "{found}");
    assert_eq!(found["objective"], "throughput");
    let candidates = found["candidates"].as_array().expect("candidates");
    assert_eq!(candidates.len(), 2, "{found}");
    let batches: Vec<i64> = candidates
        .iter()
        .map(|c| c["settings"]["batch_size"].as_i64().expect("batch"))
        .collect();
    assert_eq!(batches, [2, 4]);
    // A winner with the command that reproduces it, or a tie said so.
    if found["tie"] == json!(true) {
        assert!(
            found["verdict"].as_str().unwrap_or("").contains("tie"),
            "{found}"
        );
    } else {
        let command = found["winner"]["command"].as_str().expect("command");
        assert!(command.starts_with("trainbench run"), "{command}");
        assert!(found["winner"]["toml"].as_str().is_some(), "{found}");
    }
    assert!(!found["frontier"]["memory"]
        .as_array()
        .expect("frontier")
        .is_empty());
    // The winner on the GPUs of the peak table, each labelled projected.
    let projected = found["outlook"]["projected"].as_array().expect("outlook");
    assert!(!projected.is_empty(), "{}", found["outlook"]);
    assert!(projected.iter().all(|p| p["label"] == "projected"));

    // The status keeps the finished search: its lines, its table, its sweep.
    let status = app.ok("tune_status", json!({}));
    assert_eq!(status["running"], false, "{status}");
    assert_eq!(status["sweep_id"], found["sweep_id"]);
    assert_eq!(status["candidates"].as_array().map(Vec::len), Some(2));
    assert_eq!(status["training"], Value::Null);
    let lines: Vec<String> = serde_json::from_value(status["lines"].clone()).expect("lines");
    assert!(
        lines[0].starts_with("tuning resnet_mini for throughput: 2 candidate(s)"),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.starts_with("round 1")), "{lines:?}");
    assert_eq!(
        lines.last(),
        found["verdict"].as_str().map(str::to_owned).as_ref()
    );
    // Every run it made is stored and listed.
    let runs = app.ok("list_runs", json!({}));
    let stored = runs["runs"].as_array().expect("runs").len();
    assert_eq!(stored, found["run_ids"].as_array().expect("ids").len());
    // Compared, the search's runs lead with what it decided by.
    let view = app.ok(
        "compare",
        json!({"runIds": found["run_ids"], "grouping": "configurations", "baseline": null}),
    );
    assert_eq!(view["decided_by"], "throughput", "{}", view["decided_by"]);
    assert_eq!(app.ok("cancel_tune", json!({})), false, "none runs");
    // Its end told as a notification would tell it: the verdict.
    let told = app.told.lock().expect("notices").clone();
    let last = told.last().expect("the search's end told");
    assert_eq!(last.title, "Search finished");
    assert_eq!(
        Some(last.body.as_str()),
        found["verdict"].as_str().and_then(|v| v.lines().next())
    );
}

#[test]
fn one_search_at_a_time_alone_and_cancel_keeps_what_ran() {
    let dir = scratch("tune-cancel");
    let app = open_app(&dir);
    let tunes = std::sync::Arc::clone(&app.studio().tunes);
    let window = app.window.clone();
    // Once the first probe trains: a second search, a bisection and a sweep
    // are refused, then Cancel.
    let watcher = std::thread::Builder::new()
        .name("search canceller".into())
        .spawn(move || {
            let t0 = Instant::now();
            loop {
                if tunes.status().training.is_some() {
                    let second = common::app::call_on(
                        &window,
                        "start_tune",
                        tune(json!({}), json!({"steps": 8}), json!({})),
                    );
                    let bisection = common::app::call_on(
                        &window,
                        "start_bisect",
                        json!({"request": {
                            "framework": "jax", "good": "0.6.2", "bad": "0.7.2",
                            "metric": "throughput", "min_repeats": 3, "max_repeats": 9,
                            "base": request(json!({}))
                        }}),
                    );
                    let sweep = common::app::call_on(
                        &window,
                        "start_sweep",
                        json!({"request": request(json!({})), "skipRejected": false}),
                    );
                    assert!(tunes.cancel());
                    return (second, bisection, sweep);
                }
                assert!(t0.elapsed() < Duration::from_secs(120), "nothing trained");
                std::thread::sleep(Duration::from_millis(20));
            }
        })
        .expect("a thread");
    let found = app.ok(
        "start_tune",
        tune(json!({}), json!({"steps": 1_000_000}), json!({})),
    );
    let (second, bisection, sweep) = watcher.join().expect("the watcher");
    assert_error(
        &second.expect_err("a second search is refused"),
        "busy",
        &["a search is under way already"],
    );
    for (what, refused) in [("a bisection", bisection), ("a sweep", sweep)] {
        assert_error(
            &refused.expect_err(what),
            "busy",
            &["a search for the fastest setup is under way"],
        );
    }
    assert_eq!(found["ended"], "cancelled", "{found}");
    assert_eq!(found["winner"], Value::Null, "{found}");
    let runs = app.ok("list_runs", json!({}));
    let runs = runs["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["status"], "cancelled", "{runs:?}");
    let status = app.ok("tune_status", json!({}));
    assert_eq!(status["running"], false, "{status}");
    assert!(
        app.told.lock().expect("notices").is_empty(),
        "a search the person cancelled is not told"
    );

    // A search waits for a bisection under way, as for the queue's runs.
    let bisections = std::sync::Arc::clone(&app.studio().bisections);
    let (_cancel, running) = bisections.begin("a bisection").expect("nothing runs");
    assert_error(
        &app.err(
            "start_tune",
            tune(json!({}), json!({"steps": 8}), json!({})),
        ),
        "busy",
        &["a bisection is under way"],
    );
    drop(running);
}

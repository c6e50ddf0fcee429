//! `trainbench mcp` driven by a real MCP client: the Python `mcp` package
//! from PyPI (`crates/cli/tests/mcp_client.py`, in the environment
//! `scripts/setup.sh --test` makes) lists the tools, reads a comparison of
//! stored runs and starts a tiny real run that is then stored; the answers
//! are checked against the CLI's own `--json` output. Then raw JSON-RPC
//! through a pipe: a malformed request gets a protocol error and the server
//! answers the next one; when the client goes, the runs it queued end
//! cancelled.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{output_json, text, Db, TRAINBENCH};
use serde_json::{json, Value};
use trainbench_core::spec::Precision;
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

const TOOLS: [&str; 11] = [
    "compare",
    "describe",
    "explain",
    "models",
    "project",
    "published",
    "query",
    "run",
    "runs",
    "start_run",
    "start_tune",
];

/// The Python of the test-only environment that holds the `mcp` package.
fn client_python() -> PathBuf {
    common::test_tool(
        "tools/mcp-client/bin/python",
        "the MCP client the test drives",
    )
}

/// Two stored runs: the same configuration at two precisions.
fn two_stored_runs(db: &Db) {
    let mut store = Store::open(&db.path()).unwrap();
    for (seed, (precision, speed)) in [(Precision::Fp32, 400.0), (Precision::AmpBf16, 900.0)]
        .into_iter()
        .enumerate()
    {
        let run = FixtureRun {
            precision,
            samples_per_s: speed,
            seed: seed as u64,
            ..FixtureRun::default()
        };
        write_run(&mut store, &run).unwrap();
    }
}

/// Bad input: a tool error naming the argument; a refused configuration
/// with the field and message `run` gives; a person's own code never run
/// from a tool.
fn refusals_are_answered_as_the_cli_answers_them(db: &Db, got: &Value) {
    assert_eq!(got["compare_bad_ids"]["is_error"], true);
    assert_eq!(got["compare_bad_ids"]["json"]["error"]["field"], "ids");
    let (cli, refused) = db.run(&[
        "run",
        "--model",
        "resnet_mini",
        "--steps",
        "12",
        "--batch-size",
        "4",
        "--window-steps",
        "3",
        "--precision",
        "fp64",
        "--json",
    ]);
    assert_eq!(cli.status.code(), Some(2), "{}", text(&cli));
    assert_eq!(got["run_refused"]["is_error"], true);
    assert_eq!(got["run_refused"]["json"], refused);
    assert_eq!(refused["error"]["field"], "precision");
    // A person's own model file is never run from a tool.
    assert_eq!(got["run_own_code"]["json"]["error"]["field"], "model");
    for key in ["run_own_code_listed", "tune_own_script_listed"] {
        let e = &got[key]["json"]["error"];
        assert_eq!(e["field"], "model", "{key}: {e}");
        assert!(
            e["message"]
                .as_str()
                .unwrap_or_default()
                .contains("own code"),
            "{key}: {e}"
        );
    }
    let (cli, refused) = db.run(&["tune", "--steps", "4", "--json"]);
    assert_eq!(cli.status.code(), Some(2), "{}", text(&cli));
    assert_eq!(got["tune_refused"]["json"], refused);
    assert_eq!(refused["error"]["field"], "model");
}

#[test]
fn a_real_client_lists_the_tools_reads_a_comparison_and_starts_runs_and_a_search_that_are_stored() {
    let db = Db::new("mcp-client");
    two_stored_runs(&db);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let mut client = Command::new(client_python());
    client
        .arg(&script)
        .arg(TRAINBENCH)
        .arg(db.path())
        .env("OMP_NUM_THREADS", "1")
        .env("TRAINBENCH_NO_NVML", "1");
    let (out, got) = output_json(&mut client);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(got["server"], "trainbench", "{}", text(&out));
    assert_eq!(got["tools"], json!(TOOLS));
    assert_eq!(got["schemas"]["compare"]["required"], json!(["ids"]));

    // The comparison is `compare --json`'s, figure for figure.
    let (cli, compared) = db.run(&["compare", "1", "2", "--json"]);
    assert!(cli.status.success(), "{}", text(&cli));
    assert_eq!(got["runs_before"], json!([1, 2]));
    assert_eq!(got["compare"]["is_error"], false, "{}", got["compare"]);
    assert_eq!(got["compare"]["json"], compared);
    let throughput = |v: &Value, i: usize| v["runs"][i]["throughput_samples_per_s"].clone();
    assert!(
        throughput(&compared, 1).as_f64().unwrap() > throughput(&compared, 0).as_f64().unwrap()
    );
    assert_eq!(got["compare"]["text"][0], "2 runs compared");

    refusals_are_answered_as_the_cli_answers_them(&db, &got);

    // The other reads answer what their commands print.
    let (cli, rows) = db.run(&[
        "query",
        "SELECT run_id, precision, throughput_samples_per_s FROM q_runs WHERE run_id <= 2 ORDER BY run_id",
        "--json",
    ]);
    assert!(cli.status.success(), "{}", text(&cli));
    assert_eq!(got["query"]["json"], rows);
    assert_eq!(rows["rows"].as_array().unwrap().len(), 2);
    let (cli, described) = db.run(&["describe", "--model", "resnet_mini", "--json"]);
    assert!(cli.status.success(), "{}", text(&cli));
    assert_eq!(got["describe"]["json"], described);

    // The runs started through the client are stored and listed, one
    // after the other.
    let queued = &got["queued"];
    assert_eq!(queued["is_error"], false, "{queued}");
    assert_eq!(queued["json"]["run_ids"], json!([3]), "{queued}");
    assert_eq!(queued["json"]["status"], "queued", "{queued}");
    let started = &got["started"];
    assert_eq!(started["is_error"], false, "{started}");
    let run = &started["json"]["runs"][0];
    assert_eq!(run["status"], "completed", "{started}");
    assert_eq!(run["id"], 4);
    let (cli, runs) = db.run(&["runs", "--json"]);
    assert!(cli.status.success(), "{}", text(&cli));
    for (stored, id) in runs["runs"].as_array().unwrap()[2..].iter().zip([3, 4]) {
        assert_eq!(stored["id"], id);
        assert_eq!(stored["status"], "completed", "{stored}");
        assert_eq!(stored["model"], "resnet_mini");
        assert_eq!(stored["batch_size"], 4);
        assert!(stored["throughput_samples_per_s"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(
        runs["runs"][3]["throughput_samples_per_s"],
        run["throughput_samples_per_s"]
    );
    // As listed then: the search the client started afterwards adds its own.
    assert_eq!(
        got["runs_after"]["json"]["runs"].as_array().unwrap()[..],
        runs["runs"].as_array().unwrap()[..4]
    );
    assert_eq!(got["run"]["json"]["id"], 4);
    assert_eq!(got["run"]["json"]["status"], "completed");
    let (cli, times) = db.run(&[
        "query",
        "SELECT started_unix_ms, ended_unix_ms FROM q_runs WHERE run_id >= 3 ORDER BY run_id",
        "--json",
    ]);
    assert!(cli.status.success(), "{}", text(&cli));
    let ms = |row: usize, col: usize| times["rows"][row][col].as_i64().unwrap();
    assert!(
        ms(0, 1) <= ms(1, 0),
        "the second run started before the first ended: {times}"
    );
    searched_through_the_queue(&db, &got["tuned"]);
}

/// The search the client started ran through the server's queue: `tune
/// --json`'s document, a winner among the two batches, and every run of its
/// sweep stored as completed.
fn searched_through_the_queue(db: &Db, tuned: &Value) {
    assert_eq!(tuned["is_error"], false, "{tuned}");
    let doc = &tuned["json"];
    assert_eq!(doc["candidates"].as_array().unwrap().len(), 2, "{doc}");
    let winner = doc["winner"]["configuration"].as_str().unwrap();
    assert!(winner.contains("b2") || winner.contains("b4"), "{winner}");
    let sweep = doc["sweep_id"].as_i64().unwrap();
    let (cli, rows) = db.run(&[
        "query",
        &format!("SELECT status FROM q_runs WHERE sweep_id = {sweep}"),
        "--json",
    ]);
    assert!(cli.status.success(), "{}", text(&cli));
    let statuses = rows["rows"].as_array().unwrap();
    assert!(statuses.len() > 2, "probes and confirmations: {rows}");
    assert!(statuses.iter().all(|r| r[0] == "completed"), "{rows}");
}

/// The server's stdout, a line at a time, each within 60 s.
fn lines(stdout: std::process::ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("mcp-stdout".into())
        .spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        })
        .unwrap();
    rx
}

#[test]
fn a_malformed_request_gets_a_protocol_error_the_server_goes_on_and_its_runs_end_with_it() {
    let db = Db::new("mcp-raw");
    let mut server = db
        .cmd()
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let answers = lines(server.stdout.take().unwrap());
    let mut send = |line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    let next = || -> Value {
        let line = answers.recv_timeout(Duration::from_secs(60)).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    assert_eq!(next()["result"]["serverInfo"]["name"], "trainbench");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // JSON, but not a request: the protocol's "invalid request".
    send(r#"{"jsonrpc":"2.0","id":2,"method":42}"#);
    let error = next();
    assert_eq!(error["error"]["code"], -32600, "{error}");
    assert!(error.get("result").is_none(), "{error}");
    // Not JSON at all: nothing to answer (no id), and nothing breaks.
    send(r#"{"jsonrpc":"2.0","id":3,"method":"#);
    // A tool the server does not have: invalid params, naming the tools.
    send(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
    );
    let error = next();
    assert_eq!(error["id"], 4, "{error}");
    assert_eq!(error["error"]["code"], -32602, "{error}");
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .contains("start_run"));
    // Still serving: the tools, then a tool's own refusal of a bad argument.
    send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    let listed = next();
    assert_eq!(listed["id"], 5, "{listed}");
    assert_eq!(
        listed["result"]["tools"].as_array().unwrap().len(),
        TOOLS.len()
    );
    send(
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run","arguments":{"id":"seven"}}}"#,
    );
    let refused = next();
    assert_eq!(refused["id"], 6, "{refused}");
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_eq!(
        refused["result"]["structuredContent"]["error"]["field"], "id",
        "{refused}"
    );
    // A long sweep queued; the client goes away: the run that trains is
    // cancelled, the one still queued stored as cancelled, and the server
    // ends.
    send(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"start_run","arguments":{"settings":{"model":"resnet_mini","steps":100000,"batch_size":4,"repeats":2}}}}"#,
    );
    let queued = next();
    assert_eq!(queued["result"]["isError"], false, "{queued}");
    assert_eq!(
        queued["result"]["structuredContent"]["run_ids"],
        json!([1, 2])
    );
    drop(stdin);
    let out = server.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let (cli, runs) = db.run(&["runs", "--json"]);
    assert!(cli.status.success(), "{}", text(&cli));
    let statuses: Vec<&Value> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["status"])
        .collect();
    assert_eq!(
        statuses,
        [&json!("cancelled"), &json!("cancelled")],
        "{runs}"
    );
}

//! The desktop app reaches a remote host: a real sshd on 127.0.0.1, the
//! app's own commands (Settings' `add_host`, the wizard's `start_sweep`)
//! through Tauri's IPC, and a run trained there by the PyTorch environment
//! as the host's Python. The kit sent is the command-line program installed
//! beside the app's binary, never the app itself. A remote run nothing
//! follows (its CLI killed) is followed again from the app, or abandoned and
//! deleted.

mod common;

use std::time::Duration;

use serde_json::json;
use trainbench_app::envs;

use common::app::{open_app, request, scratch};
use common::sshd::Servers;

#[test]
fn a_run_started_from_the_desktop_trains_on_a_remote_host_with_the_cli_as_kit() {
    let torch = envs::resolve(trainbench_core::Framework::Pytorch, None)
        .expect("the PyTorch environment (scripts/setup.sh installs it)")
        .python;
    let dir = scratch("remote");
    let servers = Servers::start(&dir);
    std::env::set_var("TRAINBENCH_HOME", dir.join("home"));
    std::env::set_var("TRAINBENCH_SSH_CONFIG", dir.join("ssh_config"));
    // A control folder too long for ssh's socket names (a clone in a deep
    // folder, a long home): the studio connects without sharing.
    let deep = dir
        .join("cm")
        .join("a-folder-deep-enough-that-no-socket-fits-in-it");
    std::fs::create_dir_all(&deep).expect("control folder");
    std::env::set_var("TRAINBENCH_SSH_CONTROL_DIR", &deep);
    std::env::remove_var("TRAINBENCH_REMOTE_BINARY");
    // As the package installs them: the CLI beside the app's binary (here,
    // this test's binary in target/debug/deps).
    let exe = std::env::current_exe().expect("test binary");
    let cli = common::built_binary("trainbench");
    let beside = exe.with_file_name("trainbench");
    if std::fs::symlink_metadata(&beside).is_err() {
        let _ = std::os::unix::fs::symlink(&cli, &beside);
    }

    let app = open_app(&dir);
    let host = app.ok(
        "add_host",
        json!({"request": {
            "name": "box", "url": servers.url("remote root"), "pythons": [torch],
            "env": [], "slurm": false, "partition": null, "peers": []
        }}),
    );
    assert_eq!(
        host["inventory"]["frameworks"][0]["framework"], "pytorch",
        "{host}"
    );
    steps_were_said(&app);
    let kit = host["inventory"]["kit_dir"].as_str().expect("kit folder");
    let sent = std::fs::read(format!("{kit}/bin/trainbench")).expect("the kit's binary");
    assert!(
        sent == std::fs::read(&cli).expect("the CLI"),
        "the kit's binary is not the command-line program"
    );

    let started = app.ok(
        "start_sweep",
        json!({"request": request(json!({
            "framework": ["pytorch"], "host": "box", "batch_size": [8], "steps": 10,
            "window_steps": 5
        })), "skipRejected": false}),
    );
    let id = started["run_ids"][0].as_i64().expect("a run");
    app.wait_idle(Duration::from_secs(300));
    let run = app.ok("run_detail", json!({"runId": id}));
    assert_eq!(run["detail"]["status"], "completed", "{run}");
    assert!(
        run["detail"]["environment"]
            .as_str()
            .is_some_and(|e| e.starts_with("box:")),
        "{run}"
    );

    // Runs started from a terminal whose studio was killed: nothing reads them.
    let db = dir.join("studio.sqlite");
    let orphan = |steps: &str| -> i64 {
        let mut cli_run = std::process::Command::new(&cli)
            .arg("--db")
            .arg(&db)
            .args([
                "run",
                "--host",
                "box",
                "--framework",
                "pytorch",
                "--model",
                "resnet_mini",
                "--batch-size",
                "8",
                "--threads",
                "1",
                "--window-steps",
                "5",
                "--steps",
                steps,
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.join(format!("cli-{steps}.log"))).expect("log"))
            .spawn()
            .expect("the CLI");
        let deadline = std::time::Instant::now() + Duration::from_secs(180);
        let id = loop {
            let runs = app.ok("list_runs", json!({}))["runs"].take();
            let running = runs.as_array().and_then(|r| {
                r.iter()
                    .find(|r| r["status"] == "running")
                    .and_then(|r| r["id"].as_i64())
            });
            if let Some(id) = running {
                let v = app.ok("run_detail", json!({"runId": id}));
                if v["detail"]["windows"]
                    .as_array()
                    .is_some_and(|w| !w.is_empty())
                {
                    break id;
                }
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no remote run started: {}",
                std::fs::read_to_string(dir.join(format!("cli-{steps}.log"))).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        cli_run.kill().expect("killed");
        cli_run.wait().expect("reaped");
        id
    };

    // Followed again from the app: it finishes in the app's queue.
    let id = orphan("100");
    let v = app.ok("run_detail", json!({"runId": id}));
    assert_eq!(v["remote"]["waiting"], true, "{}", v["remote"]);
    assert_eq!(v["remote"]["followed"], false, "{}", v["remote"]);
    app.ok("attach_run", json!({"runId": id}));
    app.wait_idle(Duration::from_secs(300));
    let v = app.ok("run_detail", json!({"runId": id}));
    assert_eq!(
        v["detail"]["status"], "completed",
        "{}",
        v["detail"]["status_reason"]
    );
    assert_eq!(v["remote"]["waiting"], false);
    assert_eq!(
        v["detail"]["windows"].as_array().map(Vec::len),
        Some(20),
        "every window"
    );

    // A host gone for good: abandoned from the app, then deleted.
    let id = orphan("3000");
    let v = app.ok("run_detail", json!({"runId": id}));
    let pid_file = std::fs::read_to_string(format!(
        "{}/agent.pid",
        v["remote"]["dir"].as_str().expect("the run's folder")
    ))
    .expect("agent.pid");
    let agent = pid_file.split_whitespace().next().expect("pid").to_owned();
    let _ = std::process::Command::new("pkill")
        .args(["-KILL", "-P", &agent])
        .status();
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &agent])
        .status();
    app.ok("abandon_run", json!({"runId": id}));
    let v = app.ok("run_detail", json!({"runId": id}));
    assert_eq!(v["detail"]["status"], "interrupted");
    assert!(
        v["detail"]["status_reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("abandoned:")),
        "{}",
        v["detail"]["status_reason"]
    );
    assert_eq!(app.ok("delete_runs", json!({"runIds": [id]})), json!(1));
    drop(servers);
}

/// Each step of the host's add was said as it started (Settings shows them
/// while it waits).
fn steps_were_said(app: &common::app::App) {
    let steps = app.ok("host_steps", json!({}));
    let said = steps["lines"].to_string();
    assert_eq!(steps["running"], false, "{steps}");
    for step in [
        "connecting to ssh://",
        "sending the kit to",
        "asking box for its name",
        "saving box",
    ] {
        assert!(said.contains(step), "{step:?} not in {said}");
    }
}

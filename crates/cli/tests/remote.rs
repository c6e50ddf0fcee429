//! Remote hosts over SSH with real parts: an OpenSSH server on 127.0.0.1
//! (started here with its own host key, a test user key and a second server
//! reached through ProxyJump), the system `ssh` client, the kit copied over,
//! and the studio's agent training with the PyTorch and JAX environments as
//! the "host's" Python. A killed ssh client and a killed studio lose
//! nothing; a cancel reaches the host. (Slurm: `slurm.rs`.)
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;

use common::ssh::{
    journal_readers, kill, kill_agent, no_journal_readers_left, python, run_dir, status,
    wait_running, windows, Lab,
};
use common::sshd::user;
use common::text;

const RUN: [&str; 12] = [
    "run",
    "--host",
    "box",
    "--model",
    "resnet_mini",
    "--batch-size",
    "16",
    "--threads",
    "1",
    "--window-steps",
    "5",
    "--json",
];

#[test]
fn a_remote_host_runs_sweeps_that_survive_a_killed_ssh_client_and_a_killed_studio() {
    let torch = python("pytorch");
    let jax = python("jax");
    let lab = Lab::new("remote");
    let db = lab.dir().join("studio.sqlite");

    // Added: the kit copied, its frameworks found in the two interpreters.
    let (out, v) = lab.run(&[
        "host",
        "add",
        "box",
        &lab.url("remote-root"),
        "--python",
        &torch,
        "--python",
        &jax,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let inv = &v["hosts"][0]["inventory"];
    let found: Vec<&str> = inv["frameworks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["framework"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["pytorch", "jax"], "{inv}");
    assert!(
        inv["kit_dir"]
            .as_str()
            .unwrap()
            .contains("remote-root/kit/"),
        "{inv}"
    );
    assert!(inv["cpu_cores"].as_u64().unwrap() >= 1, "{inv}");
    // Through a jump host, with the client's own config (ProxyJump alias).
    let (out, v) = lab.run(&[
        "host",
        "add",
        "far",
        &format!("ssh://jumped{}", lab.dir().join("far-root").display()),
        "--python",
        &torch,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        v["hosts"][0]["inventory"]["frameworks"][0]["framework"],
        "pytorch"
    );
    let (out, v) = lab.run(&["host", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(v["hosts"].as_array().unwrap().len(), 2);

    // A sweep on the host: stored, summarised and compared like local runs.
    let mut args = RUN.to_vec();
    args.extend(["--framework", "pytorch,jax", "--steps", "30"]);
    let (out, v) = lab.run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let runs = v["runs"].as_array().unwrap();
    for r in runs {
        assert_eq!(r["status"], "completed", "{r}");
        assert!(r["throughput_samples_per_s"].as_f64().unwrap() > 0.0, "{r}");
        let shown = status(&lab, r["id"].as_i64().unwrap());
        assert!(
            shown["environment"].as_str().unwrap().starts_with("box:"),
            "{shown}"
        );
        assert!(shown["provenance"]["hostname"].is_string(), "{shown}");
    }
    let (a, b) = (runs[0]["id"].to_string(), runs[1]["id"].to_string());
    let (out, c) = lab.run(&["compare", &a, &b, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(c["comparison"]["entries"].as_array().unwrap().len(), 2);
    let csv = lab.dir().join("remote.csv");
    let (out, _) = lab.run(&["export", "csv", &a, &b, "-o", csv.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // Two nodes without Slurm: the host and a peer (the second sshd) reached
    // from the host with its ssh; PyTorch through torchrun's static
    // rendezvous at the host, JAX through jax.distributed, TensorFlow
    // through MultiWorkerMirroredStrategy.
    let tf = python("tensorflow");
    let peer = format!(
        "ssh://{}@127.0.0.1:{}{}",
        user(),
        lab.servers.b.port,
        lab.dir().join("peer-root").display()
    );
    let ssh_config = format!(
        "TRAINBENCH_SSH_CONFIG={}",
        lab.dir().join("ssh_config").display()
    );
    let (out, v) = lab.run(&[
        "host",
        "add",
        "pair",
        &lab.url("pair-root"),
        "--python",
        &peer_named_first(&lab, &torch),
        "--python",
        &jax,
        "--python",
        &tf,
        "--peer",
        &peer,
        "--env",
        &ssh_config,
        "--env",
        "TRAINBENCH_RDZV_HOST=127.0.0.1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        v["hosts"][0]["inventory"]["peer_kits"][0]
            .as_str()
            .unwrap()
            .contains("peer-root/kit/"),
        "{v}"
    );
    let mut args = RUN.to_vec();
    args[2] = "pair";
    args.extend([
        "--framework",
        "pytorch,jax,tensorflow",
        "--nodes",
        "2",
        "--steps",
        "30",
    ]);
    let (out, v) = lab.run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for r in v["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "completed", "{r}");
        let shown = status(&lab, r["id"].as_i64().unwrap());
        assert_eq!(shown["hello"]["world_size"].as_u64(), Some(2), "{shown}");
        assert_eq!(shown["devices"].as_u64(), Some(2), "{shown}");
    }
    let (out, _) = lab.run(&[
        "run",
        "--host",
        "pair",
        "--framework",
        "pytorch",
        "--nodes",
        "3",
        "--steps",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("it has 2 node(s) (itself and its peers)"),
        "{}",
        text(&out)
    );

    // The ssh client reading the journal killed at window 3 of 20: the studio
    // reconnects from the stored offset; every window arrives exactly once.
    let mut args = RUN.to_vec();
    args.extend(["--framework", "pytorch", "--steps", "100"]);
    let studio = lab
        .cmd()
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = wait_running(&lab, 3);
    let readers = journal_readers(studio.id());
    assert!(!readers.is_empty(), "no ssh client reads the journal");
    for pid in readers {
        kill(pid, "-KILL");
    }
    let out = studio.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let shown = status(&lab, id);
    assert_eq!(shown["status"], "completed", "{shown}");
    let w = windows(&db, id);
    assert_eq!(w, (0..w.len() as i64).collect::<Vec<_>>(), "windows {w:?}");
    assert_eq!(
        w.len(),
        20,
        "99 timed steps in windows of 5 (the last of 4)"
    );

    // The studio itself killed mid-run: the run stays running (not
    // interrupted), and `attach` reads the rest.
    let mut studio = lab
        .cmd()
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let id = wait_running(&lab, 3);
    kill(studio.id(), "-KILL");
    let _ = studio.wait();
    let (_, v) = lab.run(&["runs", "--json"]);
    let row = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap()
        .clone();
    assert_eq!(row["status"], "running", "{row}");
    let (out, v) = lab.run(&["attach", &id.to_string(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(v["runs"][0]["status"], "completed", "{v}");
    let w = windows(&db, id);
    assert_eq!(w, (0..20).collect::<Vec<_>>(), "windows {w:?}");
    let (out, _) = lab.run(&["attach", &id.to_string()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("read to the end already"),
        "{}",
        text(&out)
    );

    // Ctrl-C cancels on the host: the worker there stops, the run is cancelled.
    let studio = lab
        .cmd()
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = wait_running(&lab, 2);
    kill(studio.id(), "-INT");
    let out = studio.wait_with_output().unwrap();
    let shown = status(&lab, id);
    assert_eq!(shown["status"], "cancelled", "{}\n{shown}", text(&out));
    let dir = run_dir(&lab, id);
    let pid = common::ssh::agent_pid(&dir);
    // Gone, or a zombie left for an init that does not reap (in a container).
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(") ")
                .is_some_and(|(_, r)| !r.starts_with('Z'))
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while alive() {
        assert!(Instant::now() < deadline, "the agent still runs");
        std::thread::sleep(Duration::from_millis(200));
    }
    let journal = std::fs::read_to_string(PathBuf::from(&dir).join("journal.jsonl")).unwrap();
    assert!(journal.trim_end().ends_with('}') && journal.contains("\"status\":\"cancelled\""));
    // Everything the journal holds was read: the stored offset is its size.
    let offset: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT journal_offset FROM remote_runs WHERE run_id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(offset as usize, journal.len());

    // The agent killed on the host: no outcome will come; the run fails saying so.
    let studio = lab
        .cmd()
        .env("TRAINBENCH_REMOTE_ENDED_GRACE_S", "3")
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = wait_running(&lab, 2);
    kill_agent(&run_dir(&lab, id)); // its worker too, orphaned: not the studio's to find
    let out = studio.wait_with_output().unwrap();
    let shown = status(&lab, id);
    assert_eq!(shown["status"], "failed", "{}\n{shown}", text(&out));
    assert!(
        shown["status_reason"]
            .as_str()
            .unwrap()
            .contains("ended without writing the run's outcome"),
        "{shown}"
    );

    // Refused with the field named: an unknown host, a framework the host
    // lacks, a bad address.
    for (args, says) in [
        (
            vec!["run", "--host", "nowhere", "--steps", "3"],
            "host = nowhere is not allowed",
        ),
        (
            vec!["run", "--host", "far", "--framework", "jax", "--steps", "3"],
            "framework = jax is not allowed on host far",
        ),
        (
            vec!["host", "add", "x", "box:22"],
            "url = box:22 is not allowed",
        ),
    ] {
        let (out, _) = lab.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{args:?}: {}", text(&out));
    }
}

/// The PyTorch interpreter as a wrapper that names every node but the
/// first `127.0.0.1` (torchrun's own `--local-addr`), as on a cluster whose
/// peer's name sorts before the host's: node 0, whose output is the run's,
/// must still hold global rank 0.
fn peer_named_first(lab: &Lab, torch: &str) -> String {
    let first = "[ \"${TRAINBENCH_NODE_RANK:-0}\" = 0 ] || export PET_LOCAL_ADDR=127.0.0.1\n";
    python_wrapper(&lab.dir().join("torch-peer-first"), first, torch)
}

/// A shell script at `path` that runs `first`, then `python` with its own
/// arguments (a venv's python must be started by its own path); its path.
fn python_wrapper(path: &Path, first: &str, python: &str) -> String {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{first}exec '{python}' \"$@\"\n")).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// Shell metacharacters (backticks, `$()`, `;`, quotes, `%`, redirections,
/// random mixes) in every string the studio sends to a host — interpreter
/// paths, variables, the host's folder — reach it as data: nothing they
/// spell runs, and each comes back unchanged. An interpreter path with
/// spaces trains; paths that cannot work are refused where they are typed
/// and where hosts.json is read; a kit changed on the host is sent again;
/// two `host add` at once both keep their host.
#[test]
fn remote_hosts_run_only_what_the_user_typed() {
    let torch = python("pytorch");
    let lab = Lab::new("hostile");
    let mark = lab.dir().join("MARK").display().to_string();
    let mut pythons: Vec<String> = [
        "/x$(touch M)",
        "/x`touch M`",
        "/x;touch M",
        "/x'; touch M; '",
        "/x\"; touch M; \"",
        "/x && touch M",
        "/x|touch M",
        "/x > M",
        "/x%n%s%C$(touch M)",
        "/x\\$(touch M)\\",
        "python3;id",
        "/$(touch M)",
    ]
    .iter()
    .map(|p| p.replace('M', &mark))
    .collect();
    let alphabet: Vec<char> = "$()`;'\"\\%&|<>*?{}!# ab".chars().collect();
    let mut x: u64 = 42;
    for _ in 0..12 {
        let mut w = String::from("/r");
        for _ in 0..12 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            w.push(alphabet[(x >> 33) as usize % alphabet.len()]);
        }
        pythons.push(format!("{w}$(touch {mark})"));
    }
    // An interpreter in a folder with spaces (a wrapper: a venv's python
    // must be started by its own path).
    let spaced = python_wrapper(&lab.dir().join("my pythons/torch python"), "", &torch);
    pythons.push(spaced.clone());

    let url = lab.url("root with spaces");
    let mut args = vec!["host", "add", "box", &url, "--json"];
    let x_env = format!("TB_X=$(touch {mark})");
    let y_env = format!("TB_Y='; touch {mark}; '`touch {mark}`");
    args.extend(["--env", &x_env, "--env", &y_env]);
    for p in &pythons {
        args.extend(["--python", p]);
    }
    let (out, v) = lab.run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!Path::new(&mark).exists(), "a command ran on the host");
    let inv = &v["hosts"][0]["inventory"];
    assert_eq!(inv["frameworks"][0]["framework"], "pytorch", "{inv}");
    assert_eq!(inv["frameworks"][0]["python"], spaced.as_str(), "{inv}");
    assert!(
        inv["root_dir"]
            .as_str()
            .unwrap()
            .ends_with("root with spaces"),
        "{inv}"
    );
    let left: Vec<&str> = inv["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    for p in &pythons {
        assert!(
            left.iter().any(|l| l.starts_with(&format!("jax in {p}: "))),
            "{p:?} did not come back unchanged: {left:?}"
        );
    }

    // A model file run through the interpreter with spaces, the variables
    // exported: the file alone travels with the job, checked there.
    common::ssh::run_a_model_file(&lab, "box", &mark);
    assert!(!Path::new(&mark).exists(), "a command ran on the host");

    // Interpreter paths that cannot work are refused where they are typed …
    for bad in ["-c", "~/venv/bin/python", "venv/bin/python", "a\nb", ""] {
        let flag = format!("--python={bad}");
        let (out, v) = lab.run(&["host", "add", "other", &url, &flag, "--json"]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out));
        assert_eq!(v["error"]["field"], "python", "{bad:?}: {v}");
    }
    // … and where the host list is read back.
    let hosts_json = lab.dir().join("home/hosts.json");
    let good = std::fs::read_to_string(&hosts_json).unwrap();
    for (from, to) in [
        (format!("\"{spaced}\""), "\"-c\"".to_owned()),
        ("\"box\"".to_owned(), "\"box;touch x\"".to_owned()),
        ("\"TB_X\"".to_owned(), "\"TB X\"".to_owned()),
    ] {
        std::fs::write(&hosts_json, good.replacen(&from, &to, 1)).unwrap();
        let (out, _) = lab.run(&["host", "list", "--json"]);
        assert_eq!(out.status.code(), Some(2), "{to}: {}", text(&out));
        assert!(text(&out).contains("hosts.json: host"), "{}", text(&out));
    }
    std::fs::write(&hosts_json, &good).unwrap();

    // A kit changed on the host is sent again whole.
    let kit = inv["kit_dir"].as_str().unwrap();
    let file = "share/trainbench/workers/python/trainbench_worker/__main__.py";
    let original = std::fs::read(format!("{kit}/{file}")).unwrap();
    std::fs::write(
        format!("{kit}/{file}"),
        b"import os; os.system('touch MARK')\n",
    )
    .unwrap();
    let (out, _) = lab.run(&["host", "check", "box", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read(format!("{kit}/{file}")).unwrap(), original);

    // Two `host add` at once: both hosts kept.
    let spawn = |name: &str| {
        lab.cmd()
            .args(["host", "add", name, &url, "--python", &torch, "--json"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let (mut a, mut b) = (spawn("left"), spawn("right"));
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
    let (_, v) = lab.run(&["host", "list", "--json"]);
    let mut names: Vec<&str> = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["box", "left", "right"]);
    assert!(!Path::new(&mark).exists(), "a command ran on the host");
}

/// A run whose host is gone for good (the studio killed, then the host's
/// agent and server stopped) waits for `attach`; it cannot be deleted while
/// it waits; `attach --abandon` stores it as interrupted with what was read,
/// and it can then be deleted.
#[test]
fn a_remote_run_whose_host_is_gone_can_be_abandoned_then_deleted() {
    let torch = python("pytorch");
    let mut lab = Lab::new("gone");
    let url = lab.url("root");
    let (out, _) = lab.run(&["host", "add", "box", &url, "--python", &torch, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut args = RUN.to_vec();
    args.extend(["--framework", "pytorch", "--steps", "5000"]);
    let mut studio = lab
        .cmd()
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let id = wait_running(&lab, 1);
    studio.kill().unwrap();
    studio.wait().unwrap();
    // The host goes: its agent (with the worker) and its ssh server.
    let dir = run_dir(&lab, id);
    kill_agent(&dir);
    // Nothing that read the journal for the killed studio lives on, though
    // the journal will never grow again: its ssh client here, the shell and
    // the `tail` on the host.
    no_journal_readers_left(&dir);
    lab.servers.a.stop();
    let stored = windows(&lab.dir().join("studio.sqlite"), id).len();
    assert!(stored >= 1);

    let n = id.to_string();
    let (out, _) = lab.run(&["delete", &n, "--yes"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a waiting run is not deleted: {}",
        text(&out)
    );
    let (out, v) = lab.run(&["attach", &n, "--abandon", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let shown = status(&lab, id);
    assert_eq!(shown["status"], "interrupted", "{v}\n{shown}");
    assert!(
        shown["status_reason"]
            .as_str()
            .unwrap()
            .starts_with("abandoned: the studio stopped waiting for host box"),
        "{shown}"
    );
    assert_eq!(
        windows(&lab.dir().join("studio.sqlite"), id).len(),
        stored,
        "what was read is kept"
    );
    let (out, v) = lab.run(&["attach", &n, "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "run", "{v}");
    let (out, _) = lab.run(&["delete", &n, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// A test's sshd whose port another process took first is not mistaken for
/// the one listening there: it exits, and another port is tried (a server
/// that answered on a taken port was once taken for the test's own).
#[test]
fn an_sshd_whose_port_is_taken_is_not_taken_for_the_one_there() {
    let scratch = common::Scratch::new("sshd-taken-port");
    let key = scratch.0.join("host-key");
    common::sshd::keygen(&key);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    assert!(common::sshd::Sshd::try_start(&scratch.0, "taken", &key, port).is_none());
    let free = common::sshd::Sshd::start(&scratch.0, "free");
    assert_ne!(free.port, port);
}

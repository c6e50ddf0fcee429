//! The CLI's remote lab: [`Servers`] and a studio home, driven through the
//! `trainbench` binary; helpers to watch its database.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use trainbench_app::envs;

use super::sshd::Servers;
use super::{output_json, Scratch, TRAINBENCH};

/// Two sshd servers, their client config and a studio home in a scratch
/// folder (the servers stop before the folder goes).
pub struct Lab {
    pub servers: Servers,
    pub scratch: Scratch,
}

impl Lab {
    pub fn new(tag: &str) -> Lab {
        let scratch = Scratch::new(tag);
        let servers = Servers::start(&scratch.0);
        Lab { servers, scratch }
    }

    pub fn dir(&self) -> &Path {
        &self.scratch.0
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new(TRAINBENCH);
        c.arg("--db")
            .arg(self.dir().join("studio.sqlite"))
            .env("TRAINBENCH_HOME", self.dir().join("home"))
            .env("TRAINBENCH_SSH_CONFIG", self.dir().join("ssh_config"))
            .env("TRAINBENCH_SSH_CONTROL_DIR", self.dir().join("cm"))
            .env("TRAINBENCH_NO_NVML", "1")
            .env("OMP_NUM_THREADS", "1");
        c
    }

    pub fn run(&self, args: &[&str]) -> (Output, Value) {
        output_json(self.cmd().args(args))
    }

    pub fn url(&self, folder: &str) -> String {
        self.servers.url(folder)
    }
}

pub fn python(framework: &str) -> String {
    let e = envs::resolve(framework.parse().unwrap(), None).unwrap_or_else(|e| {
        panic!("{framework}: {e} — run `make setup` (scripts/setup.sh installs every framework)")
    });
    e.python.display().to_string()
}

pub fn windows(db: &Path, id: i64) -> Vec<i64> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT idx FROM windows WHERE run_id = ?1 ORDER BY idx")
        .unwrap();
    stmt.query_map([id], |r| r.get(0))
        .unwrap()
        .collect::<Result<Vec<i64>, _>>()
        .unwrap()
}

pub fn status(lab: &Lab, id: i64) -> Value {
    let (_, v) = lab.run(&["show", &id.to_string(), "--json"]);
    v
}

/// Waits until run `id` (the newest) is running with at least `n` windows stored.
pub fn wait_running(lab: &Lab, n: usize) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let Ok(conn) = rusqlite::Connection::open(lab.dir().join("studio.sqlite")) {
            let id: Option<i64> = conn
                .query_row(
                    "SELECT MAX(id) FROM runs WHERE status = 'running'",
                    [],
                    |r| r.get(0),
                )
                .unwrap_or(None);
            if let Some(id) = id {
                if windows(&lab.dir().join("studio.sqlite"), id).len() >= n {
                    return id;
                }
            }
        }
        assert!(Instant::now() < deadline, "no run reached {n} windows");
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub fn kill(pid: u32, signal: &str) {
    Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
}

/// A model file that trains only from the copy sent with a job: beside it on
/// the studio's machine lies `helper.py`, which the host's copy must not have.
const MODEL_ON_HOST: &str = r##"
import pathlib

here = pathlib.Path(__file__)
if (here.parent / "helper.py").exists() or "/runs/" not in str(here):
    raise RuntimeError(f"trained from {here}, not from the copy sent with the job")

from torch import nn


def build():
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 4 * 4, 3))
"##;

/// A model file (in a folder whose name a shell would expand) run on
/// `host`: the file alone travels with the job and trains there; a kept copy
/// that is not the file the run hashed is refused on the host before
/// anything runs (it would touch `mark`).
pub fn run_a_model_file(lab: &Lab, host: &str, mark: &str) {
    let files = lab.dir().join("my files; $(touch x)");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("helper.py"), "VALUE = 1\n").unwrap();
    let path = files.join("model `id`.py");
    std::fs::write(&path, MODEL_ON_HOST).unwrap();
    let model = format!("{}:build", path.display());
    let run = || {
        lab.run(&[
            "run",
            "--host",
            host,
            "--framework",
            "pytorch",
            "--model",
            &model,
            "--input-shape",
            "3x4x4",
            "--num-classes",
            "3",
            "--batch-size",
            "2",
            "--steps",
            "3",
            "--threads",
            "1",
            "--json",
        ])
    };
    let (out, v) = run();
    assert_eq!(out.status.code(), Some(0), "{}", super::text(&out));
    assert_eq!(v["runs"][0]["status"], "completed", "{v}");
    let (_, shown) = lab.run(&["show", &v["runs"][0]["id"].to_string(), "--json"]);
    let sha = shown["spec"]["model_sha256"].as_str().unwrap().to_owned();

    // The studio's kept copy forged under the file's hash: the host refuses it.
    let forged =
        format!("import pathlib\npathlib.Path({mark:?}).write_text('ran')\n{MODEL_ON_HOST}");
    let db = rusqlite::Connection::open(lab.dir().join("studio.sqlite")).unwrap();
    db.execute(
        "UPDATE model_files SET bytes = ?1 WHERE sha256 = ?2",
        rusqlite::params![forged.as_bytes(), sha],
    )
    .unwrap();
    let (out, v) = run();
    assert_eq!(out.status.code(), Some(1), "{}", super::text(&out));
    let (_, failed) = lab.run(&["show", &v["runs"][0]["id"].to_string(), "--json"]);
    let reason = failed["status_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(&format!("not to the run's SHA-256 {sha}")),
        "{failed}"
    );
    assert!(!Path::new(mark).exists(), "the forged copy ran on the host");
}

/// The folder of remote run `id` on the host.
pub fn run_dir(lab: &Lab, id: i64) -> String {
    rusqlite::Connection::open(lab.dir().join("studio.sqlite"))
        .unwrap()
        .query_row("SELECT dir FROM remote_runs WHERE run_id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap()
}

/// The pid of the agent of the run in `dir` (its `agent.pid` holds
/// "PID START-TIME").
pub fn agent_pid(dir: &str) -> u32 {
    let pid_file = std::fs::read_to_string(Path::new(dir).join("agent.pid")).unwrap();
    pid_file.split_whitespace().next().unwrap().parse().unwrap()
}

/// The agent of the run in `dir` killed on the host, with its workers.
pub fn kill_agent(dir: &str) {
    let agent = agent_pid(dir);
    let workers = super::children(agent);
    kill(agent, "-KILL");
    for w in workers {
        kill(w, "-KILL");
    }
}

/// The ssh clients a studio process started that read a journal.
pub fn journal_readers(parent: u32) -> Vec<u32> {
    super::children(parent)
        .into_iter()
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains("journal.jsonl")
        })
        .collect()
}

/// Waits (20 s at most) until no process reads the journal of the run in
/// `dir`: no ssh client here, no shell or `tail` on the host (zombies have
/// no command line).
pub fn no_journal_readers_left(dir: &str) {
    let readers = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
                let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
                (cmd.contains(dir) && cmd.contains("journal.jsonl"))
                    .then(|| format!("{pid}: {cmd}"))
            })
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = readers();
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "orphaned journal readers: {left:#?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

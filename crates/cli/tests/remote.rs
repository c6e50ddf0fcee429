//! Remote hosts over SSH with real parts: an OpenSSH server on 127.0.0.1
//! (started here with its own host key, a test user key and a second server
//! reached through ProxyJump), the system `ssh` client, the kit copied over,
//! and the studio's agent training with the PyTorch and JAX environments as
//! the "host's" Python. A killed ssh client and a killed studio lose
//! nothing; a cancel reaches the host. A single-machine Slurm cluster
//! (munged, slurmctld and two slurmd started here, one CPU per node) runs a
//! 2-node PyTorch gloo job through sbatch and srun, and a cancelled one.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use trainbench_app::envs;

mod common;

use common::{output_json, text, Scratch, TRAINBENCH};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn user() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

/// An sshd on 127.0.0.1 that accepts the test key; stopped when dropped.
struct Sshd {
    child: Child,
    port: u16,
}

impl Sshd {
    fn start(dir: &Path, name: &str) -> Sshd {
        // sshd started as root wants its privilege-separation folder.
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = free_port();
        let host_key = dir.join(format!("{name}-host-key"));
        keygen(&host_key);
        let config = dir.join(format!("{name}-sshd_config"));
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\nPidFile {}\nLogLevel ERROR\n",
                host_key.display(),
                dir.join("authorized_keys").display(),
                dir.join(format!("{name}.pid")).display(),
            ),
        )
        .unwrap();
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("/usr/sbin/sshd (Debian's openssh-server; scripts/setup.sh installs it)");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "sshd on port {port} never listened"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Sshd { child, port }
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two sshd servers, a client config (test key, known hosts, a ProxyJump
/// alias) and a studio home; the shared ssh connections closed when dropped.
struct Lab {
    scratch: Scratch,
    a: Sshd,
    b: Sshd,
}

impl Lab {
    fn new(tag: &str) -> Lab {
        let scratch = Scratch::new(tag);
        let dir = scratch.0.clone();
        let key = dir.join("user-key");
        keygen(&key);
        std::fs::copy(dir.join("user-key.pub"), dir.join("authorized_keys")).unwrap();
        let a = Sshd::start(&dir, "a");
        let b = Sshd::start(&dir, "b");
        let u = user();
        std::fs::write(
            dir.join("ssh_config"),
            format!(
                "Host jumped\n  HostName 127.0.0.1\n  Port {}\n  User {u}\n  ProxyJump {u}@127.0.0.1:{}\n\
                 Host *\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  \
                 StrictHostKeyChecking accept-new\n  LogLevel ERROR\n",
                b.port,
                a.port,
                key.display(),
                dir.join("known_hosts").display()
            ),
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("cm")).unwrap();
        Lab { scratch, a, b }
    }

    fn dir(&self) -> &Path {
        &self.scratch.0
    }

    fn cmd(&self) -> Command {
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

    fn run(&self, args: &[&str]) -> (Output, Value) {
        output_json(self.cmd().args(args))
    }

    fn url(&self, folder: &str) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}{}",
            user(),
            self.a.port,
            self.dir().join(folder).display()
        )
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Ok(rd) = std::fs::read_dir(self.dir().join("cm")) {
            for socket in rd.flatten() {
                let _ = Command::new("ssh")
                    .arg("-o")
                    .arg(format!("ControlPath={}", socket.path().display()))
                    .args(["-O", "exit", "x"])
                    .output();
            }
        }
    }
}

fn python(framework: &str) -> String {
    let e = envs::resolve(framework.parse().unwrap(), None).unwrap_or_else(|e| {
        panic!("{framework}: {e} — run `make setup` (scripts/setup.sh installs every framework)")
    });
    e.python.display().to_string()
}

fn windows(db: &Path, id: i64) -> Vec<i64> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT idx FROM windows WHERE run_id = ?1 ORDER BY idx")
        .unwrap();
    stmt.query_map([id], |r| r.get(0))
        .unwrap()
        .collect::<Result<Vec<i64>, _>>()
        .unwrap()
}

fn status(lab: &Lab, id: i64) -> Value {
    let (_, v) = lab.run(&["show", &id.to_string(), "--json"]);
    v
}

/// Waits until run `id` (the newest) is running with at least `n` windows stored.
fn wait_running(lab: &Lab, n: usize) -> i64 {
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

/// The ssh clients a studio process started that read a journal.
fn journal_readers(parent: u32) -> Vec<u32> {
    common::children(parent)
        .into_iter()
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains("journal.jsonl")
        })
        .collect()
}

fn kill(pid: u32, signal: &str) {
    Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
}

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
    // from the host with its ssh; PyTorch through torchrun's c10d
    // rendezvous, JAX through jax.distributed, TensorFlow through
    // MultiWorkerMirroredStrategy.
    let tf = python("tensorflow");
    let peer = format!(
        "ssh://{}@127.0.0.1:{}{}",
        user(),
        lab.b.port,
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
        &torch,
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

    // The ssh client reading the journal killed mid-run: the studio
    // reconnects from the stored offset; every window arrives exactly once.
    let mut args = RUN.to_vec();
    args.extend(["--framework", "pytorch", "--steps", "200"]);
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
        40,
        "199 timed steps in windows of 5 (the last of 4)"
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
    assert_eq!(w, (0..40).collect::<Vec<_>>(), "windows {w:?}");
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
    let dir: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT dir FROM remote_runs WHERE run_id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap();
    let pid = std::fs::read_to_string(PathBuf::from(&dir).join("agent.pid")).unwrap();
    // Gone, or a zombie left for an init that does not reap (in a container).
    let alive = || {
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|s| {
            s.rsplit_once(") ")
                .is_some_and(|(_, r)| !r.starts_with('Z'))
        })
    };
    let deadline = Instant::now() + Duration::from_secs(20);
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

    // The agent killed on the host: no outcome will come; the run fails
    // saying so (after 10 s for the journal to catch up).
    let studio = lab
        .cmd()
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = wait_running(&lab, 2);
    let dir: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT dir FROM remote_runs WHERE run_id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap();
    let agent: u32 = std::fs::read_to_string(PathBuf::from(&dir).join("agent.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let workers = common::children(agent);
    kill(agent, "-KILL");
    for w in workers {
        kill(w, "-KILL"); // the host's worker, orphaned: not the studio's to find
    }
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

/// A Slurm cluster on this machine: munged, slurmctld and two slurmd ("n1",
/// "n2", one CPU each, on 127.0.0.1), all on free ports and in `dir`;
/// stopped when dropped.
struct Slurm {
    dir: PathBuf,
    conf: PathBuf,
}

fn daemon(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", text(&out));
}

impl Slurm {
    fn start(dir: &Path) -> Slurm {
        let dir = dir.join("slurm");
        for d in ["state", "spool", "log"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let key = dir.join("munge.key");
        std::fs::write(
            &key,
            (0..1024).map(|i| (i * 7 + 13) as u8).collect::<Vec<u8>>(),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        let socket = dir.join("munge.sock");
        daemon(
            Command::new("munged")
                .arg("--force")
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--key-file={}", key.display()))
                .arg(format!("--pid-file={}", dir.join("munged.pid").display()))
                .arg(format!(
                    "--log-file={}",
                    dir.join("log/munged.log").display()
                ))
                .arg(format!("--seed-file={}", dir.join("munge.seed").display())),
        );
        let host =
            String::from_utf8_lossy(&Command::new("hostname").arg("-s").output().unwrap().stdout)
                .trim()
                .to_owned();
        let (ctld, n1, n2) = (free_port(), free_port(), free_port());
        let d = dir.display();
        let conf = dir.join("slurm.conf");
        std::fs::write(
            &conf,
            format!(
                "ClusterName=tb\nSlurmctldHost={host}(127.0.0.1)\nSlurmctldPort={ctld}\nSlurmUser={u}\n\
                 AuthType=auth/munge\nAuthInfo=socket={sock}\nCredType=cred/munge\n\
                 StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool/%n\n\
                 SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd-%n.pid\n\
                 SlurmctldLogFile={d}/log/slurmctld.log\nSlurmdLogFile={d}/log/slurmd-%n.log\n\
                 ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSelectType=select/cons_tres\n\
                 SelectTypeParameters=CR_CPU\nJobAcctGatherType=jobacct_gather/none\n\
                 AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\nMpiDefault=none\n\
                 ReturnToService=2\nMinJobAge=600\nKillWait=20\n\
                 NodeName=n1 NodeHostname={host} NodeAddr=127.0.0.1 Port={n1} CPUs=1 RealMemory=4000 State=UNKNOWN\n\
                 NodeName=n2 NodeHostname={host} NodeAddr=127.0.0.1 Port={n2} CPUs=1 RealMemory=4000 State=UNKNOWN\n\
                 PartitionName=tb Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP\n",
                u = user(),
                sock = socket.display(),
            ),
        )
        .unwrap();
        daemon(Command::new("slurmctld").arg("-f").arg(&conf));
        for n in ["n1", "n2"] {
            daemon(Command::new("slurmd").arg("-f").arg(&conf).args(["-N", n]));
        }
        let slurm = Slurm { dir, conf };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = Command::new("sinfo")
                .args(["-h", "-o", "%T %D"])
                .env("SLURM_CONF", &slurm.conf)
                .output()
                .unwrap();
            if String::from_utf8_lossy(&out.stdout).trim() == "idle 2" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the Slurm nodes never became idle: {}",
                text(&out)
            );
            std::thread::sleep(Duration::from_millis(300));
        }
        slurm
    }

    fn job_state(&self, id: &str) -> String {
        let out = Command::new("scontrol")
            .args(["show", "job", id])
            .env("SLURM_CONF", &self.conf)
            .output()
            .unwrap();
        let t = String::from_utf8_lossy(&out.stdout).into_owned();
        t.split_whitespace()
            .find_map(|w| w.strip_prefix("JobState="))
            .unwrap_or("")
            .to_owned()
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        for pid_file in [
            "slurmd-n1.pid",
            "slurmd-n2.pid",
            "slurmctld.pid",
            "munged.pid",
        ] {
            if let Ok(pid) = std::fs::read_to_string(self.dir.join(pid_file)) {
                let _ = Command::new("kill").arg(pid.trim()).status();
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// `trainbench run` on the test cluster: resnet_mini, batch 8, one thread,
/// windows of 5.
fn cluster_run<'a>(framework: &'a str, nodes: &'a str, steps: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "--host",
        "cluster",
        "--framework",
        framework,
        "--nodes",
        nodes,
        "--model",
        "resnet_mini",
        "--batch-size",
        "8",
        "--threads",
        "1",
        "--steps",
        steps,
        "--window-steps",
        "5",
        "--json",
    ]
}

#[test]
fn a_slurm_cluster_runs_two_node_jobs_of_every_python_framework_and_cancels_one() {
    let torch = python("pytorch");
    let jax = python("jax");
    let tf = python("tensorflow");
    let lab = Lab::new("slurm");
    let slurm = Slurm::start(lab.dir());
    let conf = format!("SLURM_CONF={}", slurm.conf.display());
    let (out, v) = lab.run(&[
        "host",
        "add",
        "cluster",
        &lab.url("cluster-root"),
        "--python",
        &torch,
        "--python",
        &jax,
        "--python",
        &tf,
        "--slurm",
        "--partition",
        "tb",
        "--env",
        &conf,
        "--env",
        "TRAINBENCH_RDZV_HOST=127.0.0.1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = &v["hosts"][0]["inventory"]["slurm"];
    assert_eq!(
        (s["nodes"].as_u64(), s["cpus_per_node"].as_u64()),
        (Some(2), Some(1)),
        "{v}"
    );

    // One node, then two: stored, with the world size and the scaling.
    let mut ids = Vec::new();
    for nodes in ["1", "2"] {
        let (out, v) = lab.run(&cluster_run("pytorch", nodes, "30"));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let r = &v["runs"][0];
        assert_eq!(r["status"], "completed", "{r}");
        let id = r["id"].as_i64().unwrap();
        let shown = status(&lab, id);
        assert_eq!(
            shown["hello"]["world_size"].as_u64(),
            Some(nodes.parse().unwrap()),
            "{shown}"
        );
        assert_eq!(
            shown["devices"].as_u64(),
            Some(nodes.parse().unwrap()),
            "{shown}"
        );
        let job: String = rusqlite::Connection::open(lab.dir().join("studio.sqlite"))
            .unwrap()
            .query_row(
                "SELECT slurm_job FROM remote_runs WHERE run_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(slurm.job_state(&job), "COMPLETED");
        ids.push(id.to_string());
    }
    // JAX (jax.distributed) and TensorFlow (MultiWorkerMirroredStrategy)
    // over two nodes: one process per node.
    let (out, v) = lab.run(&cluster_run("jax,tensorflow", "2", "30"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for (r, scheme) in v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["jax.distributed", "MultiWorkerMirroredStrategy"])
    {
        assert_eq!(r["status"], "completed", "{r}");
        let shown = status(&lab, r["id"].as_i64().unwrap());
        assert_eq!(shown["hello"]["world_size"].as_u64(), Some(2), "{shown}");
        assert!(
            shown["hello"]["execution"]
                .as_str()
                .unwrap()
                .contains(scheme),
            "{shown}"
        );
    }
    let (out, c) = lab.run(&["compare", &ids[0], &ids[1], "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Nodes scale as devices do: one series over 1 and 2 devices, with the
    // 2-node entry's efficiency against one node.
    let series = &c["comparison"]["scaling"][0]["points"];
    assert_eq!(series.as_array().map(Vec::len), Some(2), "{c}");
    assert_eq!(
        (series[0][0].as_u64(), series[1][0].as_u64()),
        (Some(1), Some(2)),
        "{c}"
    );
    let e = c["comparison"]["entries"][1]["scaling_efficiency"]
        .as_f64()
        .unwrap();
    assert!(e > 0.0, "{e}");
    // Exported like local runs: the PDF names the host's runs and their scaling.
    let pdf = lab.dir().join("cluster.pdf");
    let (out, _) = lab.run(&[
        "export",
        "pdf",
        &ids[0],
        &ids[1],
        "-o",
        pdf.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let txt = common::pdf_text(&pdf);
    assert!(txt.contains("cluster:pytorch"), "{txt}");

    // Ctrl-C: scancel; the agent journals the cancellation.
    let studio = lab
        .cmd()
        .args(cluster_run("pytorch", "2", "2000"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = wait_running(&lab, 2);
    kill(studio.id(), "-INT");
    let out = studio.wait_with_output().unwrap();
    let shown = status(&lab, id);
    assert_eq!(shown["status"], "cancelled", "{}\n{shown}", text(&out));
    let job: String = rusqlite::Connection::open(lab.dir().join("studio.sqlite"))
        .unwrap()
        .query_row(
            "SELECT slurm_job FROM remote_runs WHERE run_id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while slurm.job_state(&job) == "COMPLETING" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(slurm.job_state(&job), "CANCELLED");

    // Several nodes only on a Slurm host, and no more than it has.
    let (out, _) = lab.run(&[
        "host",
        "add",
        "plain",
        &lab.url("plain-root"),
        "--python",
        &torch,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for (host, nodes, says) in [
        ("cluster", "3", "it has 2 node(s) in its partition"),
        ("plain", "2", "several nodes run through Slurm"),
    ] {
        let (out, _) = lab.run(&[
            "run",
            "--host",
            host,
            "--nodes",
            nodes,
            "--framework",
            "pytorch",
            "--steps",
            "3",
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(says), "{}", text(&out));
    }
    let (out, _) = lab.run(&["run", "--nodes", "2", "--steps", "3"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("nodes = 2 is not allowed on this machine"),
        "{}",
        text(&out)
    );
}

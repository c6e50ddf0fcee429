//! A Ray cluster started here on 127.0.0.1 (a head and two worker nodes,
//! each with ports of its own; one worker declares two GPUs it does not
//! have), reached only through its job API: the host's check, a run that
//! trains on a node and is stored, a run asking for a GPU placed on the node
//! that declares them, a studio killed while following and the run attached
//! again, a cancelled run stopped on the cluster, and what is refused.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;

use common::ssh::{kill, python};
use common::sshd::free_port;
use common::{output_json, text, Scratch, TRAINBENCH};

/// The `ray` program of the test-only environment (`scripts/setup.sh --test`).
fn ray_program() -> PathBuf {
    common::test_tool("tools/ray/bin/ray", "the Ray the test starts")
}

/// A head and two worker nodes on this machine; stopped when dropped.
struct Cluster {
    ray: PathBuf,
    temp: PathBuf,
    api_port: u16,
}

impl Cluster {
    fn start() -> Cluster {
        let ray = ray_program();
        // Short: Ray's sockets live under it (a socket path has 107 bytes).
        let temp = PathBuf::from(format!("/tmp/tb-ray-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&temp);
        let gcs = free_port();
        let api_port = free_port();
        let mut head = vec![
            "--head".to_owned(),
            format!("--port={gcs}"),
            "--dashboard-host=127.0.0.1".into(),
            format!("--dashboard-port={api_port}"),
            format!("--ray-client-server-port={}", free_port()),
            format!("--temp-dir={}", temp.display()),
            "--num-cpus=1".into(),
        ];
        head.extend(node_ports());
        let c = Cluster {
            ray,
            temp,
            api_port,
        };
        c.ray_start(&head);
        let join = format!("--address=127.0.0.1:{gcs}");
        let mut gpu_node = vec![join.clone(), "--num-cpus=1".into(), "--num-gpus=2".into()];
        gpu_node.extend(node_ports());
        c.ray_start(&gpu_node);
        let mut cpu_node = vec![join, "--num-cpus=1".into()];
        cpu_node.extend(node_ports());
        c.ray_start(&cpu_node);
        c.wait_for_nodes(3);
        c
    }

    fn ray_start(&self, args: &[String]) {
        let out = Command::new(&self.ray)
            .arg("start")
            .args([
                "--node-ip-address=127.0.0.1",
                "--object-store-memory=100000000",
                "--disable-usage-stats",
            ])
            .args(args)
            .env("RAY_USAGE_STATS_ENABLED", "0")
            .env("OMP_NUM_THREADS", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "ray start {args:?}: {}", text(&out));
    }

    /// `GET path` of the job API (what the studio does not read is asked
    /// here, over a plain connection).
    fn get(&self, path: &str) -> Value {
        use std::io::{Read, Write};
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.api_port)) else {
            return Value::Null;
        };
        let ask = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        let mut raw = Vec::new();
        if s.write_all(ask.as_bytes()).is_err() || s.read_to_end(&mut raw).is_err() {
            return Value::Null;
        }
        let body = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(&[][..], |i| &raw[i + 4..]);
        serde_json::from_slice(body).unwrap_or(Value::Null)
    }

    /// The live nodes: (id, GPUs).
    fn nodes(&self) -> Vec<(String, f64)> {
        let v = self.get("/api/v0/nodes?detail=1");
        v["data"]["result"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter(|n| n["state"] == "ALIVE")
            .map(|n| {
                (
                    n["node_id"].as_str().unwrap_or("").to_owned(),
                    n["resources_total"]["GPU"].as_f64().unwrap_or(0.0),
                )
            })
            .collect()
    }

    fn wait_for_nodes(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while self.nodes().len() < n {
            assert!(
                Instant::now() < deadline,
                "the cluster has {:?}",
                self.nodes()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn job(&self, id: &str) -> Value {
        self.get(&format!("/api/jobs/{id}"))
    }

    /// The job once Ray says it ended as `status` (the run's outcome is
    /// journaled before the agent exits, so Ray may still say RUNNING).
    fn job_ended(&self, id: &str, status: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let job = self.job(id);
            if job["status"] == status || Instant::now() > deadline {
                return job;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    fn url(&self) -> String {
        format!("ray://127.0.0.1:{}", self.api_port)
    }
}

/// The ports one node of several on one machine must not share.
fn node_ports() -> Vec<String> {
    vec![
        format!("--dashboard-agent-listen-port={}", free_port()),
        format!("--dashboard-agent-grpc-port={}", free_port()),
        format!("--metrics-export-port={}", free_port()),
        format!("--runtime-env-agent-port={}", free_port()),
    ]
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(&self.ray)
            .args(["stop", "--force"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.temp);
    }
}

struct Studio {
    scratch: Scratch,
}

impl Studio {
    fn cmd(&self) -> Command {
        let mut c = Command::new(TRAINBENCH);
        c.arg("--db")
            .arg(self.db())
            .env("TRAINBENCH_HOME", self.scratch.0.join("home"))
            .env("TRAINBENCH_NO_NVML", "1")
            .env("OMP_NUM_THREADS", "1");
        c
    }

    fn db(&self) -> PathBuf {
        self.scratch.0.join("studio.sqlite")
    }

    fn run(&self, args: &[&str]) -> (Output, Value) {
        output_json(self.cmd().args(args))
    }

    fn place_job(&self, id: i64) -> String {
        rusqlite::Connection::open(self.db())
            .unwrap()
            .query_row(
                "SELECT place_job FROM remote_runs WHERE run_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
    }

    fn show(&self, id: i64) -> Value {
        self.run(&["show", &id.to_string(), "--json"]).1
    }

    /// The newest run once it is running with `n` windows stored.
    fn wait_running(&self, n: i64) -> i64 {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            if let Ok(conn) = rusqlite::Connection::open(self.db()) {
                let found: Option<(i64, i64)> = conn
                    .query_row(
                        "SELECT r.id, (SELECT COUNT(*) FROM windows w WHERE w.run_id = r.id) FROM runs r WHERE r.status = 'running' ORDER BY r.id DESC LIMIT 1",
                        [],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .ok();
                if let Some((id, w)) = found.filter(|&(_, w)| w >= n) {
                    let _ = w;
                    return id;
                }
            }
            assert!(Instant::now() < deadline, "no run reached {n} windows");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Studio {
    /// The runs' folders on the nodes (this machine) go with the test.
    fn drop(&mut self) {
        let Ok(conn) = rusqlite::Connection::open(self.db()) else {
            return;
        };
        let Ok(mut stmt) = conn.prepare("SELECT dir FROM remote_runs") else {
            return;
        };
        let dirs: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .map(|rows| rows.flatten().collect())
            .unwrap_or_default();
        for dir in dirs
            .iter()
            .filter(|d| d.starts_with("/tmp/trainbench-ray/"))
        {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn cpu_run<'a>(steps: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "run",
        "--host",
        "rc",
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
        "--json",
    ];
    v.extend(more);
    v
}

/// The processes of this machine (the cluster's nodes) marked as the Ray
/// job `job`'s: its agent, its worker.
fn processes_of(job: &str) -> Vec<String> {
    let mark = format!("TRAINBENCH_RAY_JOB={job}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let p = entry.path();
        let Ok(env) = std::fs::read(p.join("environ")) else {
            continue;
        };
        if env.split(|&b| b == 0).any(|v| v == mark.as_bytes()) {
            let cmd = std::fs::read(p.join("cmdline")).unwrap_or_default();
            found.push(String::from_utf8_lossy(&cmd).replace('\0', " "));
        }
    }
    found
}

/// Nothing of the job is left running (after it had an agent and a worker).
fn nothing_left_of(job: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = processes_of(job);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still running for {job}: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn a_ray_cluster_checks_runs_places_attaches_and_cancels_through_its_job_api() {
    let torch = python("pytorch");
    let jax = python("jax");
    let cluster = Cluster::start();
    let studio = Studio {
        scratch: Scratch::new("ray"),
    };
    let ray_python = cluster.ray.with_file_name("python").display().to_string();
    let (out, v) = studio.run(&[
        "host",
        "add",
        "rc",
        &cluster.url(),
        "--python",
        &torch,
        "--python",
        &jax,
        "--python",
        &ray_python,
        "--env",
        "TRAINBENCH_RDZV_HOST=127.0.0.1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let inv = &v["hosts"][0]["inventory"];
    assert_eq!(inv["cluster"]["scheduler"], "Ray", "{v}");
    assert_eq!(inv["cluster"]["nodes"].as_u64(), Some(3), "{v}");
    assert_eq!(inv["cluster"]["gpus_per_node"].as_u64(), Some(2), "{v}");
    assert_eq!(inv["frameworks"][0]["framework"], "pytorch", "{v}");
    assert_eq!(
        inv["cluster"]["ray_python"].as_str(),
        Some(ray_python.as_str()),
        "{v}"
    );

    // A run trains on a node of the cluster and is stored like any other.
    let (out, v) = studio.run(&cpu_run("30", &["--device", "cpu"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = &v["runs"][0];
    assert_eq!(r["status"], "completed", "{r}");
    let id = r["id"].as_i64().unwrap();
    assert!(r["throughput_samples_per_s"].as_f64().unwrap() > 0.0, "{r}");
    let shown = studio.show(id);
    assert!(
        shown["environment"].as_str().unwrap().starts_with("rc:"),
        "{shown}"
    );
    assert!(shown["provenance"]["hostname"].is_string(), "{shown}");
    let job = studio.place_job(id);
    assert_eq!(cluster.job_ended(&job, "SUCCEEDED")["status"], "SUCCEEDED");

    // Asking for a GPU: Ray places the run on the node that declares GPUs
    // (which has none to give, so the run fails there, saying so).
    let (out, v) = studio.run(&cpu_run("5", &["--device", "cuda"]));
    let r = &v["runs"][0];
    assert_eq!(r["status"], "failed", "{}", text(&out));
    let gpu_node: Vec<String> = cluster
        .nodes()
        .into_iter()
        .filter(|(_, g)| *g > 0.0)
        .map(|(n, _)| n)
        .collect();
    let placed = cluster.job(&studio.place_job(r["id"].as_i64().unwrap()));
    assert_eq!(
        placed["driver_node_id"].as_str(),
        gpu_node.first().map(String::as_str),
        "{placed}"
    );

    two_nodes_on_two_ray_nodes(&studio, &cluster);
    killed_while_following_then_attached(&studio, &cluster);
    cancelled_on_the_cluster(&studio, &cluster);

    // Refused before anything runs: more nodes than the cluster has, Slurm
    // or peers with Ray.
    let (out, _) = studio.run(&cpu_run("5", &["--device", "cpu", "--nodes", "4"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out)
            .contains("nodes = 4 is not allowed on host rc: it has 3 node(s); expected at most 3"),
        "{}",
        text(&out)
    );
    let (out, _) = studio.run(&["host", "add", "x", &cluster.url(), "--slurm"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("not allowed with --slurm or --peer"),
        "{}",
        text(&out)
    );
    let (out, _) = studio.run(&["host", "add", "x", "ray://127.0.0.1:1"]);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("cannot reach the Ray cluster at ray://127.0.0.1:1"),
        "{}",
        text(&out)
    );
}

/// Two nodes, PyTorch (torchrun over gloo) and JAX (jax.distributed): node
/// 0 where Ray started the job, node 1 a Ray task on another node.
fn two_nodes_on_two_ray_nodes(studio: &Studio, cluster: &Cluster) {
    for framework in ["pytorch", "jax"] {
        let mut args = cpu_run("30", &["--device", "cpu", "--nodes", "2"]);
        args[4] = framework;
        let (out, v) = studio.run(&args);
        assert_eq!(out.status.code(), Some(0), "{framework}: {}", text(&out));
        let r = &v["runs"][0];
        assert_eq!(r["status"], "completed", "{r}");
        let id = r["id"].as_i64().unwrap();
        let shown = studio.show(id);
        assert_eq!(shown["hello"]["world_size"].as_u64(), Some(2), "{shown}");
        let job = cluster.job(&studio.place_job(id));
        let said = format!(
            "{}\n{}",
            text(&out),
            shown["stderr_tail"].as_str().unwrap_or("")
        );
        let peer_node = said
            .split("[ray] node 1 on Ray node ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("{framework}: no node 1 said: {said}"));
        let first = job["driver_node_id"].as_str().unwrap();
        assert_ne!(peer_node, first, "{framework}: node 1 ran where node 0 did");
        assert!(
            cluster.nodes().iter().any(|(n, _)| n == peer_node),
            "{peer_node}"
        );
    }
}

/// The studio killed while it follows: the run goes on on the cluster, and
/// `attach` reads its log from the stored offset to the end.
fn killed_while_following_then_attached(studio: &Studio, cluster: &Cluster) {
    let follower = studio
        .cmd()
        .args(cpu_run("150", &["--device", "cpu"]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let id = studio.wait_running(2);
    kill(follower.id(), "-KILL");
    let _ = follower.wait_with_output();
    let (out, v) = studio.run(&["attach", &id.to_string(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let shown = studio.show(id);
    assert_eq!(shown["status"], "completed", "{v}\n{shown}");
    let job = studio.place_job(id);
    assert_eq!(cluster.job_ended(&job, "SUCCEEDED")["status"], "SUCCEEDED");
    // Every window once: read on from the offset, nothing twice.
    let windows: Vec<i64> = common::ssh::windows(&studio.db(), id);
    let mut unique = windows.clone();
    unique.dedup();
    assert_eq!(windows, unique);
}

/// Ctrl-C: the job stopped on the cluster, the run stored as cancelled, and
/// nothing of it left running.
fn cancelled_on_the_cluster(studio: &Studio, cluster: &Cluster) {
    let follower = studio
        .cmd()
        .args(cpu_run("100000", &["--device", "cpu"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = studio.wait_running(2);
    let job = studio.place_job(id);
    let running = processes_of(&job);
    assert!(
        running.iter().any(|c| c.contains("agent run")),
        "{running:?}"
    );
    assert!(
        running.iter().any(|c| c.contains("trainbench_worker")),
        "{running:?}"
    );
    kill(follower.id(), "-INT");
    let out = follower.wait_with_output().unwrap();
    let shown = studio.show(id);
    assert_eq!(shown["status"], "cancelled", "{}\n{shown}", text(&out));
    assert_eq!(cluster.job_ended(&job, "STOPPED")["status"], "STOPPED");
    nothing_left_of(&job);
}

/// The ports the cluster is started on are never given twice: a Ray head
/// once failed to start because two of its services were given one port.
#[test]
fn the_ports_a_test_is_given_are_all_different() {
    let ports: Vec<u16> = (0..2000).map(|_| free_port()).collect();
    let mut distinct = ports.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), ports.len(), "a port was given twice");
}

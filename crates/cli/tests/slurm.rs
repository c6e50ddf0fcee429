//! A single-machine Slurm cluster reached over a real sshd (munged,
//! slurmctld and two slurmd started here, one CPU per node): 2-node jobs of
//! every Python framework through sbatch and srun, and a cancelled one.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::ssh::{kill, python, status, wait_running, Lab};
use common::sshd::{free_port, user};
use common::text;

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
    let s = &v["hosts"][0]["inventory"]["cluster"];
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
                "SELECT place_job FROM remote_runs WHERE run_id = ?1",
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
            "SELECT place_job FROM remote_runs WHERE run_id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while slurm.job_state(&job) == "COMPLETING" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(slurm.job_state(&job), "CANCELLED");

    // A model file travels with the batch job, checked on the node.
    let mark = lab.dir().join("MARK").display().to_string();
    common::ssh::run_a_model_file(&lab, "cluster", &mark);
    several_nodes_only_where_there_are(&lab);
}

/// Several nodes only on a Slurm host, no more than it has, and one for a
/// model file (sent to the node the job starts on); refused before anything
/// is queued.
fn several_nodes_only_where_there_are(lab: &Lab) {
    let torch = python("pytorch");
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
    let model = lab.dir().join("net.py");
    std::fs::write(&model, "def build():\n    return None\n").unwrap();
    let model = format!("{}:build", model.display());
    let (out, v) = lab.run(&[
        "run",
        "--host",
        "cluster",
        "--nodes",
        "2",
        "--framework",
        "pytorch",
        "--model",
        &model,
        "--input-shape",
        "3x4x4",
        "--num-classes",
        "3",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "nodes", "{v}");
}

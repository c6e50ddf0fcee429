//! A host's check: the kit sent (or found), then one script that reports
//! the host's name, cores, root folder, each interpreter's frameworks and
//! GPUs, and Slurm's nodes; the peers get the kit and are checked for the
//! interpreter the host uses.

use serde::Deserialize;
use trainbench_core::Framework;

use crate::address::{HostUrl, RayUrl};
use crate::bad;
use crate::error::{RemoteError, RemoteResult};
use crate::hosts::{ClusterInventory, Inventory, RemoteFramework, RemoteHost};
use crate::kit::{install_kit, local_kit, LocalKit};
use crate::place::ray::RayApi;
use crate::shell::{host_sh, quote, remote_sh};
use crate::url::SshUrl;

#[derive(Deserialize)]
struct FrameworkInfo {
    version: String,
    #[serde(default)]
    gpus: Vec<String>,
}

/// Checks `h`, saying each step as it starts (`say`).
pub(crate) fn check(h: &RemoteHost, say: &mut dyn FnMut(&str)) -> RemoteResult<Inventory> {
    match &h.url {
        HostUrl::Ssh(url) => check_ssh(h, url, say),
        HostUrl::Ray(url) => check_ray(h, url, say),
    }
}

/// A host reached over ssh: the kit sent, then the inventory script there.
fn check_ssh(h: &RemoteHost, url: &SshUrl, say: &mut dyn FnMut(&str)) -> RemoteResult<Inventory> {
    let kit = local_kit()?;
    say(&format!(
        "connecting to {url} with ssh and looking for the studio's kit {}",
        kit.version
    ));
    let kit_dir = install_kit(url, &kit, say)?;
    say(&format!(
        "asking {} for its name, cores{}, and each interpreter's frameworks and GPUs ({})",
        h.name,
        if h.slurm.is_some() {
            ", Slurm's nodes"
        } else {
            ""
        },
        h.pythons.join(", ")
    ));
    let script = inventory_script(h, &quote(&kit_dir), &quote(&url.root));
    let out = host_sh(h, &script, None)?;
    let mut slurm: Option<ClusterInventory> = h.slurm.as_ref().map(|_| ClusterInventory {
        scheduler: "Slurm".into(),
        version: String::new(),
        nodes: 0,
        cpus_per_node: u32::MAX,
        gpus_per_node: u32::MAX,
        ray_python: None,
    });
    let mut inv = empty_inventory(kit_dir, &kit);
    read_answers(h, &out, &mut inv, slurm.as_mut())?;
    if let Some(mut s) = slurm {
        if s.nodes == 0 {
            return Err(bad(
                "host",
                format!(
                    "host = {}: sinfo lists no nodes{}",
                    h.name,
                    h.slurm
                        .as_ref()
                        .and_then(|x| x.partition.as_deref())
                        .map(|p| format!(" in partition {p}"))
                        .unwrap_or_default()
                ),
            ));
        }
        s.cpus_per_node = s.cpus_per_node.max(1);
        inv.cpu_cores = s.cpus_per_node;
        inv.cluster = Some(s);
    }
    // Peers: the same kit, and the interpreter the host found, there.
    inv.peer_kits = install_on_peers(h, &kit, &inv, say)?;
    Ok(finished(inv))
}

/// A Ray cluster: its version and live nodes from the head, the kit
/// uploaded as a package, then the inventory script run as a job on a node.
fn check_ray(h: &RemoteHost, url: &RayUrl, say: &mut dyn FnMut(&str)) -> RemoteResult<Inventory> {
    let kit = local_kit()?;
    let api = RayApi::of(url);
    let unreachable = |e: String| {
        bad(
            "host",
            format!("cannot reach the Ray cluster at {url}: {e}"),
        )
    };
    say(&format!(
        "asking the Ray cluster at {url} for its version and nodes"
    ));
    let version = api.version().map_err(unreachable)?;
    let nodes = api.nodes().map_err(unreachable)?;
    if nodes.is_empty() {
        return Err(bad(
            "host",
            format!(
                "host = {}: the Ray cluster at {url} has no live node",
                h.name
            ),
        ));
    }
    let working_dir = api.ensure_kit(&kit, say).map_err(RemoteError::Internal)?;
    say(&format!(
        "asking a node of {} for its name, cores, and each interpreter's frameworks and GPUs ({})",
        h.name,
        h.pythons.join(", ")
    ));
    let mut script = inventory_script(h, "\"$PWD\"", &quote(crate::place::ray::RUNS_ROOT));
    // Which interpreter imports ray (by its index: no path is echoed back).
    for (i, py) in h.pythons.iter().enumerate() {
        script.push_str(&format!(
            "{} -c 'import ray' >/dev/null 2>&1 && echo \"ray_python {i}\"; ",
            quote(py)
        ));
    }
    let id = format!(
        "trainbench-check-{}-{}",
        h.name,
        trainbench_store::now_unix_ms()
    );
    let out = api
        .run_script(
            &id,
            &script,
            &working_dir,
            &h.env,
            std::time::Duration::from_secs(300),
        )
        .map_err(|e| bad("host", format!("host = {}: {e}", h.name)))?;
    let mut inv = empty_inventory(working_dir, &kit);
    read_answers(h, &out, &mut inv, None)?;
    let ray_python = out
        .lines()
        .filter_map(|l| l.strip_prefix("ray_python "))
        .filter_map(|i| h.pythons.get(i.trim().parse::<usize>().ok()?))
        .next()
        .cloned();
    let most = |f: fn(&(f64, f64)) -> f64| nodes.iter().map(f).fold(0.0, f64::max) as u32;
    inv.cluster = Some(ClusterInventory {
        scheduler: "Ray".into(),
        version,
        nodes: u32::try_from(nodes.len()).unwrap_or(u32::MAX),
        cpus_per_node: most(|n| n.0).max(1),
        gpus_per_node: most(|n| n.1),
        ray_python,
    });
    Ok(finished(inv))
}

fn empty_inventory(kit_dir: String, kit: &LocalKit) -> Inventory {
    Inventory {
        checked_unix_ms: trainbench_store::now_unix_ms(),
        hostname: String::new(),
        cpu_cores: 1,
        kit_dir,
        root_dir: String::new(),
        kit_version: kit.version.clone(),
        frameworks: Vec::new(),
        gpus: Vec::new(),
        cluster: None,
        peer_kits: Vec::new(),
        left_out: Vec::new(),
    }
}

/// The inventory script's answer, line by line, into `inv`.
fn read_answers(
    h: &RemoteHost,
    out: &str,
    inv: &mut Inventory,
    mut slurm: Option<&mut ClusterInventory>,
) -> RemoteResult<()> {
    for line in out.lines() {
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "slurm_version" => {
                if let Some(s) = slurm.as_deref_mut() {
                    s.version = rest.trim().to_owned();
                }
            }
            "slurm_nodes" => read_slurm_nodes(h, rest, slurm.as_deref_mut())?,
            "hostname" => inv.hostname = rest.trim().to_owned(),
            "cores" => inv.cpu_cores = rest.trim().parse().unwrap_or(1),
            "root" => inv.root_dir = rest.trim().to_owned(),
            "fw" => read_framework(h, rest, inv),
            _ => {}
        }
    }
    Ok(())
}

/// Only what no interpreter had stays left out; the libtorch worker is not
/// sent.
fn finished(mut inv: Inventory) -> Inventory {
    let found: Vec<Framework> = inv.frameworks.iter().map(|f| f.framework).collect();
    inv.left_out
        .retain(|l| !found.iter().any(|f| l.starts_with(&format!("{f} in "))));
    inv.left_out.push(
        "tch: the libtorch worker is not sent to remote hosts yet (it must match the host's libtorch)".into(),
    );
    inv
}

/// What the host is asked: its name, cores and root; each interpreter's
/// answer for each Python framework, by index (its path is never echoed
/// back); Slurm's version and nodes on a Slurm host.
/// `kit` and `root` are shell words already (quoted, or `"$PWD"`).
fn inventory_script(h: &RemoteHost, kit: &str, root: &str) -> String {
    let mut script = format!(
        "echo \"hostname $(hostname)\"; echo \"cores $(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)\"; mkdir -p {root}/runs; echo \"root $(cd {root} && pwd)\"; "
    );
    // Each interpreter answers by its index in the host's list: its path
    // is never part of what the host prints back.
    for (i, py) in h.pythons.iter().enumerate() {
        for fw in Framework::PYTHON {
            script.push_str(&format!(
                "o=$(PYTHONPATH={kit}/share/trainbench/workers/python {p} -m trainbench_worker {f} info 2>&1 | tail -n 1); echo \"fw {f} {i} $o\"; ",
                p = quote(py),
                f = fw.as_str(),
            ));
        }
    }
    if let Some(s) = &h.slurm {
        let part = s
            .partition
            .as_deref()
            .map(|p| format!(" -p {}", quote(p)))
            .unwrap_or_default();
        script.push_str(&format!(
            "echo \"slurm_version $(sinfo --version 2>&1)\"; sinfo -h{part} -o '%D %c %G' 2>&1 | sed 's/^/slurm_nodes /'; "
        ));
    }
    script
}

/// One `sinfo` line (`COUNT CPUS GRES` per group of like nodes; GRES
/// `gpu:8`, `gpu:h100:8` or `(null)`) added to the cluster's inventory.
fn read_slurm_nodes(
    h: &RemoteHost,
    rest: &str,
    slurm: Option<&mut ClusterInventory>,
) -> RemoteResult<()> {
    let mut f = rest.split_whitespace();
    let (Some(n), Some(c)) = (
        f.next().and_then(|x| x.parse::<u32>().ok()),
        f.next()
            .and_then(|x| x.trim_end_matches('+').parse::<u32>().ok()),
    ) else {
        return Err(bad(
            "host",
            format!(
                "host = {}: sinfo said {rest:?}: is Slurm there (and SLURM_CONF set with --env)?",
                h.name
            ),
        ));
    };
    let gpus = f
        .next()
        .unwrap_or("")
        .split(',')
        .filter(|g| g.starts_with("gpu"))
        .filter_map(|g| g.split('(').next()?.rsplit(':').next()?.parse::<u32>().ok())
        .sum::<u32>();
    if let Some(s) = slurm {
        s.nodes += n;
        s.cpus_per_node = s.cpus_per_node.min(c);
        s.gpus_per_node = s.gpus_per_node.min(gpus);
    }
    Ok(())
}

/// One interpreter's answer for one framework: found (its version and
/// GPUs), or left out with what it said.
fn read_framework(h: &RemoteHost, rest: &str, inv: &mut Inventory) {
    let mut parts = rest.splitn(3, ' ');
    let (Some(fw), Some(py), Some(answer)) = (
        parts.next(),
        parts
            .next()
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| h.pythons.get(i)),
        parts.next(),
    ) else {
        return;
    };
    let Ok(framework) = Framework::parse(fw) else {
        return;
    };
    if inv.frameworks.iter().any(|f| f.framework == framework) {
        return;
    }
    match serde_json::from_str::<FrameworkInfo>(answer) {
        Ok(i) => {
            if i.gpus.len() > inv.gpus.len() {
                inv.gpus.clone_from(&i.gpus);
            }
            inv.frameworks.push(RemoteFramework {
                framework,
                version: i.version.split('+').next().unwrap_or(&i.version).to_owned(),
                python: py.to_owned(),
                gpus: i.gpus,
            });
        }
        Err(_) => inv
            .left_out
            .push(format!("{framework} in {py}: {}", answer.trim())),
    }
}

/// The kit sent to each peer, whose interpreters must be where the host's
/// are; the peers' kit folders.
fn install_on_peers(
    h: &RemoteHost,
    kit: &LocalKit,
    inv: &Inventory,
    say: &mut dyn FnMut(&str),
) -> RemoteResult<Vec<String>> {
    let mut peer_kits = Vec::new();
    for p in &h.peers {
        say(&format!(
            "peer {p}: the kit, and the interpreters the host uses"
        ));
        let kit_dir = install_kit(p, kit, say)?;
        let pythons = inv
            .frameworks
            .iter()
            .map(|f| quote(&f.python))
            .collect::<Vec<_>>()
            .join(" ");
        let missing = remote_sh(p, &format!("for py in {pythons}; do [ -x \"$py\" ] || command -v \"$py\" >/dev/null || echo \"$py\"; done"), None)?;
        if !missing.trim().is_empty() {
            return Err(bad(
                "peer",
                format!("peer = {p} is not allowed: it lacks {} (peers run the interpreter the host uses, at the same path)", missing.split_whitespace().collect::<Vec<_>>().join(", ")),
            ));
        }
        peer_kits.push(kit_dir);
    }
    Ok(peer_kits)
}

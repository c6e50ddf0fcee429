//! What a host of the studio's list is, what its last check found, and the
//! rules every field obeys — checked
//! when a host is added (CLI or desktop) and again whenever the list is read,
//! so a hand-edited file cannot smuggle a command into a remote shell.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use trainbench_core::Framework;
use trainbench_runner::WorkerCommand;

use crate::address::HostUrl;
use crate::bad;
use crate::error::RemoteResult;
use crate::url::SshUrl;

/// A Python framework the host's check found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RemoteFramework {
    pub framework: Framework,
    pub version: String,
    /// The interpreter on the host that imports it.
    pub python: String,
    pub gpus: Vec<String>,
}

/// What a host offers, as its last check found it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Inventory {
    pub checked_unix_ms: i64,
    pub hostname: String,
    pub cpu_cores: u32,
    /// The kit's folder on the host (absolute).
    pub kit_dir: String,
    /// The root folder on the host (absolute).
    pub root_dir: String,
    pub kit_version: String,
    pub frameworks: Vec<RemoteFramework>,
    /// The GPUs the frameworks see (the longest list any of them gave).
    pub gpus: Vec<String>,
    /// The cluster behind a Slurm login host, or a Ray cluster's nodes.
    #[serde(default, alias = "slurm")]
    pub cluster: Option<ClusterInventory>,
    /// Each peer's kit folder (absolute), in the order of `peers`.
    #[serde(default)]
    pub peer_kits: Vec<String>,
    /// What was looked for and not found, with why.
    pub left_out: Vec<String>,
}

/// A Slurm login host: where jobs go.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SlurmSettings {
    /// `None`: the cluster's default partition.
    pub partition: Option<String>,
}

/// A cluster's nodes: what `sinfo` said about a Slurm partition, or what
/// a Ray cluster's head said about its live nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ClusterInventory {
    /// `Slurm` or `Ray`.
    #[serde(default = "slurm_name")]
    pub scheduler: String,
    pub version: String,
    pub nodes: u32,
    /// The CPUs and GPUs one node offers a run: on Slurm the fewest of any
    /// node of the partition (any may be given); on Ray the most of any
    /// node (Ray places a run where its resources are).
    pub cpus_per_node: u32,
    pub gpus_per_node: u32,
    /// On Ray: the first of the host's interpreters that imports `ray`,
    /// which starts a run's other nodes as Ray tasks (none: one node a run).
    #[serde(default)]
    pub ray_python: Option<String>,
}

fn slurm_name() -> String {
    "Slurm".into()
}

/// A host in the studio's list (`$TRAINBENCH_HOME/hosts.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RemoteHost {
    pub name: String,
    pub url: HostUrl,
    /// Interpreters to look for frameworks in (default `python3`).
    pub pythons: Vec<String>,
    /// Variables exported before every command on the host (and so into
    /// its Slurm jobs), e.g. `SLURM_CONF`.
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// Jobs go through Slurm (`sbatch`) instead of running on the host.
    #[serde(default)]
    pub slurm: Option<SlurmSettings>,
    /// More machines for runs over several nodes without Slurm: node 1, 2, …
    /// (the host itself is node 0 and reaches them with its own ssh).
    #[serde(default)]
    pub peers: Vec<SshUrl>,
    pub inventory: Option<Inventory>,
}

impl RemoteHost {
    pub(crate) fn inventory(&self) -> RemoteResult<&Inventory> {
        self.inventory.as_ref().ok_or_else(|| {
            bad(
                "host",
                format!(
                    "host = {} has not been checked: run `trainbench host check {}`",
                    self.name, self.name
                ),
            )
        })
    }

    /// The planner's view: `pytorch`, `jax`, `tensorflow` (or
    /// `FRAMEWORK@ENV` with the environment name this returns) as the host
    /// has them; the worker command is what the agent starts there.
    pub fn resolve(
        &self,
        given: &str,
    ) -> Result<(Framework, Option<String>, WorkerCommand), String> {
        let inv = self.inventory().map_err(|e| e.to_string())?;
        let name = given.split_once('@').map_or(given, |(f, _)| f);
        let framework = Framework::parse(name).map_err(|e| e.to_string())?;
        if framework == Framework::Tch {
            return Err(format!(
                "framework = tch is not allowed on host {}: the libtorch worker is not sent to remote hosts yet (it must match the host's libtorch); expected {}",
                self.name,
                self.framework_names(inv)
            ));
        }
        let found = inv.frameworks.iter().find(|f| f.framework == framework).ok_or_else(|| {
            format!(
                "framework = {framework} is not allowed on host {}: its check found no {framework} in {}; expected {}",
                self.name,
                self.pythons.join(", "),
                self.framework_names(inv)
            )
        })?;
        let env_name = self.env_name(found);
        if let Some((_, e)) = given.split_once('@') {
            if e != env_name {
                return Err(format!(
                    "framework = {given} is not allowed on host {}: its {framework} environment is {env_name}",
                    self.name
                ));
            }
        }
        // On a Ray cluster the kit is the job's working folder, where the
        // agent starts: the path is relative to it (the agent makes it whole).
        let workers = match self.url {
            HostUrl::Ray(_) => "share/trainbench/workers/python".to_owned(),
            HostUrl::Ssh(_) => format!("{}/share/trainbench/workers/python", inv.kit_dir),
        };
        let mut env = vec![
            ("PYTHONPATH".into(), workers),
            ("PYTHONUNBUFFERED".into(), "1".into()),
        ];
        if !self.peers.is_empty() {
            // Node i ≥ 1 through the host's ssh: the same interpreter path,
            // the peer's own kit.
            let peers: Vec<serde_json::Value> = self
                .peers
                .iter()
                .zip(&inv.peer_kits)
                .map(|(p, kit)| {
                    let mut ssh = Vec::new();
                    if let Some(port) = p.port {
                        ssh.extend(["-p".to_owned(), port.to_string()]);
                    }
                    ssh.push(p.destination());
                    serde_json::json!({
                        "host": p.host,
                        "ssh": ssh,
                        "python": found.python,
                        "workers": format!("{kit}/share/trainbench/workers/python"),
                    })
                })
                .collect();
            env.push((
                "TRAINBENCH_PEERS".into(),
                serde_json::Value::from(peers).to_string(),
            ));
        }
        Ok((
            framework,
            Some(env_name),
            WorkerCommand {
                program: PathBuf::from(&found.python),
                args: vec![
                    "-m".into(),
                    "trainbench_worker".into(),
                    framework.as_str().into(),
                    "train".into(),
                ],
                env,
                plan_for: Some(framework),
                release: None,
            },
        ))
    }

    fn env_name(&self, f: &RemoteFramework) -> String {
        format!("{}:{}-{}", self.name, f.framework, f.version)
    }

    fn framework_names(&self, inv: &Inventory) -> String {
        if inv.frameworks.is_empty() {
            return "none (install PyTorch, TensorFlow or JAX there, or add --python)".into();
        }
        inv.frameworks
            .iter()
            .map(|f| f.framework.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A name of 1–64 letters, digits, `-`, `_` and `.` (a host's, a partition's).
pub(crate) fn check_word(field: &str, value: &str) -> RemoteResult<()> {
    if value.is_empty()
        || value.len() > 64
        || !value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(bad(
            field,
            format!("{field} = {value:?} is not allowed: expected 1–64 letters, digits, - _ ."),
        ));
    }
    Ok(())
}

/// `KEY=VALUE` as `host add --env` takes it: exported before every command
/// on the host, so a variable of the frameworks' families passes the rules
/// of `run --env`, and one that loads code (`LD_PRELOAD`, `PYTHONSTARTUP` …)
/// is refused (`spec::env::check_host_variable`).
pub fn parse_env(text: &str) -> RemoteResult<(String, String)> {
    let (k, v) = text.split_once('=').ok_or_else(|| {
        bad(
            "env",
            format!("env = {text} is not allowed: expected KEY=VALUE"),
        )
    })?;
    if k.is_empty()
        || k.starts_with(|c: char| c.is_ascii_digit())
        || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(bad(
            "env",
            format!("env = {text} is not allowed: the name must be letters, digits and _, not starting with a digit"),
        ));
    }
    trainbench_core::spec::env::check_host_variable(k, v).map_err(|e| bad("env", e.to_string()))?;
    Ok((k.to_owned(), v.to_owned()))
}

/// An interpreter on a host, as `--python` takes it: an absolute path (spaces
/// and any other printable character allowed: it is quoted), or a command
/// name looked up on the host's PATH.
pub(crate) fn check_python(value: &str) -> RemoteResult<()> {
    let why = if value.is_empty() {
        Some("it is empty")
    } else if value.len() > 4096 {
        Some("it is longer than 4096 bytes")
    } else if value.chars().any(char::is_control) {
        Some("it has control characters (a newline, a tab …)")
    } else if value.starts_with('-') {
        Some("it starts with - (it would be read as an option)")
    } else if value.starts_with('~') {
        Some("~ is not expanded (it is passed quoted)")
    } else if !value.starts_with('/') && value.contains('/') {
        Some("a relative path depends on the folder the command runs in")
    } else {
        None
    };
    match why {
        Some(why) => Err(bad(
            "python",
            format!(
                "python = {:?} is not allowed: {why}; expected an absolute path (/opt/venv/bin/python) or a command on the host's PATH (python3)",
                trainbench_core::text::cut(value.to_owned(), 200)
            ),
        )),
        None => Ok(()),
    }
}

/// An address that prints as text which `parse` reads back as itself.
fn reads_back<T: std::fmt::Display + PartialEq>(
    field: &str,
    u: &T,
    parse: fn(&str) -> RemoteResult<T>,
) -> RemoteResult<()> {
    match parse(&u.to_string()) {
        Ok(p) if p == *u => Ok(()),
        Ok(_) => Err(bad(
            field,
            format!("{field} = {u} is not allowed: it does not read back as itself"),
        )),
        Err(e) => Err(bad(field, e.to_string())),
    }
}

/// Every field of a host by the rules it was entered under.
pub(crate) fn validate(h: &RemoteHost) -> RemoteResult<()> {
    check_word("name", &h.name)?;
    reads_back("url", &h.url, HostUrl::parse)?;
    if matches!(h.url, HostUrl::Ray(_)) && (h.slurm.is_some() || !h.peers.is_empty()) {
        return Err(bad(
            "url",
            format!(
                "url = {} is not allowed with slurm or peers: a Ray cluster places its own runs",
                h.url
            ),
        ));
    }
    for p in &h.peers {
        reads_back("peer", p, SshUrl::parse)?;
    }
    if h.pythons.is_empty() {
        return Err(bad(
            "python",
            "python is not allowed empty: expected at least one interpreter".into(),
        ));
    }
    for py in &h.pythons {
        check_python(py)?;
    }
    for (k, v) in &h.env {
        parse_env(&format!("{k}={v}"))?;
    }
    if let Some(p) = h.slurm.as_ref().and_then(|s| s.partition.as_deref()) {
        check_word("partition", p)?;
    }
    if let Some(inv) = &h.inventory {
        for f in &inv.frameworks {
            if !h.pythons.contains(&f.python) {
                return Err(bad(
                    "python",
                    format!("python = {} is not allowed: the check found {} there, but it is not one of the host's interpreters", f.python, f.framework),
                ));
            }
        }
    }
    Ok(())
}

//! The studio's host list (`$TRAINBENCH_HOME/hosts.json`): what each host is,
//! what its last check found, and the rules every field obeys — checked
//! when a host is added (CLI or desktop) and again whenever the list is read,
//! so a hand-edited file cannot smuggle a command into a remote shell.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use trainbench_core::Framework;
use trainbench_runner::{envs, WorkerCommand};

use super::url::SshUrl;
use super::{bad, check};
use crate::error::{AppError, AppResult};

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
    /// The cluster behind a Slurm login host.
    #[serde(default)]
    pub slurm: Option<SlurmInventory>,
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

/// What `sinfo` said about the partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SlurmInventory {
    pub version: String,
    pub nodes: u32,
    /// The fewest CPUs and GPUs of any node (what a job can count on).
    pub cpus_per_node: u32,
    pub gpus_per_node: u32,
}

/// A host in the studio's list (`$TRAINBENCH_HOME/hosts.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RemoteHost {
    pub name: String,
    pub url: SshUrl,
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
    pub(crate) fn inventory(&self) -> AppResult<&Inventory> {
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
        let workers = format!("{}/share/trainbench/workers/python", inv.kit_dir);
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

fn hosts_file() -> PathBuf {
    envs::home().join("hosts.json")
}

/// The studio's hosts, by name.
pub fn hosts() -> AppResult<Vec<RemoteHost>> {
    let path = hosts_file();
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let list: Vec<RemoteHost> = serde_json::from_str(&text).map_err(|e| {
                AppError::Internal(format!("{} is not a host list: {e}", path.display()))
            })?;
            for h in &list {
                validate(h).map_err(|e| match e {
                    AppError::BadInput { field, message } => AppError::BadInput {
                        field,
                        message: format!("{}: host {:?}: {message}", path.display(), h.name),
                    },
                    other => other,
                })?;
            }
            Ok(list)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(AppError::Internal(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

/// Changes the host list under its lock (`hosts.json.lock`), read and written
/// whole inside it, so two processes adding hosts at once both keep theirs.
fn update_hosts<T>(change: impl FnOnce(&mut Vec<RemoteHost>) -> AppResult<T>) -> AppResult<T> {
    let path = hosts_file();
    let _lock = trainbench_files::FileLock::exclusive(&path)?;
    let mut list = hosts()?;
    let out = change(&mut list)?;
    let text =
        serde_json::to_string_pretty(&list).map_err(|e| AppError::Internal(e.to_string()))?;
    trainbench_files::write_atomic("hosts", &path, text.as_bytes())?;
    Ok(out)
}

/// The host called `name`.
pub fn host(name: &str) -> AppResult<RemoteHost> {
    let list = hosts()?;
    let names: Vec<String> = list.iter().map(|h| h.name.clone()).collect();
    list.into_iter().find(|h| h.name == name).ok_or_else(|| {
        bad(
            "host",
            format!(
                "host = {name} is not allowed: expected one of the studio's hosts ({}); add one with `trainbench host add NAME ssh://user@host`",
                if names.is_empty() { "none yet".into() } else { names.join(", ") }
            ),
        )
    })
}

/// A name of 1–64 letters, digits, `-`, `_` and `.` (a host's, a partition's).
fn check_word(field: &str, value: &str) -> AppResult<()> {
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

/// `KEY=VALUE` as `host add --env` takes it.
pub fn parse_env(text: &str) -> AppResult<(String, String)> {
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
    Ok((k.to_owned(), v.to_owned()))
}

/// Adds (or replaces) a host, installs the kit there and checks it.
pub fn add_host(
    name: &str,
    url: &str,
    pythons: &[String],
    env: &[String],
    slurm: Option<SlurmSettings>,
    peers: &[String],
) -> AppResult<RemoteHost> {
    check_word("name", name)?;
    let url = SshUrl::parse(url)?;
    let peers = peers
        .iter()
        .map(|p| SshUrl::parse(p).map_err(|e| bad("peer", e.to_string())))
        .collect::<AppResult<Vec<_>>>()?;
    if slurm.is_some() && !peers.is_empty() {
        return Err(bad(
            "peer",
            "peer is not allowed with slurm: Slurm chooses a job's nodes; expected one or the other".into(),
        ));
    }
    if let Some(p) = slurm.as_ref().and_then(|s| s.partition.as_deref()) {
        check_word("partition", p)?;
    }
    let env = env
        .iter()
        .map(|e| parse_env(e))
        .collect::<AppResult<Vec<_>>>()?;
    let mut h = RemoteHost {
        name: name.to_owned(),
        url,
        pythons: if pythons.is_empty() {
            vec!["python3".into()]
        } else {
            pythons.to_vec()
        },
        env,
        slurm,
        peers,
        inventory: None,
    };
    validate(&h)?;
    h.inventory = Some(check::check(&h)?);
    update_hosts(|list| {
        list.retain(|x| x.name != name);
        list.push(h.clone());
        Ok(())
    })?;
    Ok(h)
}

/// Checks a host again (the kit re-sent if it changed) and stores what it has.
pub fn check_host(name: &str) -> AppResult<RemoteHost> {
    let mut h = host(name)?;
    h.inventory = Some(check::check(&h)?);
    update_hosts(|list| {
        for x in list.iter_mut().filter(|x| x.name == name) {
            *x = h.clone();
        }
        Ok(())
    })?;
    Ok(h)
}

pub fn remove_host(name: &str) -> AppResult<()> {
    host(name)?;
    update_hosts(|list| {
        list.retain(|x| x.name != name);
        Ok(())
    })
}

/// An interpreter on a host, as `--python` takes it: an absolute path (spaces
/// and any other printable character allowed: it is quoted), or a command
/// name looked up on the host's PATH.
pub(crate) fn check_python(value: &str) -> AppResult<()> {
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

/// Every field of a host by the rules it was entered under.
fn validate(h: &RemoteHost) -> AppResult<()> {
    check_word("name", &h.name)?;
    let again = |field: &str, u: &SshUrl| -> AppResult<()> {
        match SshUrl::parse(&u.to_string()) {
            Ok(p) if p == *u => Ok(()),
            Ok(_) => Err(bad(
                field,
                format!("{field} = {u} is not allowed: it does not read back as itself"),
            )),
            Err(e) => Err(bad(field, e.to_string())),
        }
    };
    again("url", &h.url)?;
    for p in &h.peers {
        again("peer", p)?;
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

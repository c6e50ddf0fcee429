//! Remote hosts over SSH (issue 16): the studio drives a GPU server through
//! the system `ssh` (so `~/.ssh/config`, ProxyJump and the agent work;
//! connections shared with ControlMaster), copies a versioned kit there (this
//! `trainbench` binary and the Python workers), checks which frameworks and
//! GPUs the host has, and runs each job as a detached **agent**
//! (`trainbench agent run DIR` on the host) that runs the worker with the
//! ordinary runner and appends everything it measures to `DIR/journal.jsonl`.
//! The studio reads the journal from a byte offset it stores with what it
//! read, so a dropped connection, a killed `ssh` client or a stopped studio
//! loses nothing: reading resumes where the database says it stopped
//! (`trainbench attach ID`). Cancelling sends the agent SIGTERM; it stops the
//! worker and journals the cancellation.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;
use trainbench_core::protocol::Event;
use trainbench_core::spec::{CheckedSpec, RawSpec};
use trainbench_core::summary::RunStatus;
use trainbench_core::telemetry::TelemetrySample;
use trainbench_core::Framework;
use trainbench_runner::{envs, Progress, Runner, RunnerOptions, WorkerCommand};
use trainbench_store::{NewRun, RemoteRun, Store};

use crate::error::{AppError, AppResult};
use crate::execute::Finished;
use crate::host::Host;
use crate::sweep::Job;
use crate::workspace::Workspace;

/// The remote root when the address names none (relative to the login's home).
pub const DEFAULT_ROOT: &str = ".trainbench-remote";

fn bad(field: &str, message: String) -> AppError {
    AppError::BadInput {
        field: field.into(),
        message,
    }
}

/// `ssh://[user@]host[:port][/root]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SshUrl {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
    /// The folder on the host that holds kits and runs (absolute, or
    /// relative to the login's home).
    pub root: String,
}

impl SshUrl {
    pub fn parse(text: &str) -> AppResult<SshUrl> {
        let refuse = |why: &str| {
            bad(
                "url",
                format!("url = {text} is not allowed: {why}; expected ssh://[user@]host[:port][/folder]"),
            )
        };
        let rest = text
            .strip_prefix("ssh://")
            .ok_or_else(|| refuse("it does not start with ssh://"))?;
        let (authority, root) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].to_owned()),
            None => (rest, String::new()),
        };
        let (user, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u.to_owned()), h),
            None => (None, authority),
        };
        if user.as_deref() == Some("") {
            return Err(refuse("the user before @ is empty"));
        }
        let (host, port) =
            match hostport.rsplit_once(':') {
                Some((h, p)) => (
                    h,
                    Some(p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| {
                        refuse(&format!("port {p} is not a number from 1 to 65535"))
                    })?),
                ),
                None => (hostport, None),
            };
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-._".contains(c);
        if host.is_empty() || !host.chars().all(allowed) || host.starts_with('-') {
            return Err(refuse(
                "the host is empty or has characters other than letters, digits, - . _",
            ));
        }
        if let Some(u) = &user {
            if !u.chars().all(allowed) || u.starts_with('-') {
                return Err(refuse(
                    "the user has characters other than letters, digits, - . _",
                ));
            }
        }
        // "/" + path: absolute; "/~/x" or a bare path after the host: relative to home.
        let root = match root.as_str() {
            "" | "/" => DEFAULT_ROOT.to_owned(),
            r => r
                .strip_prefix("/~/")
                .map_or_else(|| r.to_owned(), str::to_owned),
        };
        if root
            .chars()
            .any(|c| c.is_control() || "'\"\\$`".contains(c))
        {
            return Err(refuse("the folder has quotes, $, ` or control characters"));
        }
        Ok(SshUrl {
            user,
            host: host.to_owned(),
            port,
            root,
        })
    }

    /// `[user@]host` as ssh takes it.
    pub fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }
}

impl std::fmt::Display for SshUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ssh://{}", self.destination())?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        if self.root != DEFAULT_ROOT {
            if self.root.starts_with('/') {
                write!(f, "{}", self.root)?;
            } else {
                write!(f, "/~/{}", self.root)?;
            }
        }
        Ok(())
    }
}

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
    fn inventory(&self) -> AppResult<&Inventory> {
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
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| AppError::Internal(format!("{} is not a host list: {e}", path.display()))),
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
    h.inventory = Some(check(&h)?);
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
    h.inventory = Some(check(&h)?);
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

// --- ssh ---------------------------------------------------------------------

/// Single-quoted for the remote shell.
fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The system ssh towards a host: batch mode (a key or the agent, never a
/// password prompt), keep-alives, and one shared connection per host.
fn ssh(url: &SshUrl) -> Command {
    let mut c = Command::new(std::env::var_os("TRAINBENCH_SSH").unwrap_or_else(|| "ssh".into()));
    if let Some(cfg) = std::env::var_os("TRAINBENCH_SSH_CONFIG") {
        c.arg("-F").arg(cfg);
    }
    let control = control_dir();
    let _ = std::fs::create_dir_all(&control);
    c.args([
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=15",
        "-o",
        "ServerAliveInterval=5",
        "-o",
        "ServerAliveCountMax=3",
        "-o",
        "ControlMaster=auto",
        "-o",
    ]);
    c.arg(format!("ControlPath={}/%C", control.display()));
    c.args(["-o", "ControlPersist=60"]);
    if let Some(p) = url.port {
        c.args(["-p", &p.to_string()]);
    }
    c.arg(url.destination()).arg("--");
    c
}

/// Where ssh's shared connections live: short (a socket path has ~100
/// bytes), one folder per user.
fn control_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("TRAINBENCH_SSH_CONTROL_DIR") {
        return PathBuf::from(d);
    }
    let uid = rustix::process::getuid().as_raw();
    std::env::temp_dir().join(format!("trainbench-ssh-{uid}"))
}

/// `script` with the host's variables exported first.
fn host_sh(h: &RemoteHost, script: &str, stdin: Option<&[u8]>) -> AppResult<String> {
    let exports: String = h
        .env
        .iter()
        .map(|(k, v)| format!("export {k}={}; ", q(v)))
        .collect();
    remote_sh(&h.url, &format!("{exports}{script}"), stdin)
}

/// Runs `script` on the host with `sh -c`; its stdout, or an error with ssh's
/// or the script's message.
fn remote_sh(url: &SshUrl, script: &str, stdin: Option<&[u8]>) -> AppResult<String> {
    let mut c = ssh(url);
    c.arg(format!("sh -c {}", q(script)));
    c.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = c
        .spawn()
        .map_err(|e| AppError::Internal(format!("cannot start ssh: {e}")))?;
    if let (Some(bytes), Some(mut input)) = (stdin, child.stdin.take()) {
        let _ = input.write_all(bytes);
    }
    let out = child
        .wait_with_output()
        .map_err(|e| AppError::Internal(format!("ssh: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(unreachable_or(url, out.status.code(), &err));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn unreachable_or(url: &SshUrl, code: Option<i32>, err: &str) -> AppError {
    if code == Some(255) {
        bad(
            "host",
            format!("cannot reach {url} over ssh: {err} (the studio runs `ssh` in batch mode: a key or the agent must log in without a prompt)"),
        )
    } else {
        AppError::Internal(format!(
            "on {url}: {err} (exit {})",
            code.map_or("?".into(), |c| c.to_string())
        ))
    }
}

// --- the kit ---------------------------------------------------------------

/// This binary and the Python workers: what a host needs to run jobs.
struct LocalKit {
    exe: PathBuf,
    workers: PathBuf,
    version: String,
}

fn local_kit() -> AppResult<LocalKit> {
    let exe = std::env::var_os("TRAINBENCH_REMOTE_BINARY")
        .map(PathBuf::from)
        .or_else(|| std::env::current_exe().ok())
        .ok_or_else(|| AppError::Internal("cannot find this studio's binary".into()))?;
    let workers = envs::package_dir();
    let mut h = Sha256::new();
    let read = |p: &Path| {
        std::fs::read(p)
            .map_err(|e| AppError::Internal(format!("cannot read {}: {e}", p.display())))
    };
    h.update(read(&exe)?);
    let mut files = Vec::new();
    collect_py(&workers.join("trainbench_worker"), &mut files);
    files.sort();
    for f in &files {
        h.update(
            f.strip_prefix(&workers)
                .unwrap_or(f)
                .to_string_lossy()
                .as_bytes(),
        );
        h.update(read(f)?);
    }
    let digest = h.finalize();
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    Ok(LocalKit {
        exe,
        workers,
        version: format!("{}-{hex}", env!("CARGO_PKG_VERSION")),
    })
}

fn collect_py(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                collect_py(&p, out);
            } else if p.extension().is_some_and(|x| x == "py") {
                out.push(p);
            }
        }
    }
}

/// Sends the kit unless the host has this version; returns its folder there.
fn install_kit(url: &SshUrl, kit: &LocalKit) -> AppResult<String> {
    let dir = format!("{}/kit/{}", url.root, kit.version);
    let have = remote_sh(
        url,
        &format!(
            "test -x {d}/bin/trainbench && cd {d} && pwd || true",
            d = q(&dir)
        ),
        None,
    )?;
    if !have.trim().is_empty() {
        return Ok(have.trim().to_owned());
    }
    let stage = Staging(envs::home().join(format!("kit-staging-{}", std::process::id())));
    let io = |e: std::io::Error| AppError::Internal(format!("staging the kit: {e}"));
    let _ = std::fs::remove_dir_all(stage.path());
    std::fs::create_dir_all(stage.path().join("bin")).map_err(io)?;
    std::fs::copy(&kit.exe, stage.path().join("bin/trainbench")).map_err(io)?;
    let target = stage
        .path()
        .join("share/trainbench/workers/python/trainbench_worker");
    std::fs::create_dir_all(&target).map_err(io)?;
    let mut files = Vec::new();
    collect_py(&kit.workers.join("trainbench_worker"), &mut files);
    for f in files {
        let rel = f
            .strip_prefix(kit.workers.join("trainbench_worker"))
            .unwrap_or(&f);
        if let Some(parent) = target.join(rel).parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::copy(&f, target.join(rel)).map_err(io)?;
    }
    let tar = Command::new("tar")
        .arg("-C")
        .arg(stage.path())
        .args(["-czf", "-", "."])
        .output()
        .map_err(|e| AppError::Internal(format!("tar: {e}")))?;
    if !tar.status.success() {
        return Err(AppError::Internal(format!(
            "tar: {}",
            String::from_utf8_lossy(&tar.stderr)
        )));
    }
    let script = format!(
        "set -e; mkdir -p {d}.part && tar -xzf - -C {d}.part && rm -rf {d} && mv {d}.part {d} && cd {d} && pwd",
        d = q(&dir)
    );
    Ok(remote_sh(url, &script, Some(&tar.stdout))?
        .trim()
        .to_owned())
}

/// A folder removed when dropped.
struct Staging(PathBuf);

impl Staging {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[derive(Deserialize)]
struct FrameworkInfo {
    version: String,
    #[serde(default)]
    gpus: Vec<String>,
}

fn check(h: &RemoteHost) -> AppResult<Inventory> {
    let kit = local_kit()?;
    let kit_dir = install_kit(&h.url, &kit)?;
    let mut script = format!(
        "echo \"hostname $(hostname)\"; echo \"cores $(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)\"; mkdir -p {r}/runs; echo \"root $(cd {r} && pwd)\"; ",
        r = q(&h.url.root)
    );
    for py in &h.pythons {
        for fw in Framework::PYTHON {
            script.push_str(&format!(
                "o=$(PYTHONPATH={w} {p} -m trainbench_worker {f} info 2>&1 | tail -n 1); echo \"fw {f} {pq} $o\"; ",
                w = q(&format!("{kit_dir}/share/trainbench/workers/python")),
                p = q(py),
                f = fw.as_str(),
                pq = py.replace(' ', "_"),
            ));
        }
    }
    if let Some(s) = &h.slurm {
        let part = s
            .partition
            .as_deref()
            .map(|p| format!(" -p {}", q(p)))
            .unwrap_or_default();
        script.push_str(&format!(
            "echo \"slurm_version $(sinfo --version 2>&1)\"; sinfo -h{part} -o '%D %c %G' 2>&1 | sed 's/^/slurm_nodes /'; "
        ));
    }
    let out = host_sh(h, &script, None)?;
    let mut slurm: Option<SlurmInventory> = h.slurm.as_ref().map(|_| SlurmInventory {
        version: String::new(),
        nodes: 0,
        cpus_per_node: u32::MAX,
        gpus_per_node: u32::MAX,
    });
    let mut inv = Inventory {
        checked_unix_ms: trainbench_store::now_unix_ms(),
        hostname: String::new(),
        cpu_cores: 1,
        kit_dir,
        root_dir: String::new(),
        kit_version: kit.version.clone(),
        frameworks: Vec::new(),
        gpus: Vec::new(),
        slurm: None,
        peer_kits: Vec::new(),
        left_out: Vec::new(),
    };
    for line in out.lines() {
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "slurm_version" => {
                if let Some(s) = slurm.as_mut() {
                    s.version = rest.trim().to_owned();
                }
            }
            "slurm_nodes" => {
                // "COUNT CPUS GRES" per group of like nodes; GRES "gpu:8", "gpu:h100:8" or "(null)".
                let mut f = rest.split_whitespace();
                let (Some(n), Some(c)) = (
                    f.next().and_then(|x| x.parse::<u32>().ok()),
                    f.next()
                        .and_then(|x| x.trim_end_matches('+').parse::<u32>().ok()),
                ) else {
                    return Err(bad(
                        "host",
                        format!("host = {}: sinfo said {rest:?}: is Slurm there (and SLURM_CONF set with --env)?", h.name),
                    ));
                };
                let gpus = f
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .filter(|g| g.starts_with("gpu"))
                    .filter_map(|g| g.split('(').next()?.rsplit(':').next()?.parse::<u32>().ok())
                    .sum::<u32>();
                if let Some(s) = slurm.as_mut() {
                    s.nodes += n;
                    s.cpus_per_node = s.cpus_per_node.min(c);
                    s.gpus_per_node = s.gpus_per_node.min(gpus);
                }
            }
            "hostname" => inv.hostname = rest.trim().to_owned(),
            "cores" => inv.cpu_cores = rest.trim().parse().unwrap_or(1),
            "root" => inv.root_dir = rest.trim().to_owned(),
            "fw" => {
                let mut parts = rest.splitn(3, ' ');
                let (Some(fw), Some(py), Some(answer)) = (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                let Ok(framework) = Framework::parse(fw) else {
                    continue;
                };
                if inv.frameworks.iter().any(|f| f.framework == framework) {
                    continue;
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
            _ => {}
        }
    }
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
        inv.slurm = Some(s);
    }
    // Peers: the same kit, and the interpreter the host found, there.
    for p in &h.peers {
        let kit_dir = install_kit(p, &kit)?;
        let pythons = inv
            .frameworks
            .iter()
            .map(|f| q(&f.python))
            .collect::<Vec<_>>()
            .join(" ");
        let missing = remote_sh(p, &format!("for py in {pythons}; do [ -x \"$py\" ] || command -v \"$py\" >/dev/null || echo \"$py\"; done"), None)?;
        if !missing.trim().is_empty() {
            return Err(bad(
                "peer",
                format!("peer = {p} is not allowed: it lacks {} (peers run the interpreter the host uses, at the same path)", missing.split_whitespace().collect::<Vec<_>>().join(", ")),
            ));
        }
        inv.peer_kits.push(kit_dir);
    }
    // Only what no interpreter had stays left out.
    let found: Vec<Framework> = inv.frameworks.iter().map(|f| f.framework).collect();
    inv.left_out
        .retain(|l| !found.iter().any(|f| l.starts_with(&format!("{f} in "))));
    inv.left_out.push(
        "tch: the libtorch worker is not sent to remote hosts yet (it must match the host's libtorch)".into(),
    );
    Ok(inv)
}

// --- a job on a host ---------------------------------------------------------

/// What the agent on the host runs (`DIR/job.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RemoteJob {
    pub framework: Framework,
    pub environment: Option<String>,
    pub spec: RawSpec,
    pub worker: WorkerCommand,
    pub memory_limit_bytes: Option<u64>,
    pub silence_timeout_s: u64,
}

/// One line of a run's journal on the host.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "journal", rename_all = "snake_case")]
#[expect(
    clippy::large_enum_variant,
    reason = "one short-lived line at a time; boxing buys nothing"
)]
pub enum JournalLine {
    /// The host's provenance, first.
    Provenance {
        provenance: serde_json::Value,
    },
    Event {
        event: Event,
    },
    Telemetry {
        samples: Vec<TelemetrySample>,
    },
    Log {
        line: String,
    },
    /// How the run ended, last.
    Outcome {
        status: RunStatus,
        reason: Option<String>,
        error_class: Option<String>,
        exit_code: Option<i32>,
        stderr_tail: String,
    },
}

/// Where a job runs: the planner marks jobs for a host with it.
#[derive(Debug, Clone)]
pub struct RemoteTarget {
    pub host: Arc<RemoteHost>,
}

/// The agent: runs `DIR/job.json` with the ordinary runner on this machine,
/// journaling everything to `DIR/journal.jsonl`; SIGTERM cancels.
pub async fn agent_run(dir: &Path) -> AppResult<()> {
    let io = |what: &str, e: std::io::Error| {
        AppError::Internal(format!("{what} in {}: {e}", dir.display()))
    };
    let job: RemoteJob = serde_json::from_str(
        &std::fs::read_to_string(dir.join("job.json")).map_err(|e| io("job.json", e))?,
    )
    .map_err(|e| AppError::Internal(format!("job.json: {e}")))?;
    std::fs::write(dir.join("agent.pid"), std::process::id().to_string())
        .map_err(|e| io("agent.pid", e))?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("journal.jsonl"))
        .map_err(|e| io("journal.jsonl", e))?;
    let mut journal = Journal { file };
    let host = Host::open();
    let spec = CheckedSpec::new(job.spec.clone()).map_err(AppError::from)?;
    let mut store = Store::open(&dir.join("agent.sqlite"))?;
    let id = store.insert_run(&NewRun::of_spec(
        job.framework,
        job.environment.clone(),
        &spec,
    ))?;
    journal.write(&JournalLine::Provenance {
        provenance: trainbench_probe::provenance(&host.gpu),
    })?;
    let (tx, rx) = watch::channel(false);
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| AppError::Internal(format!("SIGTERM handler: {e}")))?;
    tokio::spawn(async move {
        term.recv().await;
        let _ = tx.send(true);
    });
    let runner = Runner {
        worker: job.worker.clone(),
        gpu: &host.gpu,
        opts: RunnerOptions {
            memory_limit_bytes: job.memory_limit_bytes,
            silence_timeout: Duration::from_secs(job.silence_timeout_s.max(1)),
            ..RunnerOptions::default()
        },
    };
    let outcome = runner.run(&mut store, id, &spec, &mut journal, rx).await;
    let detail = store.run_detail(id)?;
    let line = match outcome {
        Ok(o) => JournalLine::Outcome {
            status: o.status,
            reason: o.reason,
            error_class: o.error_class,
            exit_code: detail.row.exit_code,
            stderr_tail: detail.stderr_tail.unwrap_or_default(),
        },
        Err(e) => JournalLine::Outcome {
            status: RunStatus::Failed,
            reason: Some(format!("the agent on the host failed: {e}")),
            error_class: Some("internal".into()),
            exit_code: None,
            stderr_tail: String::new(),
        },
    };
    journal.write(&line)
}

struct Journal {
    file: std::fs::File,
}

impl Journal {
    fn write(&mut self, line: &JournalLine) -> AppResult<()> {
        let mut text =
            serde_json::to_string(line).map_err(|e| AppError::Internal(e.to_string()))?;
        text.push('\n');
        // One write per line (O_APPEND): a reader never sees half of one
        // unless the disk fills, and then it waits for the rest.
        self.file
            .write_all(text.as_bytes())
            .map_err(|e| AppError::Internal(format!("journal: {e}")))
    }
}

impl Progress for Journal {
    fn event(&mut self, _run_id: i64, event: &Event) {
        let _ = self.write(&JournalLine::Event {
            event: event.clone(),
        });
    }
    fn log(&mut self, _run_id: i64, line: &str) {
        let _ = self.write(&JournalLine::Log { line: line.into() });
    }
    fn telemetry(&mut self, _run_id: i64, samples: &[TelemetrySample]) {
        if !samples.is_empty() {
            let _ = self.write(&JournalLine::Telemetry {
                samples: samples.to_vec(),
            });
        }
    }
}

/// How long the studio keeps trying to reach a host before it leaves a run
/// detached (`TRAINBENCH_REMOTE_GIVE_UP_S`, default 120 s).
fn give_up_after() -> Duration {
    Duration::from_secs(
        std::env::var("TRAINBENCH_REMOTE_GIVE_UP_S")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(120),
    )
}

/// Starts a queued job on its host and follows it to its end.
pub(crate) async fn run_job(
    ws: &mut Workspace,
    local: &Host,
    target: &RemoteTarget,
    job: &Job,
    opts: RunnerOptions,
    progress: &mut dyn Progress,
    cancel: watch::Receiver<bool>,
) -> AppResult<Finished> {
    let h = &target.host;
    let inv = h.inventory()?;
    let dir = format!(
        "{}/runs/{}-run{}-{}",
        inv.root_dir,
        trainbench_store::hostname().replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_"),
        job.run_id,
        trainbench_store::now_unix_ms()
    );
    let remote = RemoteJob {
        framework: job.worker.plan_for.unwrap_or(Framework::Tch),
        environment: ws.store.run_row(job.run_id)?.environment.clone(),
        spec: job.spec.raw.clone(),
        worker: job.worker.clone(),
        memory_limit_bytes: job.memory_limit_bytes.or(opts.memory_limit_bytes),
        silence_timeout_s: opts.silence_timeout.as_secs(),
    };
    let text = serde_json::to_vec(&remote).map_err(|e| AppError::Internal(e.to_string()))?;
    let tb = q(&format!("{}/bin/trainbench", inv.kit_dir));
    let start = match &h.slurm {
        // Detached on the host itself: it outlives the connection.
        None => format!(
            "set -e; mkdir -p {d}; cat > {d}/job.json; cd {d}; setsid nohup {tb} agent run {d} > {d}/agent.log 2>&1 < /dev/null & echo started",
            d = q(&dir),
        ),
        // A batch job whose first node runs the agent (and, for several
        // nodes, the worker's srun + torchrun).
        Some(s) => {
            let spec = &job.spec.spec;
            let mut lines = vec![
                "#!/bin/sh".to_owned(),
                format!("#SBATCH --job-name=trainbench-run{}", job.run_id),
                format!("#SBATCH --nodes={}", spec.nodes),
                "#SBATCH --ntasks-per-node=1".to_owned(),
                format!("#SBATCH --output={dir}/slurm-%j.out"),
            ];
            if let Some(p) = &s.partition {
                lines.push(format!("#SBATCH --partition={p}"));
            }
            if spec.device != trainbench_core::spec::Device::Cpu {
                lines.push(format!("#SBATCH --gres=gpu:{}", spec.devices));
            }
            lines.push(format!("exec {tb} agent run {}", q(&dir)));
            let script = lines.join("\n") + "\n";
            format!(
                "set -e; mkdir -p {d}; cat > {d}/job.json; printf '%s' {sc} > {d}/job.sbatch; cd {d}; sbatch --parsable {d}/job.sbatch",
                d = q(&dir),
                sc = q(&script),
            )
        }
    };
    let started = host_sh(h, &start, Some(&text));
    if let Err(e) = &started {
        let reason = format!("could not start the run on host {}: {e}", h.name);
        return failed_to_start(ws, job.run_id, reason);
    }
    ws.store
        .insert_remote_run(job.run_id, &h.name, &h.url.to_string(), &dir)?;
    if h.slurm.is_some() {
        // "12345" or "12345;cluster".
        let out = started.unwrap_or_default();
        let id = out
            .trim()
            .lines()
            .last()
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .to_owned();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit() || c == '_') {
            let reason = format!("sbatch on host {} gave no job id: {out:?}", h.name);
            ws.store.finish_remote_run(job.run_id)?;
            return failed_to_start(ws, job.run_id, reason);
        }
        progress.log(
            job.run_id,
            &format!("[slurm] submitted job {id} on {}", h.name),
        );
        ws.store.set_slurm_job(job.run_id, &id)?;
    }
    let rr = remote_run_of(ws, job.run_id)?;
    follow(ws, local, h, rr, progress, cancel).await
}

/// A run that never started on its host, stored as failed (class internal).
fn failed_to_start(ws: &mut Workspace, run_id: i64, reason: String) -> AppResult<Finished> {
    ws.store.finish_run(
        run_id,
        RunStatus::Failed,
        Some(&reason),
        Some("internal"),
        None,
        "",
    )?;
    Ok(Finished {
        run_id,
        status: RunStatus::Failed,
        reason: Some(reason),
    })
}

/// The longest journal line read (a telemetry batch is a few KiB); a longer
/// one is skipped whole, its bytes still counted in the offset.
const JOURNAL_LINE_CAP: usize = 16 << 20;

/// Reads a remote run's journal from where the database says reading
/// stopped, to its outcome: reconnecting when ssh drops, cancelling on the
/// host when `cancel` turns on. A host unreachable for longer than
/// [`give_up_after`] leaves the run detached (still `running`; `attach`
/// resumes it).
async fn follow(
    ws: &mut Workspace,
    local: &Host,
    h: &RemoteHost,
    rr: RemoteRun,
    progress: &mut dyn Progress,
    mut cancel: watch::Receiver<bool>,
) -> AppResult<Finished> {
    let run_id = rr.run_id;
    let mut offset = rr.journal_offset;
    let mut started = ws.store.run_row(run_id)?.status == RunStatus::Running;
    let mut cancel_sent = false;
    let mut last_contact = Instant::now();
    let slurm_job = rr.slurm_job.clone();
    let mut said_pending = false;
    let mut ended_at: Option<(Instant, String)> = None;
    loop {
        if *cancel.borrow() && !cancel_sent {
            cancel_sent = send_cancel(h, &rr.dir, slurm_job.as_deref());
        }
        let mut child = tokio::process::Command::from(ssh(&h.url))
            .arg(format!(
                "tail -c +{} -F {}/journal.jsonl 2>/dev/null",
                offset + 1,
                q(&rr.dir)
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| AppError::Internal(format!("cannot start ssh: {e}")))?;
        let mut out = child
            .stdout
            .take()
            .ok_or_else(|| AppError::Internal("ssh has no stdout".into()))?;
        let mut lines = trainbench_runner::lines::LineSplitter::new(JOURNAL_LINE_CAP);
        let mut events: Vec<Event> = Vec::new();
        let mut samples: Vec<TelemetrySample> = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut flush = tokio::time::interval(Duration::from_millis(500));
        let mut poll = tokio::time::interval(Duration::from_secs(3));
        let spawned = Instant::now();
        let mut stored = offset;
        let mut cancellable = true;
        let ended: Option<JournalLine> = loop {
            tokio::select! {
                n = out.read(&mut buf) => match n {
                    Ok(0) | Err(_) => break None,
                    Ok(n) => {
                        last_contact = Instant::now();
                        lines.push(&buf[..n]);
                        let mut outcome = None;
                        while let Some(piece) = lines.next_piece() {
                            offset += piece.len();
                            let line = match piece {
                                trainbench_runner::lines::Piece::Line(l) => l,
                                trainbench_runner::lines::Piece::Cut(n) => {
                                    progress.log(run_id, &format!("[journal] a line of {n} bytes, over the {JOURNAL_LINE_CAP}-byte cap, was skipped"));
                                    continue;
                                }
                            };
                            let Ok(parsed) = serde_json::from_slice::<JournalLine>(&line) else {
                                progress.log(run_id, &format!("[journal] unreadable line: {}", String::from_utf8_lossy(&line).trim_end()));
                                continue;
                            };
                            match parsed {
                                JournalLine::Provenance { provenance } => {
                                    if !started {
                                        ws.store.start_run(run_id, &provenance)?;
                                        started = true;
                                    }
                                }
                                JournalLine::Event { event } => {
                                    progress.event(run_id, &event);
                                    events.push(event);
                                }
                                JournalLine::Telemetry { samples: s } => {
                                    progress.telemetry(run_id, &s);
                                    samples.extend(s);
                                }
                                JournalLine::Log { line } => progress.log(run_id, &line),
                                o @ JournalLine::Outcome { .. } => {
                                    outcome = Some(o);
                                    break;
                                }
                            }
                        }
                        if outcome.is_some() {
                            break outcome;
                        }
                    }
                },
                _ = flush.tick() => {
                    // ssh has been up a while (its keep-alives end it within
                    // 15 s when the host is gone): the host is in contact.
                    if spawned.elapsed() > Duration::from_secs(2) {
                        last_contact = Instant::now();
                    }
                    if offset != stored {
                        ws.store.record_journal(run_id, &events, &samples, offset)?;
                        events.clear();
                        samples.clear();
                        stored = offset;
                    }
                },
                changed = cancel.changed(), if cancellable => {
                    cancellable = changed.is_ok();
                    if *cancel.borrow() && !cancel_sent {
                        cancel_sent = send_cancel(h, &rr.dir, slurm_job.as_deref());
                    }
                },
                _ = poll.tick() => {
                    if *cancel.borrow() && !cancel_sent {
                        cancel_sent = send_cancel(h, &rr.dir, slurm_job.as_deref());
                    }
                    let Some(job) = slurm_job.as_deref() else {
                        // The agent on the host: one that ended (or never
                        // started) without journaling an outcome ends the run,
                        // after 10 s for the journal to catch up.
                        let state = agent_state(h, &rr.dir);
                        let (limit, what) = match state.as_deref() {
                            Some("ENDED") => (10, "ended without writing the run's outcome"),
                            Some("STARTING") => (60, "did not start"),
                            _ => {
                                ended_at = None;
                                continue;
                            }
                        };
                        let (since, _) = ended_at.get_or_insert_with(|| (Instant::now(), what.to_owned()));
                        if since.elapsed() > Duration::from_secs(limit) {
                            let tail = host_sh(h, &format!("tail -n 20 {}/agent.log 2>/dev/null || true", q(&rr.dir)), None)
                                .unwrap_or_default();
                            break Some(JournalLine::Outcome {
                                status: RunStatus::Failed,
                                reason: Some(format!(
                                    "the run's agent on host {} {what} (its log: {}/agent.log)",
                                    h.name, rr.dir
                                )),
                                error_class: Some("internal".into()),
                                exit_code: None,
                                stderr_tail: tail,
                            });
                        }
                        continue;
                    };
                    // A job that ended without its agent's outcome (cancelled
                    // while queued, killed by Slurm): after 10 s for the
                    // journal to catch up, its state is the outcome.
                    let state = slurm_state(h, job);
                    match state.as_deref() {
                        Some("PENDING") if !said_pending => {
                            said_pending = true;
                            progress.log(run_id, &format!("[slurm] job {job} is waiting in the queue"));
                        }
                        Some(s) if !SLURM_ACTIVE.contains(&s) => {
                            let (since, _) = ended_at.get_or_insert_with(|| (Instant::now(), s.to_owned()));
                            if since.elapsed() > Duration::from_secs(10) {
                                let tail = host_sh(h, &format!("tail -n 20 {}/slurm-{job}.out 2>/dev/null || true", q(&rr.dir)), None)
                                    .unwrap_or_default();
                                break Some(JournalLine::Outcome {
                                    status: if s == "CANCELLED" { RunStatus::Cancelled } else { RunStatus::Failed },
                                    reason: Some(format!(
                                        "Slurm job {job} ended {s} before the run's agent wrote its outcome (the job's output: {}/slurm-{job}.out)",
                                        rr.dir
                                    )),
                                    error_class: (s != "CANCELLED").then(|| "internal".to_owned()),
                                    exit_code: None,
                                    stderr_tail: tail,
                                });
                            }
                        }
                        _ => {}
                    }
                },
            }
        };
        let _ = child.start_kill();
        let _ = child.wait().await;
        ws.store.record_journal(run_id, &events, &samples, offset)?;
        if let Some(JournalLine::Outcome {
            status,
            reason,
            error_class,
            exit_code,
            stderr_tail,
        }) = ended
        {
            if !started {
                ws.store.start_run(run_id, &serde_json::json!({}))?;
            }
            ws.store.finish_run(
                run_id,
                status,
                reason.as_deref(),
                error_class.as_deref(),
                exit_code,
                &stderr_tail,
            )?;
            ws.store.finish_remote_run(run_id)?;
            trainbench_runner::finish_summary(&ws.store, run_id, &local.gpu)?;
            return Ok(Finished {
                run_id,
                status,
                reason,
            });
        }
        if last_contact.elapsed() > give_up_after() {
            return Err(AppError::Internal(format!(
                "lost contact with host {} ({}) for {} s: run {run_id} is still running there; `trainbench attach {run_id}` resumes reading it",
                h.name,
                h.url,
                last_contact.elapsed().as_secs()
            )));
        }
        progress.log(
            run_id,
            &format!(
                "[remote] the connection to {} ended; reconnecting from byte {offset}",
                h.name
            ),
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// SIGTERM to the run's agent on the host, or `scancel` of its Slurm job
/// (Slurm sends the agent SIGTERM, or drops the job from the queue); whether
/// ssh said it was sent.
fn send_cancel(h: &RemoteHost, dir: &str, slurm_job: Option<&str>) -> bool {
    let script = match slurm_job {
        Some(job) => format!("scancel {}", q(job)),
        None => format!("kill -TERM $(cat {}/agent.pid)", q(dir)),
    };
    host_sh(h, &script, None).is_ok()
}

/// The agent of a run on an SSH host: `RUNNING`, `ENDED` (gone, or a zombie
/// an init that does not reap left) or `STARTING` (no pid file yet).
fn agent_state(h: &RemoteHost, dir: &str) -> Option<String> {
    let d = q(dir);
    let script = format!(
        "if [ ! -f {d}/agent.pid ]; then echo STARTING; \
         else p=$(cat {d}/agent.pid); s=$(ps -o stat= -p \"$p\" 2>/dev/null); \
         case \"$s\" in ''|Z*) echo ENDED;; *) echo RUNNING;; esac; fi"
    );
    let out = host_sh(h, &script, None).ok()?;
    Some(out.trim().to_owned())
}

/// Slurm job states in which the job is still to run or running.
const SLURM_ACTIVE: [&str; 7] = [
    "PENDING",
    "CONFIGURING",
    "RUNNING",
    "COMPLETING",
    "SUSPENDED",
    "REQUEUED",
    "RESIZING",
];

/// A Slurm job's state: squeue while it is known there, then sacct (where
/// accounting is on) or scontrol (while the controller remembers it).
fn slurm_state(h: &RemoteHost, job: &str) -> Option<String> {
    let j = q(job);
    let script = format!(
        "s=$(squeue -h -j {j} -o %T 2>/dev/null); \
         [ -z \"$s\" ] && s=$(sacct -X -n -P -j {j} -o State 2>/dev/null | head -n 1 | cut -d' ' -f1); \
         [ -z \"$s\" ] && s=$(scontrol show job {j} 2>/dev/null | sed -n 's/.*JobState=\\([A-Z_]*\\).*/\\1/p' | head -n 1); \
         echo \"$s\""
    );
    let out = host_sh(h, &script, None).ok()?;
    let s = out.trim().to_owned();
    (!s.is_empty()).then_some(s)
}

/// The remote row of run `run_id`, or why there is none.
fn remote_run_of(ws: &Workspace, run_id: i64) -> AppResult<RemoteRun> {
    ws.store.remote_run(run_id)?.ok_or_else(|| {
        bad(
            "run",
            format!("run = {run_id} is not allowed: it did not run on a remote host"),
        )
    })
}

/// Re-attaches to a remote run the studio stopped following.
pub async fn attach(
    ws: &mut Workspace,
    local: &Host,
    run_id: i64,
    progress: &mut dyn Progress,
    cancel: watch::Receiver<bool>,
) -> AppResult<Finished> {
    let rr = remote_run_of(ws, run_id)?;
    if rr.finished {
        return Err(bad(
            "run",
            format!("run = {run_id} is not allowed: its journal was read to the end already"),
        ));
    }
    let h = host(&rr.host)?;
    follow(ws, local, &h, rr, progress, cancel).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_addresses_parse_and_print_back() {
        let u = SshUrl::parse("ssh://ada@gpu1.example.org:2222/scratch/tb").unwrap();
        assert_eq!(u.destination(), "ada@gpu1.example.org");
        assert_eq!((u.port, u.root.as_str()), (Some(2222), "/scratch/tb"));
        assert_eq!(u.to_string(), "ssh://ada@gpu1.example.org:2222/scratch/tb");
        let d = SshUrl::parse("ssh://box").unwrap();
        assert_eq!(
            (d.user.as_deref(), d.port, d.root.as_str()),
            (None, None, DEFAULT_ROOT)
        );
        assert_eq!(d.to_string(), "ssh://box");
        let home = SshUrl::parse("ssh://box/~/bench").unwrap();
        assert_eq!(home.root, "bench");
        assert_eq!(home.to_string(), "ssh://box/~/bench");
        for bad in [
            "box",
            "http://box",
            "ssh://",
            "ssh://@box",
            "ssh://box:0",
            "ssh://box:99999",
            "ssh://-oProxyCommand=x",
            "ssh://a;b",
            "ssh://box/it's",
        ] {
            let e = SshUrl::parse(bad).unwrap_err();
            assert!(
                e.to_string()
                    .contains(&format!("url = {bad} is not allowed")),
                "{e}"
            );
        }
    }

    #[test]
    fn remote_shell_words_are_quoted() {
        assert_eq!(q("a b"), "'a b'");
        assert_eq!(q("it's"), r"'it'\''s'");
    }
}

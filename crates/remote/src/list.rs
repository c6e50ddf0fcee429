//! The studio's host list (`$TRAINBENCH_HOME/hosts.json`): read (every
//! host checked by the rules of [`crate::hosts`]), changed under its lock,
//! and the use cases that add, check again and remove a host.

use std::path::PathBuf;

use trainbench_runner::envs;

use crate::address::HostUrl;
use crate::error::{RemoteError, RemoteResult};
use crate::hosts::{check_word, parse_env, validate, RemoteHost, SlurmSettings};
use crate::url::SshUrl;
use crate::{bad, check};

fn hosts_file() -> PathBuf {
    envs::home().join("hosts.json")
}

/// The studio's hosts, by name.
pub fn hosts() -> RemoteResult<Vec<RemoteHost>> {
    let path = hosts_file();
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let list: Vec<RemoteHost> = serde_json::from_str(&text).map_err(|e| {
                RemoteError::Internal(format!("{} is not a host list: {e}", path.display()))
            })?;
            for h in &list {
                validate(h).map_err(|e| match e {
                    RemoteError::BadInput { field, message } => RemoteError::BadInput {
                        field,
                        message: format!("{}: host {:?}: {message}", path.display(), h.name),
                    },
                    other => other,
                })?;
            }
            Ok(list)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(RemoteError::Internal(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

/// Changes the host list under its lock (`hosts.json.lock`), read and written
/// whole inside it, so two processes adding hosts at once both keep theirs.
fn update_hosts<T>(
    change: impl FnOnce(&mut Vec<RemoteHost>) -> RemoteResult<T>,
) -> RemoteResult<T> {
    let path = hosts_file();
    let _lock = trainbench_files::FileLock::exclusive(&path)?;
    let mut list = hosts()?;
    let out = change(&mut list)?;
    let text =
        serde_json::to_string_pretty(&list).map_err(|e| RemoteError::Internal(e.to_string()))?;
    trainbench_files::write_atomic("hosts", &path, text.as_bytes())?;
    Ok(out)
}

/// The host called `name`.
pub fn host(name: &str) -> RemoteResult<RemoteHost> {
    let list = hosts()?;
    let names: Vec<String> = list.iter().map(|h| h.name.clone()).collect();
    list.into_iter().find(|h| h.name == name).ok_or_else(|| {
        bad(
            "host",
            format!(
                "host = {name} is not allowed: expected one of the studio's hosts ({}); add one with `trainbench host add NAME ssh://user@host` (or `ray://HEAD:8265` for a Ray cluster)",
                if names.is_empty() { "none yet".into() } else { names.join(", ") }
            ),
        )
    })
}

/// Adds (or replaces) a host, installs the kit there and checks it, saying
/// each step as it starts (`say`).
pub fn add_host(
    name: &str,
    url: &str,
    pythons: &[String],
    env: &[String],
    slurm: Option<SlurmSettings>,
    peers: &[String],
    say: &mut dyn FnMut(&str),
) -> RemoteResult<RemoteHost> {
    check_word("name", name)?;
    let url = HostUrl::parse(url)?;
    if matches!(url, HostUrl::Ray(_)) && (slurm.is_some() || !peers.is_empty()) {
        return Err(bad(
            "url",
            format!("url = {url} is not allowed with --slurm or --peer: a Ray cluster places its own runs"),
        ));
    }
    let peers = peers
        .iter()
        .map(|p| SshUrl::parse(p).map_err(|e| bad("peer", e.to_string())))
        .collect::<RemoteResult<Vec<_>>>()?;
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
        .collect::<RemoteResult<Vec<_>>>()?;
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
    h.inventory = Some(check::check(&h, say)?);
    say(&format!("saving {name} in the host list"));
    update_hosts(|list| {
        list.retain(|x| x.name != name);
        list.push(h.clone());
        Ok(())
    })?;
    Ok(h)
}

/// Checks a host again (the kit re-sent if it changed) and stores what it
/// has, saying each step as it starts (`say`).
pub fn check_host(name: &str, say: &mut dyn FnMut(&str)) -> RemoteResult<RemoteHost> {
    let mut h = host(name)?;
    h.inventory = Some(check::check(&h, say)?);
    update_hosts(|list| {
        for x in list.iter_mut().filter(|x| x.name == name) {
            *x = h.clone();
        }
        Ok(())
    })?;
    Ok(h)
}

/// Removes a host from the list (its folders on the host are left alone).
pub fn remove_host(name: &str) -> RemoteResult<()> {
    host(name)?;
    update_hosts(|list| {
        list.retain(|x| x.name != name);
        Ok(())
    })
}

//! Where the libtorch worker finds libtorch at run time. The worker is built
//! against the `torch` wheel of the builder's studio PyTorch environment and
//! remembers that folder (its RUNPATH); on any other account or machine — a
//! Debian package installed by someone else — that folder is not there. The
//! `torch` wheel ships libtorch, so the worker is started with
//! `LD_LIBRARY_PATH` naming `torch/lib` of the person's *own* studio PyTorch
//! environment (searched before the RUNPATH), which the studio installs
//! (`trainbench env install pytorch`, the wizard's Install) — unless the
//! worker starts with the libtorch it was built against, which is then
//! used: a worker built for another libtorch release (the PyTorch 2.11
//! build, `TRAINBENCH_WORKER_TCH`) must not load the environment's 2.13.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use trainbench_core::Framework;

/// `torch/lib` (with `libtorch_cpu.so`) of the environment whose interpreter
/// is `python` (`ENV/bin/python` → `ENV/lib/python3.*/site-packages/torch/lib`).
pub fn libtorch_lib_of(python: &Path) -> Option<PathBuf> {
    let root = python.parent()?.parent()?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(root.join("lib"))
        .ok()?
        .flatten()
        .map(|d| d.path().join("site-packages/torch/lib"))
        .filter(|p| p.join("libtorch_cpu.so").is_file())
        .collect();
    found.sort();
    found.pop()
}

/// libtorch in the studio's own PyTorch environment, when it is installed
/// (that environment alone is looked at, not every registered one).
pub fn libtorch_lib() -> Option<PathBuf> {
    let env = super::builtin_env(super::builtin(Framework::Pytorch)?);
    env.ready.then(|| libtorch_lib_of(&env.python)).flatten()
}

/// What the libtorch worker `program` says of its libtorch (`--version`:
/// `2.13.0+cu130`) when started with `env` over this process's environment —
/// or, `alone`, without any `LD_LIBRARY_PATH`, so only from the folder it was
/// built against. `None`: it does not start, or says no version within
/// [`PROBE_TIMEOUT`] and its first 4 KiB (what it prints beyond is never
/// read: `program` may be any file). Asked once per program and way.
pub fn worker_libtorch(program: &Path, env: &[(String, String)], alone: bool) -> Option<String> {
    type Key = (PathBuf, Vec<(String, String)>, bool);
    static ASKED: Mutex<BTreeMap<Key, Option<String>>> = Mutex::new(BTreeMap::new());
    let key = (program.to_path_buf(), env.to_vec(), alone);
    if let Some(known) = ASKED.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return known;
    }
    let version = probe(program, env, alone).and_then(|text| {
        text.split("(libtorch ")
            .nth(1)
            .and_then(|v| v.split(')').next())
            .map(str::to_owned)
    });
    if let Ok(mut m) = ASKED.lock() {
        m.insert(key, version.clone());
    }
    version
}

/// How long a worker may take to answer `--version` (it loads libtorch).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// `program --version`'s first 4 KiB of stdout when it exits successfully
/// within [`PROBE_TIMEOUT`]; it is killed otherwise.
fn probe(program: &Path, env: &[(String, String)], alone: bool) -> Option<String> {
    use std::io::Read;
    let mut cmd = Command::new(program);
    cmd.arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if alone {
        cmd.env_remove("LD_LIBRARY_PATH");
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let mut child = cmd.spawn().ok()?;
    let mut out = child.stdout.take()?;
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::Builder::new()
        .name("worker-version".into())
        .spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut out).take(4096).read_to_end(&mut buf);
            let _ = tx.send(buf);
        })
        .ok()?;
    // 4 KiB read means more is coming: no version line is that long.
    let text = rx
        .recv_timeout(PROBE_TIMEOUT)
        .ok()
        .filter(|t| t.len() < 4096);
    let deadline = Instant::now() + PROBE_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if text.is_some() && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    drop(reader);
    let text = String::from_utf8_lossy(&text?).into_owned();
    status.filter(|s| s.success()).map(|_| text)
}

/// `LD_LIBRARY_PATH` with `lib` first (what was set before kept after it).
pub fn library_path_with(lib: &Path) -> String {
    match std::env::var_os("LD_LIBRARY_PATH").filter(|v| !v.is_empty()) {
        Some(old) => format!("{}:{}", lib.display(), old.to_string_lossy()),
        None => lib.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_lib_is_found_beside_the_interpreter() {
        let root = std::env::temp_dir().join(format!("tb-libtorch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let lib = root.join("lib/python3.11/site-packages/torch/lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::create_dir_all(root.join("bin")).unwrap();
        let python = root.join("bin/python");
        assert_eq!(libtorch_lib_of(&python), None, "no libtorch_cpu.so yet");
        std::fs::write(lib.join("libtorch_cpu.so"), b"").unwrap();
        assert_eq!(libtorch_lib_of(&python), Some(lib));
        let _ = std::fs::remove_dir_all(&root);
    }
}

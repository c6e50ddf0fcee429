//! Installing the studio's own environment for a Python framework from PyPI:
//! uv where there is one (parallel downloads), else `python3 -m venv` and pip.
//!
//! The environment is built in a staging folder beside its final place
//! (`envs/.NAME.PID.installing`), its worker is started once there, and only
//! then is it moved into place with its ready marker. A failed or cancelled
//! install removes the staging folder and leaves what was there before as it
//! was: nothing is ever half-installed under the environment's name.
//!
//! Two installs of one environment (two terminals, the desktop and the CLI)
//! never share a staging folder: each process stages in its own, and the
//! install lock (`locks/install.envs.NAME.lock` in the studio's home) lets one fill and move into
//! place at a time. The second waits, saying
//! so, and then finds the environment ready instead of making it again.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use trainbench_core::versions::{Pin, Release};
use trainbench_core::Framework;

use super::install_steps::steps;
pub use super::install_steps::uv_program;
use super::progress::{InstallMeter, InstallProgress};
use super::{bad, builtin, builtin_env, check, home, sha256_hex, EnvError, FrameworkEnv};

/// The worker's report (`check`) said the release `target` is made for,
/// when it is one; else the install fails naming both.
fn check_reported_release(target: &Target<'_>, info: &serde_json::Value) -> Result<(), EnvError> {
    match target.pin {
        Some(pin) => super::check_release(pin, info["version"].as_str().unwrap_or("?")),
        None => Ok(()),
    }
}

/// One thing the installer reports: a line of its output (or the studio's
/// own `$ command` line) with the figures so far.
#[derive(Debug, Clone)]
pub struct InstallUpdate<'a> {
    pub line: &'a str,
    pub progress: &'a InstallProgress,
}

/// An installed environment and what its worker reported when it started.
#[derive(Debug, Clone)]
pub struct Installed {
    pub env: FrameworkEnv,
    pub info: serde_json::Value,
    pub progress: InstallProgress,
    /// Another process made it while this one waited: nothing was installed.
    pub found_ready: bool,
}

fn remove_dir(dir: &Path) {
    if dir.exists() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Passes `line` to `on` with the figures so far, their seconds brought up to date.
fn emit(
    meter: &mut InstallMeter,
    started: Instant,
    on: &mut dyn FnMut(InstallUpdate<'_>),
    line: &str,
) {
    meter.elapsed(started.elapsed().as_secs_f64());
    on(InstallUpdate {
        line,
        progress: meter.progress(),
    });
}

/// Ends a child and every process it started.
fn stop_group(child: &mut std::process::Child) {
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.wait();
}

/// Runs one installer command; every output line goes to `on`. `Ok(false)`
/// when `cancel` was set (the command and its children are stopped).
fn run_step(
    program: &str,
    args: &[String],
    meter: &mut InstallMeter,
    started: Instant,
    cancel: &AtomicBool,
    on: &mut dyn FnMut(InstallUpdate<'_>),
) -> Result<bool, String> {
    emit(
        meter,
        started,
        on,
        &format!("$ {program} {}", args.join(" ")),
    );
    // Both streams, in order; the last lines explain a failure.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#"exec "$0" "$@" 2>&1"#)
        .arg(program)
        .args(args)
        .env("UV_PYTHON_DOWNLOADS", "never")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let (tx, rx) = mpsc::channel::<String>();
    if let Some(out) = child.stdout.take() {
        std::thread::Builder::new()
            .name("install-output".into())
            .spawn(move || {
                for l in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(l).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| format!("cannot read {program}'s output: {e}"))?;
    }
    let mut tail: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    loop {
        if cancel.load(Ordering::SeqCst) {
            stop_group(&mut child);
            return Ok(false);
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(l) => {
                meter.line(&l);
                emit(meter, started, on, &l);
                if tail.len() == 8 {
                    tail.pop_front();
                }
                tail.push_back(l);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() {
        Ok(true)
    } else {
        let said: Vec<String> = tail.into_iter().collect();
        Err(format!(
            "`{program} {}` exited with {status}: {}",
            args.join(" "),
            said.join(" / ")
        ))
    }
}

/// Creates (or re-creates) the studio's environment for `framework` from
/// PyPI and starts its worker once, passing each installer line and the
/// figures so far ([`InstallProgress`]) to `on`. Setting `cancel` stops the
/// installer; the environment is then as it was before
/// ([`EnvError::Cancelled`]). An environment whose worker does not start is
/// an error, not an installed framework.
pub fn install(
    framework: Framework,
    gpu: bool,
    cancel: &AtomicBool,
    on: impl FnMut(InstallUpdate<'_>),
) -> Result<Installed, EnvError> {
    let b = builtin(framework)
        .ok_or_else(|| bad("framework", framework, Framework::list(&Framework::PYTHON)))?;
    let requirements = if gpu {
        b.requirements_gpu
    } else {
        b.requirements_cpu
    };
    let dir = home().join("envs").join(b.env_name);
    let label = format!("{framework} ({})", b.env_name);
    let pin = b
        .env_name
        .rsplit_once('-')
        .and_then(|(_, v)| Release::parse(v))
        .map(|release| Pin { framework, release });
    let target = Target {
        framework,
        dir: &dir,
        requirements,
        label: &label,
        pin,
    };
    let done = install_at(&target, cancel, on)?;
    Ok(Installed {
        env: builtin_env(b),
        info: done.info,
        progress: done.progress,
        found_ready: done.found_ready,
    })
}

/// What one install makes: the framework, the folder it goes to, the
/// requirements it is made from, and its name for people (`jax==0.7.2`).
pub(super) struct Target<'a> {
    pub framework: Framework,
    pub dir: &'a Path,
    pub requirements: &'a str,
    pub label: &'a str,
    /// The release its worker must report, when it is one.
    pub pin: Option<Pin>,
}

/// What [`install_at`] did: the worker's report, the figures, and whether
/// the environment was found ready (another process made it meanwhile).
pub(super) struct Done {
    pub info: serde_json::Value,
    pub progress: InstallProgress,
    pub found_ready: bool,
}

/// Whether `dir` holds an environment made from `requirements`.
fn ready_at(dir: &Path, requirements: &str) -> bool {
    super::made_from(dir, &[requirements])
}

/// The environment at `dir` as the worker check sees it.
fn env_at(framework: Framework, name: &str, dir: &Path) -> FrameworkEnv {
    FrameworkEnv {
        name: name.to_owned(),
        framework,
        python: dir.join("bin").join("python"),
        builtin: true,
        ready: true,
        version: None,
    }
}

/// Takes the lock on installing `name` in `envs`, waiting (and saying so
/// through `on`) while another process installs it. `Ok(None)` when
/// `cancel` was set while waiting; the flag says whether it waited.
fn lock_install(
    envs: &Path,
    name: &str,
    label: &str,
    cancel: &AtomicBool,
    meter: &mut InstallMeter,
    started: Instant,
    on: &mut dyn FnMut(InstallUpdate<'_>),
) -> Result<Option<(trainbench_files::FileLock, bool)>, trainbench_files::FileError> {
    // In the studio's lock folder, not beside the environments: a lock file
    // outlives its install and would read as something left behind.
    let place = envs
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let file = home().join("locks").join(format!("install.{place}.{name}"));
    if let Some(lock) = trainbench_files::FileLock::try_exclusive(&file)? {
        return Ok(Some((lock, false)));
    }
    meter.step("waiting");
    emit(
        meter,
        started,
        on,
        &format!("waiting for another install of {label} to finish"),
    );
    loop {
        if cancel.load(Ordering::SeqCst) {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(200));
        if let Some(lock) = trainbench_files::FileLock::try_exclusive(&file)? {
            return Ok(Some((lock, true)));
        }
    }
}

/// Removes what installs of `name` that were killed left in `envs`: their
/// staging folders and requirement files. Only under the install lock, so
/// no other process is filling one of them.
fn remove_leftovers(envs: &Path, name: &str) {
    let prefix = format!(".{name}.");
    for entry in std::fs::read_dir(envs).into_iter().flatten().flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        if rest.ends_with("installing") || rest == "old" {
            remove_dir(&entry.path());
        } else if rest.ends_with("requirements.txt") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Builds the environment `target` names: under its install lock (a second
/// install of it waits, saying so, and then finds it ready when the first
/// made it), in a staging folder of this process's own beside it, its
/// worker started once there, then moved into place with its ready marker
/// (the requirements' SHA-256). A failed or cancelled install leaves what
/// was at the folder as it was.
pub(super) fn install_at(
    target: &Target<'_>,
    cancel: &AtomicBool,
    mut on: impl FnMut(InstallUpdate<'_>),
) -> Result<Done, EnvError> {
    let (framework, dir) = (target.framework, target.dir);
    let fail = |reason: String| EnvError::Install {
        framework: framework.to_string(),
        reason,
    };
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| fail(format!("{} has no folder name", dir.display())))?;
    let envs = dir
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| fail(format!("{} has no parent folder", dir.display())))?;
    std::fs::create_dir_all(&envs)
        .map_err(|e| fail(format!("cannot create {}: {e}", envs.display())))?;
    let started = Instant::now();
    let mut meter = InstallMeter::new();
    let was_ready = ready_at(dir, target.requirements);
    let lock = lock_install(
        &envs,
        &name,
        target.label,
        cancel,
        &mut meter,
        started,
        &mut on,
    )
    .map_err(|e| fail(e.to_string()))?;
    let Some((_lock, waited)) = lock else {
        return Err(EnvError::Cancelled {
            framework: framework.to_string(),
        });
    };
    // Made by another process while this one waited or prepared: kept.
    if ready_at(dir, target.requirements) && (waited || !was_ready) {
        emit(
            &mut meter,
            started,
            &mut on,
            &format!("{} is ready: another install made it", target.label),
        );
        let info = check(&env_at(framework, &name, dir)).map_err(|why| {
            fail(format!(
                "the environment another install made does not start its worker: {why}"
            ))
        })?;
        check_reported_release(target, &info)?;
        meter.step("installed");
        meter.elapsed(started.elapsed().as_secs_f64());
        return Ok(Done {
            info,
            progress: meter.progress().clone(),
            found_ready: true,
        });
    }
    remove_leftovers(&envs, &name);
    let staging = envs.join(format!(".{name}.{}.installing", std::process::id()));
    let filled = fill_staging(
        target, &name, &staging, &mut meter, started, cancel, &mut on,
    );
    let info = match filled {
        Ok(Some(info)) => info,
        Ok(None) => {
            remove_dir(&staging);
            return Err(EnvError::Cancelled {
                framework: framework.to_string(),
            });
        }
        Err(e) => {
            remove_dir(&staging);
            return Err(e);
        }
    };
    move_into_place(&envs, &name, &staging, dir).map_err(fail)?;
    meter.step("installed");
    meter.elapsed(started.elapsed().as_secs_f64());
    Ok(Done {
        info,
        progress: meter.progress().clone(),
        found_ready: false,
    })
}

/// Runs the installer into `staging` (this process's own folder), starts
/// the worker once there and writes the ready marker. `Ok(None)` when
/// cancelled.
fn fill_staging(
    target: &Target<'_>,
    name: &str,
    staging: &Path,
    meter: &mut InstallMeter,
    started: Instant,
    cancel: &AtomicBool,
    on: &mut dyn FnMut(InstallUpdate<'_>),
) -> Result<Option<serde_json::Value>, EnvError> {
    let framework = target.framework;
    let fail = |reason: String| EnvError::Install {
        framework: framework.to_string(),
        reason,
    };
    // The requirements file lives outside the folder the venv is made in
    // until the environment is complete.
    let req_file = staging.with_extension("requirements.txt");
    let result = (|| {
        std::fs::write(&req_file, target.requirements).map_err(|e| fail(e.to_string()))?;
        for (what, program, args) in steps(staging, &req_file) {
            meter.step(what);
            match run_step(&program, &args, meter, started, cancel, on) {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(reason) => return Err(fail(reason)),
            }
        }
        let _ = std::fs::rename(&req_file, staging.join("requirements.txt"));
        meter.step("checking the worker");
        emit(
            meter,
            started,
            on,
            &format!("starting the {framework} worker once in the new environment"),
        );
        let info = check(&env_at(framework, name, staging)).map_err(|why| {
            fail(format!(
                "the environment installed but its worker does not start: {why}"
            ))
        })?;
        check_reported_release(target, &info)?;
        if cancel.load(Ordering::SeqCst) {
            return Ok(None);
        }
        std::fs::write(
            staging.join(".trainbench-ready"),
            sha256_hex(target.requirements),
        )
        .map_err(|e| fail(e.to_string()))?;
        Ok(Some(info))
    })();
    let _ = std::fs::remove_file(&req_file);
    result
}

/// Into place: the old environment (if any) aside, the new one in, the old
/// one removed. Each rename is atomic; on failure the old one is put back
/// and the staging folder removed.
fn move_into_place(envs: &Path, name: &str, staging: &Path, dir: &Path) -> Result<(), String> {
    let old = envs.join(format!(".{name}.old"));
    remove_dir(&old);
    if dir.exists() {
        if let Err(e) = std::fs::rename(dir, &old) {
            remove_dir(staging);
            return Err(format!("cannot move {} aside: {e}", dir.display()));
        }
    }
    if let Err(e) = std::fs::rename(staging, dir) {
        let _ = std::fs::rename(&old, dir);
        remove_dir(staging);
        return Err(format!(
            "cannot move the new environment into {}: {e}",
            dir.display()
        ));
    }
    remove_dir(&old);
    Ok(())
}

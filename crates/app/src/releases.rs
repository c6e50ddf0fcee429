//! A framework's releases to choose from (the wizard's version picker,
//! `trainbench env releases`): every supported final release the registry
//! lists, newest first, each with whether its environment is here.

use serde::Serialize;
use trainbench_core::versions::{Pin, Supported};
use trainbench_core::Framework;
use trainbench_runner::envs;

use crate::error::{AppError, AppResult};

/// One release a person can pick.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReleaseChoice {
    /// What goes into the sweep request: `jax==0.7.2`.
    pub key: String,
    pub version: String,
    /// Its environment is ready here (made before, or the studio's own).
    pub installed: bool,
    /// It is the release of the studio's own environment for the framework.
    pub studio_own: bool,
}

/// `framework` as one whose releases install from PyPI (jax, pytorch,
/// tensorflow); anything else is refused naming the field.
pub fn python_framework(framework: &str) -> AppResult<Framework> {
    match Framework::parse(framework) {
        Ok(f @ (Framework::Jax | Framework::Pytorch | Framework::Tensorflow)) => Ok(f),
        _ => Err(AppError::bad_input(
            "framework",
            framework,
            "jax, pytorch or tensorflow (a framework installed from PyPI at any release)",
        )),
    }
}

/// The releases of `framework` (a Python framework's name) the registry
/// lists within the supported range, newest first; the range in words.
pub fn releases(framework: &str) -> AppResult<(Vec<ReleaseChoice>, String)> {
    let f = python_framework(framework)?;
    let range = Supported::of(f).map(Supported::words).unwrap_or_default();
    let own = envs::resolve(f, None)
        .ok()
        .filter(|e| e.ready && e.builtin)
        .and_then(|e| e.version);
    let mut out: Vec<ReleaseChoice> = envs::registry::releases(f)?
        .into_iter()
        .map(|release| {
            let pin = Pin {
                framework: f,
                release,
            };
            ReleaseChoice {
                key: pin.to_string(),
                version: release.to_string(),
                installed: envs::pinned::env_for(pin).ready,
                studio_own: own.as_deref() == Some(release.to_string().as_str()),
            }
        })
        .collect();
    out.reverse();
    Ok((out, range))
}

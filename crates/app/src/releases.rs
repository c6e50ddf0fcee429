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

/// What [`install_missing`] did: the releases made, and the budget check
/// after (the ones removed over the disk budget, the ones kept in use).
pub type ReleaseInstalls = (Vec<MadeRelease>, envs::pinned::Eviction);

/// A release's environment made because a sweep names it.
#[derive(Debug)]
pub struct MadeRelease {
    pub pin: Pin,
    pub installed: envs::Installed,
    /// Its disk (files hard-linked from the installer's cache counted).
    pub bytes: Option<u64>,
}

/// Makes the environment of every release `frameworks` names that is not
/// installed (`jax==0.7.2`), one after another through `installs`, so that
/// the desktop's Cancel or the CLI's Ctrl-C stops the one under way; then
/// removes the least recently used releases over the disk budget, never one
/// that `frameworks` names. `on_start` is told each release before its
/// install, `on` each installer line. Returns the releases made and the ones
/// removed (name, bytes). Both shells start a sweep through it.
pub fn install_missing(
    installs: &crate::frameworks::Installs,
    frameworks: &[String],
    gpu: bool,
    mut on_start: impl FnMut(Pin),
    mut on: impl FnMut(Pin, envs::InstallUpdate<'_>),
) -> AppResult<ReleaseInstalls> {
    let missing = crate::sweep::missing_releases(frameworks)?;
    let mut made = Vec::with_capacity(missing.len());
    for pin in missing {
        on_start(pin);
        let installed = installs.install(&pin.to_string(), gpu, |u| on(pin, u))?;
        made.push(MadeRelease {
            pin,
            installed,
            bytes: envs::pinned::bytes_of(pin),
        });
    }
    let evicted = if made.is_empty() {
        envs::pinned::Eviction::default()
    } else {
        envs::pinned::evict_over_budget(&crate::sweep::named_releases(frameworks))
    };
    Ok((made, evicted))
}

/// A release's environment a disk budget pass removed or kept, with the
/// sentence both shells show ([`removed_words`], [`kept_words`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BudgetedRelease {
    /// `jax==0.6.1`.
    pub release: String,
    /// Its disk (files hard-linked from the installer's cache counted).
    pub bytes: u64,
    pub words: String,
}

/// What a disk budget pass did, in both shells' words: the releases'
/// environments removed (the least recently used first), and those kept
/// over the budget because a run, a sweep, a bisection or an install uses
/// them (removed when their last user lets go, if still over).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BudgetPass {
    pub removed: Vec<BudgetedRelease>,
    pub kept: Vec<BudgetedRelease>,
}

impl From<&envs::pinned::Eviction> for BudgetPass {
    fn from(e: &envs::pinned::Eviction) -> BudgetPass {
        let said = |list: &[(String, u64)], words: fn(&str, u64) -> String| {
            list.iter()
                .map(|(release, bytes)| BudgetedRelease {
                    release: release.clone(),
                    bytes: *bytes,
                    words: words(release, *bytes),
                })
                .collect()
        };
        BudgetPass {
            removed: said(&e.removed, removed_words),
            kept: said(&e.in_use, kept_words),
        }
    }
}

impl BudgetPass {
    /// Every sentence, the removed first.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.removed
            .iter()
            .chain(&self.kept)
            .map(|r| r.words.as_str())
    }
}

/// A release's environment removed over the disk budget, in the words both
/// shells show: "removed jax==0.6.1's environment (913 MiB, the least
/// recently used): the releases' environments were over their 20 GiB disk
/// budget".
pub fn removed_words(release: &str, bytes: u64) -> String {
    format!(
        "removed {release}'s environment ({}, the least recently used): the releases' environments were over their {} disk budget",
        size_words(bytes),
        size_words(envs::pinned::budget())
    )
}

/// A release's environment kept over the disk budget because something
/// uses it, in the words both shells show.
pub fn kept_words(release: &str, bytes: u64) -> String {
    format!(
        "kept {release}'s environment ({}) although the releases' environments are over their {} disk budget: it is in use (a run, a sweep, a bisection or an install); it is removed when it is free",
        size_words(bytes),
        size_words(envs::pinned::budget())
    )
}

/// Bytes for a person: MiB below a GiB, GiB (one decimal, or none when whole) above.
fn size_words(bytes: u64) -> String {
    const GIB: u64 = 1 << 30;
    if bytes < GIB {
        crate::batch_words::mib(bytes)
    } else if bytes.is_multiple_of(GIB) {
        format!("{} GiB", bytes / GIB)
    } else {
        format!("{:.1} GiB", bytes as f64 / GIB as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::{size_words, BudgetPass};
    use trainbench_runner::envs::pinned::Eviction;

    #[test]
    fn a_budget_pass_says_the_removed_and_the_kept_releases() {
        let pass = BudgetPass::from(&Eviction {
            removed: vec![("jax==0.6.1".into(), 3 << 20)],
            in_use: vec![("jax==0.6.0".into(), 5 << 20)],
        });
        assert_eq!(pass.removed[0].release, "jax==0.6.1");
        assert_eq!(pass.kept[0].release, "jax==0.6.0");
        assert_eq!(pass.kept[0].bytes, 5 << 20);
        let words: Vec<&str> = pass.words().collect();
        assert!(
            words[0].starts_with("removed jax==0.6.1's environment (3 MiB"),
            "{words:?}"
        );
        assert!(
            words[1].starts_with("kept jax==0.6.0's environment (5 MiB)"),
            "{words:?}"
        );
        assert!(
            words[1].contains("it is in use (a run, a sweep, a bisection or an install)"),
            "{words:?}"
        );
    }

    #[test]
    fn sizes_read_in_mib_then_gib() {
        assert_eq!(size_words(957_349_888), "913 MiB");
        assert_eq!(size_words(20 << 30), "20 GiB");
        assert_eq!(size_words(3 << 29), "1.5 GiB");
    }
}

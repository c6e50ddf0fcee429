//! What the model search keeps in the studio's cache folder
//! (`$XDG_CACHE_HOME/trainbench`), per environment:
//!
//! - `model-names.json`: every library name of the environment with its
//!   family, asked of its worker once and kept while the environment's
//!   packages stay as they were (the modification time of its
//!   `site-packages` folder, which installing or removing a package
//!   changes); a search is then a filter, with no worker started;
//! - `model-sizes.json`: each library model's parameter count, counted once.
//!
//! A cache that cannot be read is asked again; one that cannot be written
//! costs time, never an answer.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use trainbench_core::Framework;
use trainbench_runner::envs::library::LibraryNames;
use trainbench_runner::envs::FrameworkEnv;

use crate::{AppError, AppResult};

/// The sizes counted so far, per environment: name → (family, parameters).
pub(super) type Sizes = BTreeMap<String, BTreeMap<String, (String, u64)>>;

fn file(name: &str) -> PathBuf {
    trainbench_files::places::cache_dir().join(name)
}

fn load<T: serde::de::DeserializeOwned + Default>(name: &str) -> T {
    std::fs::read(file(name))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn save<T: Serialize>(name: &str, value: &T) -> AppResult<()> {
    let path = file(name);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| AppError::Internal(format!("{}: {e}", dir.display())))?;
    }
    let bytes = serde_json::to_vec(value).map_err(|e| AppError::Internal(e.to_string()))?;
    Ok(trainbench_files::write_atomic("cache", &path, &bytes)?)
}

pub(super) fn load_sizes() -> Sizes {
    load("model-sizes.json")
}

pub(super) fn save_sizes(sizes: &Sizes) -> AppResult<()> {
    save("model-sizes.json", sizes)
}

/// An environment's library names the studio trains, with their families.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Names {
    /// What the environment's packages were when the names were asked.
    pub fingerprint: String,
    pub names: Vec<String>,
    pub families: BTreeMap<String, String>,
}

impl Names {
    /// The names of `framework`'s libraries that have a family: a
    /// transformers model type without one is one the studio does not train
    /// (neither a causal language model nor a sequence classifier).
    pub fn from(framework: Framework, found: LibraryNames) -> Names {
        let names = match framework {
            Framework::Tensorflow => found.keras,
            _ => found.timm.into_iter().chain(found.hf).collect(),
        };
        Names {
            fingerprint: String::new(),
            names: names
                .into_iter()
                .filter(|n| found.families.contains_key(n))
                .collect(),
            families: found.families,
        }
    }
}

/// The environment's packages as they are: its `site-packages` folder and
/// when it last changed; `None` where there is none to read (a system
/// Python's), and then nothing is kept.
fn fingerprint(env: &FrameworkEnv) -> Option<String> {
    let lib = env.python.parent()?.parent()?.join("lib");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&lib)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    let sp = found.first()?;
    let changed = std::fs::metadata(sp)
        .ok()?
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!("{}@{}", sp.display(), changed.as_nanos()))
}

/// The environment's kept names, when its packages are as they were.
pub(super) fn names_of(env: &FrameworkEnv) -> Option<Names> {
    let now = fingerprint(env)?;
    let mut kept: BTreeMap<String, Names> = load("model-names.json");
    kept.remove(&env.name).filter(|n| n.fingerprint == now)
}

/// Keeps the environment's names (when its packages can be fingerprinted).
pub(super) fn keep_names(env: &FrameworkEnv, names: &Names) {
    let Some(now) = fingerprint(env) else {
        return;
    };
    let mut kept: BTreeMap<String, Names> = load("model-names.json");
    kept.insert(
        env.name.clone(),
        Names {
            fingerprint: now,
            ..names.clone()
        },
    );
    // Not kept costs the next search a worker's start, nothing else.
    let _ = save("model-names.json", &kept);
}

//! Finding a model among thousands, as the wizard and `trainbench models
//! --search` do: the catalogue's own models first, then the installed
//! libraries' (timm and transformers of the PyTorch environment,
//! keras.applications of the TensorFlow one), narrowed by family, size and
//! whether a CPU trains it.
//!
//! Families come with the names, asked of each library environment's worker
//! once and kept while its packages stay as they were (`cache`): a search is
//! then a filter, with no worker started. Sizes are parameter counts at each model's defaults,
//! counted by the worker on request (`count`: on PyTorch's meta device, so
//! nothing is allocated) and kept per environment in `model-sizes.json` of
//! the studio's cache folder (`$XDG_CACHE_HOME/trainbench`, else
//! `~/.cache/trainbench`), so each model is counted once; a size or CPU filter
//! leaves out the names not counted yet and says how many.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use trainbench_core::Framework;
use trainbench_runner::envs::{self, library::count_library_models};

use crate::models::{catalogue, library_names};
use cache::{load_sizes, save_sizes, Sizes};

mod cache;
use crate::{AppError, AppResult};

/// A library model at or under this many parameters is listed as one a CPU
/// trains (the catalogue's own say so from their measured work).
pub const LIBRARY_CPU_PARAMS: u64 = 5_000_000;
/// The longest text searched for.
const LONGEST_QUERY: usize = 100;
/// Every library name matching (timm has about 1,400).
const EVERY_NAME: usize = 100_000;

/// Parameter-count classes of the size filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum SizeClass {
    /// Under 1 M parameters.
    Tiny,
    /// 1 M to 10 M.
    Small,
    /// 10 M to 100 M.
    Medium,
    /// 100 M to 1 B.
    Large,
    /// 1 B and over.
    Huge,
}

impl SizeClass {
    pub const ALL: [SizeClass; 5] = [
        SizeClass::Tiny,
        SizeClass::Small,
        SizeClass::Medium,
        SizeClass::Large,
        SizeClass::Huge,
    ];

    pub fn key(self) -> &'static str {
        match self {
            SizeClass::Tiny => "tiny",
            SizeClass::Small => "small",
            SizeClass::Medium => "medium",
            SizeClass::Large => "large",
            SizeClass::Huge => "huge",
        }
    }

    /// The class in words, with its bounds.
    pub fn label(self) -> &'static str {
        match self {
            SizeClass::Tiny => "under 1 M parameters",
            SizeClass::Small => "1 M to 10 M parameters",
            SizeClass::Medium => "10 M to 100 M parameters",
            SizeClass::Large => "100 M to 1 B parameters",
            SizeClass::Huge => "1 B parameters or more",
        }
    }

    pub fn parse(s: &str) -> AppResult<SizeClass> {
        SizeClass::ALL
            .into_iter()
            .find(|c| c.key() == s)
            .ok_or_else(|| AppError::bad_input("size", s, "tiny, small, medium, large or huge"))
    }

    pub fn holds(self, params: u64) -> bool {
        let (lo, hi) = match self {
            SizeClass::Tiny => (0, 1_000_000),
            SizeClass::Small => (1_000_000, 10_000_000),
            SizeClass::Medium => (10_000_000, 100_000_000),
            SizeClass::Large => (100_000_000, 1_000_000_000),
            SizeClass::Huge => (1_000_000_000, u64::MAX),
        };
        (lo..hi).contains(&params)
    }
}

/// What to look for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ModelQuery {
    /// Part of the name, family or summary (case-insensitive); library
    /// models are searched from 2 characters on.
    pub text: String,
    /// Only this family (as listed in the answer's `families`).
    pub family: Option<String>,
    pub size: Option<SizeClass>,
    /// Only models a CPU trains.
    pub cpu_only: bool,
    /// Count the sizes of the library matches not counted yet, first.
    pub count: bool,
}

/// One model found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FoundModel {
    /// What `--model` takes.
    pub name: String,
    /// `catalogue`, `timm`, `hf` or `keras`.
    pub source: String,
    pub family: String,
    /// At the model's defaults; `None`: not counted yet.
    pub params: Option<u64>,
    /// Whether a CPU trains it (catalogue: from its measured work; library:
    /// at most [`LIBRARY_CPU_PARAMS`] parameters); `None`: not counted yet.
    pub cpu: Option<bool>,
    /// Training FLOPs per sample at the default input (the catalogue's; a
    /// library model's are counted when it runs).
    pub flops_per_sample: Option<f64>,
    /// The catalogue's summary, or the framework a library model trains in.
    pub summary: String,
}

/// A family among the matches, with how many.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FamilyCount {
    pub family: String,
    pub count: u32,
}

/// The search's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FoundModels {
    /// The catalogue's matches first, then the libraries'.
    pub models: Vec<FoundModel>,
    /// Families of every match before the filters, most first.
    pub families: Vec<FamilyCount>,
    /// Library matches left out because their size is not counted yet (a
    /// size or CPU filter is on), or listed without one.
    pub not_counted: u32,
    /// Why some library names are missing or could not be counted.
    pub notes: Vec<String>,
}

/// The library a name comes from (`timm`, `hf`, `keras`).
fn library_of(name: &str) -> &str {
    name.split(':').next().unwrap_or_default()
}

/// A library environment's matches: its name (the sizes' key), how to ask
/// its worker, and the names with their families.
struct LibraryMatches {
    env: String,
    command: trainbench_runner::WorkerCommand,
    framework: Framework,
    names: Vec<String>,
    families: BTreeMap<String, String>,
}

fn library_matches(framework: Framework, text: &str) -> Result<LibraryMatches, String> {
    let env = envs::resolve(framework, None).map_err(|e| e.to_string())?;
    // Every name of the environment once, then kept until its packages
    // change; a search is then a filter here, with no worker started.
    let all = match cache::names_of(&env) {
        Some(all) => all,
        None => {
            let found = library_names(framework, "", EVERY_NAME)?;
            let all = cache::Names::from(framework, found);
            cache::keep_names(&env, &all);
            all
        }
    };
    let names = all
        .names
        .iter()
        .filter(|n| n.to_lowercase().contains(text))
        .cloned()
        .collect();
    Ok(LibraryMatches {
        command: envs::worker_command(&env),
        env: env.name,
        framework,
        names,
        families: all.families,
    })
}

/// Counts the names of `m` not in `sizes` yet; what failed goes to `notes`.
fn count_missing(m: &LibraryMatches, sizes: &mut Sizes, notes: &mut Vec<String>) {
    let known = sizes.entry(m.env.clone()).or_default();
    let missing: Vec<String> = m
        .names
        .iter()
        .filter(|n| !known.contains_key(*n))
        .cloned()
        .collect();
    if missing.is_empty() {
        return;
    }
    match count_library_models(&m.command, m.framework.as_str(), &missing) {
        Ok(counted) => {
            for c in counted {
                match (c.params, c.family, c.error) {
                    (Some(p), Some(f), _) => {
                        known.insert(c.name, (f, p));
                    }
                    (_, _, Some(e)) => notes.push(format!("{} could not be counted: {e}", c.name)),
                    _ => {}
                }
            }
        }
        Err(e) => notes.push(format!("sizes in {} not counted: {e}", m.env)),
    }
}

fn catalogue_matches(needle: &str) -> Vec<FoundModel> {
    catalogue()
        .into_iter()
        .filter(|m| {
            needle.is_empty()
                || [&m.name, &m.family, &m.summary]
                    .iter()
                    .any(|t| t.to_lowercase().contains(needle))
        })
        .map(|m| FoundModel {
            name: m.name,
            source: "catalogue".into(),
            family: m.family,
            params: Some(m.param_count),
            cpu: Some(m.cpu_friendly),
            flops_per_sample: Some(m.flops_per_sample),
            summary: m.summary,
        })
        .collect()
}

/// The models matching `q`: the catalogue's first, then the libraries'.
pub fn find(q: &ModelQuery) -> AppResult<FoundModels> {
    if q.text.chars().count() > LONGEST_QUERY {
        return Err(AppError::bad_input(
            "text",
            &q.text,
            "at most 100 characters of a model's name, family or summary",
        ));
    }
    let needle = q.text.trim().to_lowercase();
    let mut notes = Vec::new();
    let mut all = catalogue_matches(&needle);
    if needle.chars().count() >= 2 {
        let mut sizes = load_sizes();
        for framework in [Framework::Pytorch, Framework::Tensorflow] {
            let m = match library_matches(framework, &needle) {
                Ok(m) => m,
                Err(e) => {
                    notes.push(format!("{framework} library names not listed: {e}"));
                    continue;
                }
            };
            if q.count {
                count_missing(&m, &mut sizes, &mut notes);
            }
            let known = sizes.get(&m.env);
            for name in &m.names {
                let library = library_of(name);
                let params = known.and_then(|k| k.get(name)).map(|(_, p)| *p);
                all.push(FoundModel {
                    family: m
                        .families
                        .get(name)
                        .cloned()
                        .unwrap_or_else(|| "other".into()),
                    source: library.into(),
                    cpu: params.map(|p| p <= LIBRARY_CPU_PARAMS),
                    params,
                    flops_per_sample: None,
                    summary: format!("a {library} model, trained in {framework}"),
                    name: name.clone(),
                });
            }
        }
        if q.count {
            save_sizes(&sizes)?;
        }
    }
    Ok(narrowed(all, q, notes))
}

/// The facets of every match, then the matches the filters keep.
fn narrowed(all: Vec<FoundModel>, q: &ModelQuery, notes: Vec<String>) -> FoundModels {
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for m in &all {
        *counts.entry(&m.family).or_default() += 1;
    }
    let mut families: Vec<FamilyCount> = counts
        .into_iter()
        .map(|(family, count)| FamilyCount {
            family: family.to_owned(),
            count,
        })
        .collect();
    families.sort_by(|a, b| b.count.cmp(&a.count).then(a.family.cmp(&b.family)));
    let not_counted = all
        .iter()
        .filter(|m| m.params.is_none() && q.family.as_ref().is_none_or(|f| *f == m.family))
        .count() as u32;
    let models = all
        .into_iter()
        .filter(|m| q.family.as_ref().is_none_or(|f| *f == m.family))
        .filter(|m| q.size.is_none_or(|s| m.params.is_some_and(|p| s.holds(p))))
        .filter(|m| !q.cpu_only || m.cpu == Some(true))
        .collect();
    FoundModels {
        models,
        families,
        not_counted,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_comes_first_and_filters_narrow_it() {
        let all = find(&ModelQuery::default()).expect("find");
        assert!(all.models.iter().all(|m| m.source == "catalogue"));
        assert_eq!(all.models.len(), catalogue().len());
        let tiny_cpu = find(&ModelQuery {
            size: Some(SizeClass::Tiny),
            cpu_only: true,
            ..ModelQuery::default()
        })
        .expect("find");
        assert!(!tiny_cpu.models.is_empty());
        assert!(tiny_cpu
            .models
            .iter()
            .all(|m| m.params.is_some_and(|p| p < 1_000_000) && m.cpu == Some(true)));
        let vit = find(&ModelQuery {
            family: Some("vit".into()),
            ..ModelQuery::default()
        })
        .expect("find");
        assert!(vit.models.iter().all(|m| m.family == "vit") && !vit.models.is_empty());
        assert!(all.families.iter().any(|f| f.family == "vit"));
    }

    #[test]
    fn sizes_classes_have_bounds_and_a_bad_one_is_named() {
        assert!(SizeClass::Tiny.holds(999_999) && !SizeClass::Tiny.holds(1_000_000));
        assert!(SizeClass::Huge.holds(7_000_000_000));
        let e = SizeClass::parse("big").expect_err("refused").to_string();
        assert!(
            e.contains("size") && e.contains("big") && e.contains("tiny"),
            "{e}"
        );
        let long = "x".repeat(101);
        let e = find(&ModelQuery {
            text: long,
            ..ModelQuery::default()
        })
        .expect_err("refused")
        .to_string();
        assert!(e.contains("text") && e.contains("at most 100"), "{e}");
    }
}

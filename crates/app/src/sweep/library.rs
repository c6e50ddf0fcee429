//! Library models (`timm:`, `hf:`, `keras:`) checked against the libraries installed in
//! the worker's environment before anything is queued: an unknown name is
//! refused, on the field the worker names, with the closest names, and so
//! is a data set the model cannot train on (the text corpus for an encoder).

use std::collections::BTreeMap;

use trainbench_core::models::ModelConfig;
use trainbench_runner::envs::library::{check_library_models, AskedModel};

use super::{PlannedConfig, Rejected};

/// Moves every configuration whose library model its environment refuses
/// (or cannot check) from `configs` to `rejected`. One question per
/// environment, each model asked once.
pub(super) fn refuse_unknown(configs: &mut Vec<PlannedConfig>, rejected: &mut Vec<Rejected>) {
    let mut by_program: BTreeMap<std::path::PathBuf, Vec<usize>> = BTreeMap::new();
    for (i, c) in configs.iter().enumerate() {
        if let ModelConfig::Library(_) = c.spec.spec.model_config {
            by_program
                .entry(c.worker.program.clone())
                .or_default()
                .push(i);
        }
    }
    let mut refused: BTreeMap<usize, (String, String)> = BTreeMap::new();
    for indices in by_program.values() {
        let mut models = BTreeMap::new();
        for &i in indices {
            let spec = &configs[i].spec.spec;
            if let ModelConfig::Library(l) = &spec.model_config {
                let data = spec.data.as_str();
                models
                    .entry((spec.model.clone(), data))
                    .or_insert(AskedModel { config: l, data });
            }
        }
        let names: Vec<&(String, &str)> = models.keys().collect();
        let configs_asked: Vec<AskedModel<'_>> = models.values().copied().collect();
        let first = &configs[indices[0]];
        let answers = check_library_models(&first.worker, first.framework.as_str(), &configs_asked);
        for &i in indices {
            let spec = &configs[i].spec.spec;
            let asked = (spec.model.clone(), spec.data.as_str());
            let why = match &answers {
                Ok(a) => names
                    .iter()
                    .position(|n| **n == asked)
                    .and_then(|k| a.get(k).cloned().flatten())
                    .map(|r| (r.field, r.message)),
                Err(e) => Some(("framework".to_owned(), e.to_string())),
            };
            if let Some(why) = why {
                refused.insert(i, why);
            }
        }
    }
    for (i, (field, message)) in refused.into_iter().rev() {
        let c = configs.remove(i);
        rejected.push(Rejected::combination(&c.label, &field, message));
    }
}

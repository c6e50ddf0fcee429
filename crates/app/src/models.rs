//! The model catalogue as both front ends list it: each model's size and
//! work at its default input, and whether it trains on a CPU in seconds.

use serde::Serialize;
use trainbench_core::models::{ModelConfig, CATALOG};
use trainbench_core::Framework;
use trainbench_runner::envs::{
    self,
    library::{search_library_models, LibraryNames},
};

/// One model a run can train.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ModelInfo {
    /// What `--model` takes.
    pub name: String,
    /// vit, resnet, bert, decoder or encoder.
    pub family: String,
    pub summary: String,
    /// Small enough to train in seconds on a CPU (the others need a GPU to
    /// finish in reasonable time).
    pub cpu_friendly: bool,
    /// Parameters at the default input (the classification head included).
    pub param_count: u64,
    /// Training FLOPs per sample (forward + backward), at the default input size.
    pub flops_per_sample: f64,
    /// The default input: `3×224×224 image, 1000 classes`, `512 tokens`.
    pub input: String,
}

/// What a model takes by default, in words.
fn input_of(cfg: &ModelConfig) -> String {
    match cfg {
        ModelConfig::Vit(c) => format!(
            "{}×{}×{} image, {} classes",
            c.in_channels, c.image_size, c.image_size, c.num_classes
        ),
        ModelConfig::Resnet(c) => format!(
            "{}×{}×{} image, {} classes",
            c.in_channels, c.image_size, c.image_size, c.num_classes
        ),
        ModelConfig::Bert(c) => format!("{} tokens, {} classes", c.seq_len, c.num_classes),
        ModelConfig::Decoder(c) => format!("{} tokens, next-token prediction", c.seq_len),
        ModelConfig::Encoder(c) if c.num_classes == 1 => {
            format!("{} tokens, one score (yes/no)", c.seq_len)
        }
        ModelConfig::Encoder(c) => format!("{} tokens, {} classes", c.seq_len, c.num_classes),
        ModelConfig::Library(l) => format!("{}: the library's own input", l.model),
        ModelConfig::File(f) => match (f.image_size, f.seq_len, f.num_classes) {
            (Some(s), _, Some(k)) => {
                format!("{}×{s}×{s} image, {k} classes", f.in_channels.unwrap_or(3))
            }
            (_, Some(t), Some(k)) => format!("{t} tokens, {k} classes"),
            (_, Some(t), None) => format!("{t} tokens, next-token prediction"),
            _ => "the input the run gives".to_owned(),
        },
        ModelConfig::Script(c) => format!("what {} feeds its model", c.script.short()),
    }
}

/// Every model of the catalogue, in the catalogue's order.
pub fn catalogue() -> Vec<ModelInfo> {
    CATALOG
        .iter()
        .map(|m| {
            let cfg = m.default_config();
            ModelInfo {
                name: m.name.into(),
                family: format!("{:?}", m.family).to_lowercase(),
                summary: m.summary.into(),
                cpu_friendly: m.cpu_friendly,
                param_count: cfg.param_count(),
                flops_per_sample: cfg.flops_per_sample(),
                input: input_of(&cfg),
            }
        })
        .collect()
}

/// Models whose name contains a text: the catalogue's, and the library
/// names (`timm:…`, `hf:…` of the PyTorch environment, `keras:…` of the
/// TensorFlow one).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ModelSearch {
    pub builtin: Vec<ModelInfo>,
    /// At most 50.
    pub timm: Vec<String>,
    /// At most 50.
    pub hf: Vec<String>,
    /// At most 50.
    pub keras: Vec<String>,
    /// Why some library names are missing, when they are.
    pub libraries_note: Option<String>,
}

/// The library names of `framework`'s own environment containing `text`.
pub(crate) fn library_names(
    framework: Framework,
    text: &str,
    limit: usize,
) -> Result<LibraryNames, String> {
    let env = envs::resolve(framework, None).map_err(|e| e.to_string())?;
    if !env.ready {
        return Err(format!(
            "the {framework} environment {} is not installed",
            env.name
        ));
    }
    search_library_models(&envs::worker_command(&env), framework.as_str(), text, limit)
        .map_err(|e| e.to_string())
}

/// Catalogue models whose name contains `text` (case-insensitive), and the
/// library names of the studio's PyTorch and TensorFlow environments that do
/// (one short worker process each).
pub fn search(text: &str) -> ModelSearch {
    let needle = text.to_lowercase();
    let builtin = catalogue()
        .into_iter()
        .filter(|m| m.name.to_lowercase().contains(&needle))
        .collect();
    let mut notes = Vec::new();
    let mut names = |framework| {
        library_names(framework, text, 50).unwrap_or_else(|e| {
            notes.push(e);
            LibraryNames::default()
        })
    };
    let torch = names(Framework::Pytorch);
    let keras = names(Framework::Tensorflow).keras;
    ModelSearch {
        builtin,
        timm: torch.timm,
        hf: torch.hf,
        keras,
        libraries_note: (!notes.is_empty())
            .then(|| format!("library names not listed: {}", notes.join("; "))),
    }
}

/// A run's model file (`PATH.py:FUNCTION`): what it named, the SHA-256 of
/// the bytes it trained, and whether the store keeps a copy of them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunModelFile {
    pub reference: String,
    pub sha256: String,
    /// Bytes of the copy kept in the store; `None`: none kept (an imported
    /// run whose session carried none).
    pub kept_bytes: Option<usize>,
}

impl crate::Workspace {
    /// The model file of a run whose spec names one.
    pub fn model_file_of(
        &self,
        detail: &trainbench_core::record::RunDetail,
    ) -> crate::AppResult<Option<RunModelFile>> {
        let Some(sha) = detail.spec["model_sha256"].as_str() else {
            return Ok(None);
        };
        let kept = self.store.model_file(sha)?;
        Ok(Some(RunModelFile {
            reference: detail.spec["model"].as_str().unwrap_or_default().to_owned(),
            sha256: sha.to_owned(),
            kept_bytes: kept.map(|k| k.bytes.len()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_is_listed_with_its_size_and_input() {
        let all = catalogue();
        assert_eq!(all.len(), CATALOG.len());
        let vit = all
            .iter()
            .find(|m| m.name == "vit_base_patch16_224")
            .expect("ViT-B/16");
        assert_eq!(vit.input, "3×224×224 image, 1000 classes");
        assert!(
            (80_000_000..90_000_000).contains(&vit.param_count),
            "{vit:?}"
        );
        assert!(all.iter().any(|m| m.cpu_friendly) && all.iter().any(|m| !m.cpu_friendly));
        assert!(all
            .iter()
            .all(|m| m.flops_per_sample > 0.0 && m.param_count > 0));
    }
}

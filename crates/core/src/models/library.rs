//! Models named from the libraries people use, built by the worker from the
//! installed library rather than from this catalogue:
//!
//! - `timm:NAME`: a timm architecture (`timm.create_model(NAME, pretrained=False)`),
//!   trained on image classification; its input size and classes are timm's
//!   defaults unless the run's `image_size` / `num_classes` say otherwise.
//! - `hf:MODEL_TYPE[?key=value&…]`: a Hugging Face transformers architecture built
//!   from its configuration class with the overrides given; decoders trained on
//!   next-token prediction, encoders on sequence classification.
//! - `keras:NAME`: a `keras.applications` architecture (`weights=None`), built
//!   by the TensorFlow worker and trained on image classification.
//!
//! Only the syntax is checked here: whether the name exists is the installed
//! library's to say (the worker refuses an unknown one, with the closest names,
//! before anything trains). Parameters and FLOPs are counted by the worker on the
//! model it built.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::SpecError;

/// The library a model name comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Library {
    /// PyTorch Image Models.
    Timm,
    /// Hugging Face transformers.
    Hf,
    /// Keras's applications (TensorFlow).
    Keras,
}

impl Library {
    pub const ALL: [Library; 3] = [Library::Timm, Library::Hf, Library::Keras];

    /// The prefix a model name carries: `timm`, `hf` or `keras`.
    pub fn prefix(self) -> &'static str {
        match self {
            Library::Timm => "timm",
            Library::Hf => "hf",
            Library::Keras => "keras",
        }
    }

    /// The framework whose worker builds the library's models.
    pub fn framework(self) -> crate::framework::Framework {
        match self {
            Library::Timm | Library::Hf => crate::framework::Framework::Pytorch,
            Library::Keras => crate::framework::Framework::Tensorflow,
        }
    }
}

impl fmt::Display for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.prefix())
    }
}

/// Tokens per training sequence of an `hf:` model when the run gives no `seq_len`.
pub const DEFAULT_HF_SEQ_LEN: i64 = 128;

/// Longest name or override accepted (a guard on what travels to the worker).
const MAX_LEN: usize = 200;
const MAX_OVERRIDES: usize = 32;

/// A library model reference, parsed: the library, the architecture's name and,
/// for `hf:`, the configuration overrides (values as written: the configuration
/// class gives them their types).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LibraryRef {
    pub library: Library,
    pub name: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub overrides: BTreeMap<String, String>,
}

fn bad(value: &str, allowed: &str) -> SpecError {
    SpecError::new("model", value, allowed)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

fn is_value_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+')
}

impl LibraryRef {
    /// `Ok(None)` for a name without a library prefix (a catalogue name);
    /// otherwise the parsed reference, or an error on the field `model`.
    pub fn parse(text: &str) -> Result<Option<LibraryRef>, SpecError> {
        let Some((prefix, rest)) = text.split_once(':') else {
            return Ok(None);
        };
        let Some(library) = Library::ALL.into_iter().find(|l| l.prefix() == prefix) else {
            return Err(bad(
                text,
                "a catalogue name, timm:NAME, hf:MODEL_TYPE[?key=value&…] or keras:NAME",
            ));
        };
        if text.len() > MAX_LEN {
            return Err(bad(
                &format!("{}…", text.chars().take(40).collect::<String>()),
                &format!("a library name of at most {MAX_LEN} characters"),
            ));
        }
        let (name, query) = match rest.split_once('?') {
            Some((n, q)) => (n, Some(q)),
            None => (rest, None),
        };
        if name.is_empty() || !name.chars().all(is_name_char) {
            return Err(bad(
                text,
                &format!("{library}:NAME with a name of letters, digits, '_', '-' and '.'"),
            ));
        }
        let overrides = match (library, query) {
            (_, None) => BTreeMap::new(),
            (Library::Timm | Library::Keras, Some(_)) => return Err(bad(
                text,
                &format!("{library}:NAME without overrides (the run's image_size and num_classes set the input)"),
            )),
            (Library::Hf, Some(q)) => parse_overrides(text, q)?,
        };
        Ok(Some(LibraryRef {
            library,
            name: name.to_owned(),
            overrides,
        }))
    }
}

fn parse_overrides(text: &str, query: &str) -> Result<BTreeMap<String, String>, SpecError> {
    let shape = "hf:MODEL_TYPE?key=value&key=value (keys of letters, digits and '_'; values of letters, digits, '_', '-', '+' and '.')";
    let mut out = BTreeMap::new();
    for pair in query.split('&') {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(bad(text, shape));
        };
        let key_ok = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !key_ok || value.is_empty() || !value.chars().all(is_value_char) {
            return Err(bad(text, shape));
        }
        if out.insert(key.to_owned(), value.to_owned()).is_some() {
            return Err(bad(
                text,
                &format!("each override once ({key} is given twice)"),
            ));
        }
    }
    if out.len() > MAX_OVERRIDES {
        return Err(bad(text, &format!("at most {MAX_OVERRIDES} overrides")));
    }
    Ok(out)
}

impl fmt::Display for LibraryRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.library, self.name)?;
        for (i, (k, v)) in self.overrides.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { '?' } else { '&' })?;
        }
        Ok(())
    }
}

/// A library model as the worker is to build it: the reference and the run's
/// input options (`None`: the library's default).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LibraryConfig {
    #[serde(flatten)]
    pub model: LibraryRef,
    /// timm only: the square input's side (timm's default input size if `None`).
    pub image_size: Option<i64>,
    /// Classes of the classifier (timm's default, or 2 for an `hf:` encoder, if `None`).
    pub num_classes: Option<i64>,
    /// `hf:` only: tokens per training sequence.
    pub seq_len: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> LibraryRef {
        LibraryRef::parse(text).unwrap().unwrap()
    }

    #[test]
    fn catalogue_names_are_not_library_names() {
        assert_eq!(LibraryRef::parse("vit_mini_patch4_32").unwrap(), None);
    }

    #[test]
    fn timm_and_hf_names_parse_into_their_parts() {
        let t = parsed("timm:convnext_atto");
        assert_eq!(
            (t.library, t.name.as_str()),
            (Library::Timm, "convnext_atto")
        );
        assert!(t.overrides.is_empty());
        let h = parsed("hf:llama?hidden_size=64&num_hidden_layers=2&rms_norm_eps=1e-6");
        assert_eq!((h.library, h.name.as_str()), (Library::Hf, "llama"));
        assert_eq!(h.overrides["hidden_size"], "64");
        assert_eq!(h.overrides["rms_norm_eps"], "1e-6");
        assert_eq!(
            h.to_string(),
            "hf:llama?hidden_size=64&num_hidden_layers=2&rms_norm_eps=1e-6"
        );
        assert_eq!(parsed("hf:bert").to_string(), "hf:bert");
        let k = parsed("keras:MobileNetV3Small");
        assert_eq!(
            (k.library, k.name.as_str()),
            (Library::Keras, "MobileNetV3Small")
        );
    }

    #[test]
    fn malformed_names_are_refused_on_the_field_model() {
        for text in [
            "timm:",
            "hf:",
            "timm:conv next",
            "timm:a/b",
            "timm:convnext_atto?x=1",
            "hf:llama?",
            "hf:llama?hidden_size",
            "hf:llama?hidden_size=",
            "hf:llama?=4",
            "hf:llama?1x=4",
            "hf:llama?a=1&a=2",
            "hf:llama?a=$(x)",
            "hf:llama?a=1;b=2",
            "keras:ResNet50?x=1",
            "keras:",
            "torchvision:resnet50",
        ] {
            let e = LibraryRef::parse(text).unwrap_err();
            assert_eq!(e.field, "model", "{text}");
            assert!(e.to_string().starts_with("model = "), "{e}");
        }
        let long = format!("timm:{}", "a".repeat(300));
        assert_eq!(LibraryRef::parse(&long).unwrap_err().field, "model");
    }
}

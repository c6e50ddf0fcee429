//! A model from a person's own Python file: `--model PATH.py:FUNCTION`.
//!
//! FUNCTION (no arguments) returns the model; the run's input shape says what
//! to feed it: images (`in_channels` × `image_size` × `image_size`, each
//! framework's own layout) with `num_classes` classes, or token sequences
//! (`seq_len` tokens below `vocab_size`) — classified into `num_classes` when
//! given, else trained on next-token prediction.
//!
//! The file is code: it runs only when a person asks for a run now and names
//! the file. The application reads it when it plans the run and records its
//! SHA-256 here; the worker hashes the bytes it is about to execute and refuses
//! them when they differ, so what ran is what was checked. Only the syntax is
//! checked in this crate; what FUNCTION returns is the worker's to check.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::SpecError;

/// Longest path accepted (Linux's `PATH_MAX`).
const MAX_PATH: usize = 4096;
/// Longest function name accepted.
const MAX_FUNCTION: usize = 100;
/// The largest model file the studio reads, hashes and keeps a copy of.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Where a file model lives: an absolute path to a `.py` file and the
/// function in it that returns the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileRef {
    pub path: String,
    pub function: String,
}

fn bad(value: &str, allowed: &str) -> SpecError {
    SpecError::new("model", value, allowed)
}

/// Whether `s` is a Python identifier of ASCII letters, digits and `_`.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl FileRef {
    /// Whether `text` names a file model (`….py:FUNCTION`), before any check.
    pub fn looks_like(text: &str) -> bool {
        text.rsplit_once(':')
            .is_some_and(|(path, _)| path.ends_with(".py"))
    }

    /// `Ok(None)` for a name that is not a file model; otherwise the parsed
    /// reference (the path may be relative: [`FileRef::require_absolute`]).
    pub fn parse(text: &str) -> Result<Option<FileRef>, SpecError> {
        if !Self::looks_like(text) {
            return Ok(None);
        }
        let Some((path, function)) = text.rsplit_once(':') else {
            return Ok(None);
        };
        check_python_path(text, path, "", "PATH.py:FUNCTION")?;
        if function.len() > MAX_FUNCTION || !is_identifier(function) {
            return Err(bad(
                text,
                "PATH.py:FUNCTION where FUNCTION is a Python function's name (letters, digits and '_', not starting with a digit)",
            ));
        }
        Ok(Some(FileRef {
            path: path.to_owned(),
            function: function.to_owned(),
        }))
    }

    /// Refuses a relative path (a stored run names the file it read).
    pub fn require_absolute(&self) -> Result<(), SpecError> {
        require_absolute(&self.path, &self.to_string(), "PATH.py:FUNCTION")
    }

    /// The file's name without its folder (`mymodel.py:build`), for labels.
    pub fn short(&self) -> String {
        let name = self.path.rsplit('/').next().unwrap_or(&self.path);
        format!("{name}:{}", self.function)
    }
}

impl fmt::Display for FileRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path, self.function)
    }
}

/// Checks the path of a person's Python file as `shape` names it
/// (`PATH.py:FUNCTION`, `script:PATH.py`): at most 4,096 characters, no
/// control characters, a `.py` file with a name.
pub(crate) fn check_python_path(
    text: &str,
    path: &str,
    prefix: &str,
    shape: &str,
) -> Result<(), SpecError> {
    if path.len() > MAX_PATH || path.chars().any(char::is_control) {
        let shown: String = path.chars().filter(|c| !c.is_control()).take(60).collect();
        return Err(bad(
            &format!("{prefix}{shown}…"),
            &format!(
                "{shape} with a path of at most {MAX_PATH} characters and no control characters"
            ),
        ));
    }
    if !path.ends_with(".py") || path == ".py" || path.ends_with("/.py") {
        return Err(bad(text, &format!("{shape} naming a Python file")));
    }
    Ok(())
}

/// Refuses a relative `path` (of the reference `shown`, written as `shape`):
/// a stored run names the file it read.
pub(crate) fn require_absolute(path: &str, shown: &str, shape: &str) -> Result<(), SpecError> {
    if path.starts_with('/') {
        Ok(())
    } else {
        Err(bad(
            shown,
            &format!("{shape} with an absolute path (the studio makes a path you type absolute)"),
        ))
    }
}

/// Checks a SHA-256 as the studio writes it (64 lowercase hex digits).
pub fn check_sha256(value: Option<&str>) -> Result<String, SpecError> {
    match value {
        None => Err(SpecError::new(
            "model_sha256",
            "(missing)",
            "the model file's SHA-256 (the studio computes it when it reads the file you name)",
        )),
        Some(s) if s.len() == 64 && s.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')) => {
            Ok(s.to_owned())
        }
        Some(s) => Err(SpecError::new(
            "model_sha256",
            s.chars().take(80).collect::<String>(),
            "64 lowercase hexadecimal digits",
        )),
    }
}

/// A run's input shape as typed: `CxSxS` (images, channels × height × width
/// with height = width) or `tokens:N` (sequences of N token ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputShape {
    Image { channels: i64, size: i64 },
    Tokens { seq_len: i64 },
}

const SHAPE_ALLOWED: &str = "CxSxS (channels × height × width, square: 3x224x224) or tokens:N (N token ids per sequence, with vocab_size)";

impl InputShape {
    pub fn parse(text: &str) -> Result<InputShape, SpecError> {
        let bad = || SpecError::new("input_shape", text, SHAPE_ALLOWED);
        let whole = |s: &str, max: i64| {
            s.parse::<i64>()
                .ok()
                .filter(|&v| (1..=max).contains(&v))
                .ok_or_else(bad)
        };
        if let Some(n) = text.strip_prefix("tokens:") {
            return Ok(InputShape::Tokens {
                seq_len: whole(n, 1 << 20)?,
            });
        }
        let parts: Vec<&str> = text.split(['x', '×']).collect();
        let [c, h, w] = parts.as_slice() else {
            return Err(bad());
        };
        let (channels, h, w) = (whole(c, 64)?, whole(h, 8192)?, whole(w, 8192)?);
        if h != w {
            return Err(SpecError::new(
                "input_shape",
                text,
                "square images (height = width), as every image model of the studio takes",
            ));
        }
        Ok(InputShape::Image { channels, size: h })
    }
}

/// A file model's configuration, as the worker receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileConfig {
    #[serde(flatten)]
    pub model: FileRef,
    /// The SHA-256 of the bytes the studio read when it planned the run.
    pub sha256: String,
    /// Images: channels and side.
    pub in_channels: Option<i64>,
    pub image_size: Option<i64>,
    /// Tokens: per sequence, and the ids' range.
    pub seq_len: Option<i64>,
    pub vocab_size: Option<i64>,
    /// Classes of a classifier; `None` for a token model trained on next tokens.
    pub num_classes: Option<i64>,
}

impl FileConfig {
    /// Whether the model takes images.
    pub fn is_image(&self) -> bool {
        self.image_size.is_some()
    }
}

/// A file model captured with TorchScript for the libtorch worker: the
/// studio runs the capture in its PyTorch environment when the run starts
/// and hands the worker this record (a JSON file beside the module).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TorchScriptCapture {
    /// The saved module (`torch.jit.save`).
    pub path: String,
    /// `torch.jit.script` or `torch.jit.trace`.
    pub method: String,
    /// Trainable parameters of the PyTorch module the file's function
    /// returned (shared ones once); the worker's count from the loaded
    /// module must equal it.
    pub param_count: u64,
    /// Training FLOPs per sample counted on the PyTorch module, and how;
    /// `None` where they could not be counted.
    pub flops_per_sample: Option<f64>,
    pub flops_method: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_references_parse_and_bad_ones_name_the_field() {
        assert_eq!(FileRef::parse("resnet_mini").unwrap(), None);
        assert_eq!(FileRef::parse("timm:resnet18").unwrap(), None);
        let r = FileRef::parse("/home/a/my model.py:build_v2")
            .unwrap()
            .unwrap();
        assert_eq!(r.path, "/home/a/my model.py");
        assert_eq!(r.function, "build_v2");
        assert_eq!(r.short(), "my model.py:build_v2");
        assert!(r.require_absolute().is_ok());
        let rel = FileRef::parse("models/m.py:make").unwrap().unwrap();
        assert_eq!(rel.require_absolute().unwrap_err().field, "model");
        for bad in [
            "/a/m.py:2fast",
            "/a/m.py:",
            "/a/m.py:a.b",
            "/a/m.py:x;rm",
            ".py:f",
        ] {
            let e = FileRef::parse(bad).unwrap_err();
            assert_eq!(e.field, "model", "{bad}");
        }
        let e = FileRef::parse("/a/b\nc.py:f").unwrap_err();
        assert!(!e.to_string().contains('\n'), "{e}");
    }

    #[test]
    fn input_shapes_parse_and_bad_ones_say_what_is_allowed() {
        assert_eq!(
            InputShape::parse("3x64x64").unwrap(),
            InputShape::Image {
                channels: 3,
                size: 64
            }
        );
        assert_eq!(
            InputShape::parse("tokens:512").unwrap(),
            InputShape::Tokens { seq_len: 512 }
        );
        for bad in [
            "3x64", "0x8x8", "3x64x32", "tokens:0", "tokens:x", "64", "3x8x8x8",
        ] {
            let e = InputShape::parse(bad).unwrap_err();
            assert_eq!(e.field, "input_shape", "{bad}");
        }
        assert!(InputShape::parse("3x64x32")
            .unwrap_err()
            .to_string()
            .contains("square"));
    }

    #[test]
    fn a_sha256_is_64_lowercase_hex_digits() {
        let good = "a".repeat(64);
        assert_eq!(check_sha256(Some(&good)).unwrap(), good);
        assert_eq!(check_sha256(None).unwrap_err().field, "model_sha256");
        assert!(check_sha256(Some(&"A".repeat(64))).is_err());
        assert!(check_sha256(Some("abc")).is_err());
    }
}

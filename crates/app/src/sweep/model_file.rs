//! Models from a person's own file (`PATH.py:FUNCTION`), read when a sweep is
//! planned: the path made absolute, the file read (a bounded, regular file)
//! and hashed. The worker refuses bytes with another SHA-256, so what trains
//! is what was read here; the store keeps a copy of those bytes beside the
//! runs ([`ModelFiles::keep`]).
//!
//! Nothing here runs the file. It runs only in a worker of a run planned now
//! from a path the person gave — never from a stored run or an imported
//! session, which carry the reference and the hash, not a request.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use trainbench_core::models::file::MAX_FILE_BYTES;
use trainbench_core::models::{FileRef, InputShape};
use trainbench_core::spec::raw::RawSpec;

use super::{Rejected, SweepRequest};

/// A model file as read: the bytes, and the reference the runs store.
#[derive(Debug, Clone)]
pub struct ReadModelFile {
    /// `ABSOLUTE_PATH.py:FUNCTION`.
    pub model: String,
    pub sha256: String,
    pub bytes: Vec<u8>,
}

/// The model files of one request, by the name the request gave.
#[derive(Debug, Clone, Default)]
pub struct ModelFiles {
    by_given: BTreeMap<String, ReadModelFile>,
}

/// Lowercase hexadecimal SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn absolute(path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| p.to_path_buf(), |d| d.join(p))
    }
}

/// A person's Python file named `given` at `path` (made absolute): a
/// bounded, regular UTF-8 file (`what` says what it should hold); its
/// absolute path and bytes.
pub(super) fn read_python(
    given: &str,
    path: &str,
    what: &str,
) -> Result<(PathBuf, Vec<u8>), Rejected> {
    let path = absolute(path);
    let bytes = trainbench_files::read_bounded("model", &path, what, MAX_FILE_BYTES)
        .map_err(|e| Rejected::shared("model", e.to_string()))?;
    if std::str::from_utf8(&bytes).is_err() {
        return Err(Rejected::shared(
            "model",
            format!(
                "model = {given} is not allowed: expected a Python file in UTF-8 ({} is not text)",
                path.display()
            ),
        ));
    }
    Ok((path, bytes))
}

/// Reads one model file named `given` (already parsed as `r`).
pub(super) fn read(given: &str, r: &FileRef) -> Result<ReadModelFile, Rejected> {
    let (path, bytes) = read_python(
        given,
        &r.path,
        "a Python file defining the model's function",
    )?;
    Ok(ReadModelFile {
        model: format!("{}:{}", path.display(), r.function),
        sha256: sha256_hex(&bytes),
        bytes,
    })
}

impl ModelFiles {
    /// Reads every file model the request names, on this machine (for a
    /// remote host too: the bytes read here are sent with the job).
    pub fn read(req: &SweepRequest, on_host: Option<&str>, rejected: &mut Vec<Rejected>) -> Self {
        let mut files = ModelFiles::default();
        for given in &req.model {
            let r = match FileRef::parse(given) {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(e) => {
                    rejected.push(Rejected::shared("model", e.to_string()));
                    continue;
                }
            };
            // On a host the file travels with the job to the node it starts
            // on; the other nodes of a run would not have it.
            if let (Some(host), Some(n)) = (on_host, req.nodes.filter(|&n| n > 1)) {
                rejected.push(Rejected::shared(
                    "nodes",
                    format!(
                        "nodes = {n} is not allowed with the file model {given} on host {host}: expected 1 (the file is sent to the node the job starts on)"
                    ),
                ));
                continue;
            }
            match read(given, &r) {
                Ok(f) => {
                    files.by_given.insert(given.clone(), f);
                }
                Err(e) => rejected.push(e),
            }
        }
        files
    }

    /// One file read, under the reference it was given as.
    pub(super) fn one(given: &str, file: ReadModelFile) -> Self {
        ModelFiles {
            by_given: BTreeMap::from([(given.to_owned(), file)]),
        }
    }

    /// Sets a combination's model to the file read and its SHA-256.
    pub fn apply(&self, raw: &mut RawSpec) {
        if let Some(f) = self.by_given.get(&raw.model) {
            raw.model.clone_from(&f.model);
            raw.model_sha256 = Some(f.sha256.clone());
        }
    }

    /// Adds a file read elsewhere (a training script), under the name given.
    pub(super) fn insert(&mut self, given: &str, file: ReadModelFile) {
        self.by_given.insert(given.to_owned(), file);
    }

    /// The files read, each once.
    pub fn read_files(&self) -> impl Iterator<Item = &ReadModelFile> {
        self.by_given.values()
    }
}

/// The request's `input_shape` (`CxSxS` or `tokens:N`) set on a raw spec's
/// `in_channels` / `image_size` / `seq_len`; given beside those, refused.
pub fn apply_input_shape(req: &SweepRequest, rejected: &mut Vec<Rejected>) -> Option<InputShape> {
    let text = req.input_shape.as_deref()?;
    match InputShape::parse(text) {
        Ok(shape) => {
            let twice = match shape {
                InputShape::Image { .. } => req.image_size.map(|_| "image_size"),
                InputShape::Tokens { .. } => req.seq_len.map(|_| "seq_len"),
            };
            if let Some(field) = twice {
                rejected.push(Rejected::shared(
                    field,
                    format!(
                        "{field} is not allowed with input_shape = {text}: expected one of the two"
                    ),
                ));
                return None;
            }
            Some(shape)
        }
        Err(e) => {
            rejected.push(Rejected::shared("input_shape", e.to_string()));
            None
        }
    }
}

/// Sets the input shape on a raw spec.
pub fn set_input(raw: &mut RawSpec, shape: Option<InputShape>, vocab_size: Option<i64>) {
    match shape {
        Some(InputShape::Image { channels, size }) => {
            raw.in_channels = Some(channels);
            raw.image_size = Some(size);
        }
        Some(InputShape::Tokens { seq_len }) => raw.seq_len = Some(seq_len),
        None => {}
    }
    if vocab_size.is_some() {
        raw.vocab_size = vocab_size;
    }
}

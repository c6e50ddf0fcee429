//! A framework's releases as the package registry lists them: PyPI's simple
//! index in its JSON form (PEP 691, the `versions` field), asked with curl.
//! A release counts when every package its environment needs was published
//! at it (JAX: `jax` and `jaxlib`; a `jax` without its `jaxlib` cannot be
//! installed), it is a final release (`0.7.2`, not `0.7.2rc1` or
//! `0.9.0.1`), and the studio supports it ([`versions::Supported`]).
//!
//! `TRAINBENCH_PYPI_SIMPLE` names another index (a mirror) in place of
//! `https://pypi.org/simple`.

use std::collections::BTreeSet;
use std::io::Read;
use std::process::{Command, Stdio};

use trainbench_core::versions::{Release, Supported};
use trainbench_core::Framework;

use super::EnvError;

/// The index asked unless `TRAINBENCH_PYPI_SIMPLE` names another.
pub const PYPI_SIMPLE: &str = "https://pypi.org/simple";

/// The most of an answer read: PyPI's JSON for `jaxlib` is a few MB.
const MAX_ANSWER: u64 = 64 << 20;

/// The packages that must all have been published at a release.
pub fn packages(framework: Framework) -> &'static [&'static str] {
    match framework {
        Framework::Jax => &["jax", "jaxlib"],
        Framework::Tensorflow => &["tensorflow-cpu"],
        // The libtorch worker's libtorch is the torch wheel's (it has no
        // releases of its own to choose: `releases` refuses it). No arm for
        // "any other": a new framework must say its packages here.
        Framework::Pytorch | Framework::Tch => &["torch"],
    }
}

/// The supported final releases of `framework` on the index, oldest first.
pub fn releases(framework: Framework) -> Result<Vec<Release>, EnvError> {
    let supported = Supported::of(framework).ok_or_else(|| EnvError::Bad {
        field: "framework",
        value: framework.to_string(),
        allowed: "pytorch, tensorflow or jax (a Python framework: the libtorch worker has no releases to choose)".into(),
    })?;
    let index = std::env::var("TRAINBENCH_PYPI_SIMPLE")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| PYPI_SIMPLE.to_owned());
    let mut common: Option<BTreeSet<Release>> = None;
    for package in packages(framework) {
        let answer = ask(&index, package)?;
        let found: BTreeSet<Release> = published(&answer)
            .map_err(|why| EnvError::Io(format!("{index}/{package}/: {why}")))?
            .into_iter()
            .filter(|r| supported.contains(*r))
            .collect();
        common = Some(match common {
            None => found,
            Some(c) => c.intersection(&found).copied().collect(),
        });
    }
    Ok(common.unwrap_or_default().into_iter().collect())
}

/// The final releases in an index answer (`{"versions": ["0.7.2", …]}`).
pub fn published(answer: &str) -> Result<Vec<Release>, String> {
    let v: serde_json::Value =
        serde_json::from_str(answer).map_err(|e| format!("not the index's JSON answer: {e}"))?;
    let versions = v["versions"]
        .as_array()
        .ok_or("the answer has no `versions` list (an index without PEP 700)")?;
    let mut out: Vec<Release> = versions
        .iter()
        .filter_map(|s| s.as_str())
        .filter(|s| s.split('.').count() == 3)
        .filter_map(Release::parse)
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

/// The index's JSON page for `package`, through curl (30 s at most).
fn ask(index: &str, package: &str) -> Result<String, EnvError> {
    ask_at_most(index, package, MAX_ANSWER)
}

/// [`ask`] with the largest answer taken (`max` bytes): a larger one is
/// said to be too large, and curl is stopped.
fn ask_at_most(index: &str, package: &str, max: u64) -> Result<String, EnvError> {
    let url = format!("{}/{package}/", index.trim_end_matches('/'));
    let failed = |why: String| {
        EnvError::Io(format!(
            "cannot list the releases of {package} at {url}: {why} (the registry is needed to list releases; name installed ones with `trainbench env list`)"
        ))
    };
    let mut child = Command::new("curl")
        .args(["-sSfL", "--max-time", "30", "-H"])
        .arg("Accept: application/vnd.pypi.simple.v1+json")
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("curl did not start: {e}")))?;
    let mut body = Vec::new();
    if let Some(out) = child.stdout.take() {
        out.take(max.saturating_add(1))
            .read_to_end(&mut body)
            .map_err(|e| failed(e.to_string()))?;
    }
    if body.len() as u64 > max {
        let _ = child.kill();
        let _ = child.wait();
        return Err(failed(format!(
            "the answer is too large (over {} MiB; a release list is far smaller)",
            max.div_ceil(1 << 20)
        )));
    }
    let mut err = String::new();
    if let Some(e) = child.stderr.take() {
        let _ = e.take(4096).read_to_string(&mut err);
    }
    let status = child.wait().map_err(|e| failed(e.to_string()))?;
    if !status.success() {
        return Err(failed(format!("curl: {}", err.trim())));
    }
    String::from_utf8(body).map_err(|_| failed("the answer is not text".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_final_three_part_releases_are_taken() {
        let answer = r#"{"meta": {"api-version": "1.1"}, "versions": ["0.4.30", "0.7.2", "0.7.2rc1", "0.9.0.1", "0.10", "0.6.0", "x"]}"#;
        assert_eq!(
            published(answer).unwrap(),
            vec![
                Release::new(0, 4, 30),
                Release::new(0, 6, 0),
                Release::new(0, 7, 2)
            ]
        );
        assert!(published(r#"{"files": []}"#)
            .unwrap_err()
            .contains("versions"));
        assert!(published("<html>").is_err());
    }

    #[test]
    fn an_answer_over_the_cap_is_said_to_be_too_large() {
        // A real HTTP server (Python's) whose page for the package is 3 KiB,
        // asked with a cap of 1 KiB.
        let dir = std::env::temp_dir().join(format!("tb-pypi-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("jax")).unwrap();
        std::fs::write(dir.join("jax").join("index.html"), "x".repeat(3 << 10)).unwrap();
        let mut server = Command::new("python3")
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(server.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let port = line
            .split_whitespace()
            .nth(5)
            .unwrap_or_default()
            .to_owned();
        let err = ask_at_most(&format!("http://127.0.0.1:{port}"), "jax", 1 << 10);
        let _ = server.kill();
        let _ = server.wait();
        let _ = std::fs::remove_dir_all(&dir);
        let text = err.unwrap_err().to_string();
        assert!(text.contains("the answer is too large"), "{line}: {text}");
    }

    #[test]
    fn an_unreachable_index_is_said_plainly() {
        // Nothing listens on port 9 of this machine.
        let err = ask("http://127.0.0.1:9/simple", "jax").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("cannot list the releases of jax at http://127.0.0.1:9/simple/jax/"),
            "{text}"
        );
    }
}

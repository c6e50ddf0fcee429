//! `trainbench bisect` over real JAX releases from PyPI (installed on
//! demand with uv into a scratch studio home), where the answer is known:
//! the test plants a slowdown in every release from 0.7.0 on (a
//! `sitecustomize.py` on `PYTHONPATH` that makes `jax.block_until_ready`
//! sleep 0.25 s), so the bisection between 0.6.2 and 0.7.1 must measure
//! the release between them and name 0.7.0, with each side's interval,
//! stored as a sweep and shown in the PDF. Three releases are the fewest with
//! one to bisect; how few steps a longer range takes is the pure search's
//! test (`crates/core/src/bisect.rs`). Bad input is refused naming the field.
#![allow(clippy::unwrap_used, reason = "tests")]

mod common;

use common::{in_home, output_json, pdf_text, text, Scratch};

/// Slower from JAX 0.7.0 on: what the bisection is to find.
const PLANTED: &str = r#"# Planted by the bisection test: a known regression from JAX 0.7.0 on.
import importlib.metadata
import time

try:
    _v = tuple(int(x) for x in importlib.metadata.version("jax").split(".")[:3])
except Exception:
    _v = None
if _v is not None and _v >= (0, 7, 0):
    import jax

    _wait = jax.block_until_ready

    def _slower(x):
        time.sleep(0.05)
        return _wait(x)

    jax.block_until_ready = _slower
"#;

#[test]
fn bad_bisections_are_refused_naming_the_field() {
    let scratch = Scratch::new("bisect-refused");
    for (args, field) in [
        (
            vec!["--framework", "tch", "--good", "0.6.1", "--bad", "0.7.1"],
            "framework",
        ),
        (
            vec!["--framework", "jax", "--good", "0.7.1", "--bad", "0.6.1"],
            "bad",
        ),
        (
            vec!["--framework", "jax", "--good", "0.4.30", "--bad", "0.7.1"],
            "good",
        ),
        (
            vec!["--framework", "jax", "--good", "0.6", "--bad", "0.7.1"],
            "good",
        ),
        (
            vec![
                "--framework",
                "jax",
                "--good",
                "0.6.1",
                "--bad",
                "0.7.1",
                "--metric",
                "speed",
            ],
            "metric",
        ),
        (
            vec![
                "--framework",
                "jax",
                "--good",
                "0.6.1",
                "--bad",
                "0.7.1",
                "--repeats",
                "1",
            ],
            "repeats",
        ),
    ] {
        let mut bisect = in_home(&scratch.0);
        // Only a release the registry does not list needs the registry: every
        // other refusal is made before it is asked (here, with no registry).
        if args[3] != "0.4.30" {
            bisect.env("TRAINBENCH_PYPI_SIMPLE", "http://127.0.0.1:9/simple");
        }
        let (out, v) = output_json(bisect.arg("bisect").args(&args).arg("--json"));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert_eq!(v["error"]["field"], field, "{args:?}: {v}");
    }
    assert!(
        !scratch.0.join("home/envs/versions").exists(),
        "nothing installed"
    );
}

#[test]
fn a_planted_regression_is_bisected_across_real_jax_releases() {
    let scratch = Scratch::new("bisect-jax");
    let plant = scratch.0.join("plant");
    std::fs::create_dir_all(&plant).unwrap();
    std::fs::write(plant.join("sitecustomize.py"), PLANTED).unwrap();
    let pdf = scratch.0.join("bisect.pdf");
    let (out, v) = output_json(
        in_home(&scratch.0)
            .env("PYTHONPATH", &plant)
            .args([
                "bisect",
                "--framework",
                "jax",
                "--good",
                "0.6.2",
                "--bad",
                "0.7.1",
                "--model",
                "vit_mini_patch4_32",
                "--steps",
                "8",
                "--batch-size",
                "4",
                "--window-steps",
                "2",
                // Two runs at each release, the fewest: the planted change is
                // large; a noisier release gets more (the spread decides).
                "--repeats",
                "2",
                "--json",
                "--pdf",
            ])
            .arg(&pdf),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let o = &v["outcome"];
    assert_eq!(o["first_changed"], "0.7.0", "{v}");
    assert_eq!(o["last_same"], "0.6.2", "{v}");
    assert!(o["ratio"].as_f64().unwrap() < 0.9, "{o}");
    assert!(o["ratio_ci95"]["high"].as_f64().unwrap() < 1.0, "{o}");
    // Three real releases walked, each installed here and measured at least
    // twice, with its interval.
    let evidence = o["evidence"].as_array().unwrap();
    let walked: Vec<&str> = evidence
        .iter()
        .map(|e| e["release"].as_str().unwrap())
        .collect();
    assert_eq!(walked, ["0.6.2", "0.7.0", "0.7.1"], "{o}");
    for e in evidence {
        assert!(e["values"].as_array().unwrap().len() >= 2, "{e}");
        assert!(e["ci95"]["low"].as_f64().is_some(), "{e}");
    }
    let installed = v["installed"].as_array().unwrap();
    assert_eq!(installed.len(), 3, "{v}");
    for i in installed {
        assert!(i["bytes"].as_u64().unwrap() > 10 << 20, "{i}");
        assert!(i["seconds"].as_f64().unwrap() > 0.0, "{i}");
    }
    // Each run trained in its own release.
    let ids = v["run_ids"].as_array().unwrap();
    assert!(ids.len() >= 6, "{v}");
    let (_, shown) = output_json(in_home(&scratch.0).args(["show", &ids[0].to_string(), "--json"]));
    assert_eq!(shown["hello"]["framework_version"], "0.6.2", "{shown}");
    // The report says what was found.
    let said = pdf_text(&pdf);
    assert!(said.contains("Bisection of jax 0.6.2 → 0.7.1"), "{said}");
    assert!(said.contains("first changed"), "{said}");
}

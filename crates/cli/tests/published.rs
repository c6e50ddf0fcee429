//! The published record: `trainbench published` lists the shipped results
//! with their implied MFU and verdicts; a stored run is placed beside them in
//! `show` and in every PDF report.
#![allow(clippy::unwrap_used, reason = "tests")]

mod common;

use std::process::Command;

use common::{output_json, text, trainbench, Scratch};

#[test]
fn published_results_are_listed_with_their_implied_mfu_and_verdicts() {
    let scratch = Scratch::new("published");
    let (out, v) = output_json(trainbench(&scratch.0).args(["published", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    let rows = v["published"].as_array().unwrap();
    assert!(rows.len() >= 10, "{}", rows.len());
    for r in rows {
        assert!(r["source"].as_str().unwrap().starts_with("https://"), "{r}");
        assert!(!r["implied"].as_array().unwrap().is_empty(), "{r}");
    }
    let claim = rows
        .iter()
        .find(|r| r["id"] == "nanogpt-pr464-104pct-mfu")
        .unwrap();
    assert_eq!(claim["plausibility"]["verdict"], "impossible", "{claim}");
    let out = trainbench(&scratch.0)
        .args(["published", "llmc-gpt2-124m-8xh100"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("38.3 % by 6N + 6·L·T·d") && said.contains("41.0 % by 6N + 12·L·T·d"),
        "{said}"
    );
    let out = trainbench(&scratch.0)
        .args(["published", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("id = nope is not allowed"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_cpu_run_is_shown_beside_the_record_in_show_and_the_pdf() {
    let scratch = Scratch::new("published-run");
    let (out, v) = output_json(trainbench(&scratch.0).args([
        "run",
        "--framework",
        "tch",
        "--model",
        "resnet_mini,vit_mini_patch4_32",
        "--batch-size",
        "8",
        "--steps",
        "8",
        "--window-steps",
        "2",
        "--json",
    ]));
    assert!(out.status.success(), "{}", text(&out));
    let ids: Vec<String> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].to_string())
        .collect();
    let (out, shown) = output_json(trainbench(&scratch.0).args(["show", &ids[0], "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    let record = shown["vs_record"].as_array().unwrap();
    assert!(!record.is_empty(), "{shown}");
    let first = &record[0];
    assert!(first["fraction"].as_f64().unwrap() > 0.0, "{first}");
    let differs: Vec<&str> = first["differs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert!(
        differs
            .iter()
            .any(|d| d.starts_with("hardware (a CPU against")),
        "{differs:?}"
    );
    assert!(
        differs
            .iter()
            .any(|d| d.starts_with("model (resnet_mini against ResNet-50")),
        "{differs:?}"
    );
    let out = trainbench(&scratch.0)
        .args(["show", &ids[0]])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("vs the record:"),
        "{}",
        text(&out)
    );

    let pdf = scratch.0.join("r.pdf");
    let out = trainbench(&scratch.0)
        .args(["export", "pdf", &ids[0], &ids[1], "-o"])
        .arg(&pdf)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let words = Command::new("pdftotext")
        .arg(&pdf)
        .arg("-")
        .output()
        .unwrap();
    let words = String::from_utf8_lossy(&words.stdout);
    assert!(words.contains("Beside the published record"), "{words}");
}

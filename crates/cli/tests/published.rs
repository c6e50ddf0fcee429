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

/// A CPU run is not set beside the published record (every published result
/// is a GPU training): `show`, `compare` and the PDF say once why, and
/// `--beside-record` places it anyway, with every difference listed.
#[test]
fn a_cpu_run_says_why_it_is_not_beside_the_record_unless_asked() {
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
    let cpu =
        "it trained on the CPU, and every published result of its model family is a GPU training";
    let (out, shown) = output_json(trainbench(&scratch.0).args(["show", &ids[0], "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(shown["vs_record"], serde_json::json!([]), "{shown}");
    assert!(
        shown["vs_record_not_placed"]
            .as_str()
            .unwrap()
            .starts_with(cpu),
        "{shown}"
    );
    let out = trainbench(&scratch.0)
        .args(["show", &ids[0]])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("vs the record:     not placed: {cpu}")),
        "{said}"
    );
    assert!(
        said.contains("(`--beside-record` places it anyway)"),
        "{said}"
    );

    // Asked for: placed, with the differences that make it say little.
    let (out, shown) =
        output_json(trainbench(&scratch.0).args(["show", &ids[0], "--beside-record", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(shown["vs_record_not_placed"], serde_json::Value::Null);
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

    // Two CPU runs compared: the reason once, no fractions.
    let out = trainbench(&scratch.0)
        .args(["compare", &ids[0], &ids[1]])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(said.matches("not placed: ").count(), 1, "{said}");
    assert!(!said.contains(&format!("#{}: ", ids[1])), "{said}");
    let out = trainbench(&scratch.0)
        .args(["compare", &ids[0], &ids[1], "--beside-record"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("vs the record") && said.contains(&format!("#{}: ", ids[1])),
        "{said}"
    );

    let pdf = scratch.0.join("r.pdf");
    let out = trainbench(&scratch.0)
        .args(["export", "pdf", &ids[0], &ids[1], "-o"])
        .arg(&pdf)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let words = Command::new("pdftotext")
        .args(["-raw"])
        .arg(&pdf)
        .arg("-")
        .output()
        .unwrap();
    let words = String::from_utf8_lossy(&words.stdout).replace('\n', " ");
    assert!(words.contains("Beside the published record"), "{words}");
    assert!(
        words.contains("Not placed: it trained on the CPU"),
        "{words}"
    );
    assert!(!words.contains("% of MXNet"), "{words}");

    the_html_report_has_the_same_sections(&scratch, &ids);
}

/// The same report as one HTML page: the same sections, and charts with
/// their figures (the real browser's checks are the end-to-end test's).
fn the_html_report_has_the_same_sections(scratch: &Scratch, ids: &[String]) {
    let page_path = scratch.0.join("r.html");
    let (out, v) = output_json(
        trainbench(&scratch.0)
            .args(["export", "html", &ids[0], &ids[1], "--json", "-o"])
            .arg(&page_path),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(v["runs"], 2, "{v}");
    let page = std::fs::read_to_string(&page_path).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..100]);
    assert!(page.contains("<h2>Beside the published record</h2>"));
    assert!(page.contains("Not placed: it trained on the CPU"));
    let breakdown = &page[page.find("data-kind=\"step_breakdown\"").unwrap_or(0)..];
    assert!(
        breakdown.contains("class=\"segment\"") && breakdown.contains("ms per sample ("),
        "the step breakdown of two real runs is drawn with its figures"
    );
}

#[test]
fn a_cpu_run_is_projected_to_other_hardware_as_a_band_labelled_projected() {
    let scratch = Scratch::new("projected-run");
    let (out, v) = output_json(trainbench(&scratch.0).args([
        "run",
        "--framework",
        "tch",
        "--model",
        "resnet_mini",
        "--batch-size",
        "8",
        "--steps",
        "8",
        "--window-steps",
        "2",
        "--json",
    ]));
    assert!(out.status.success(), "{}", text(&out));
    let ids = [v["runs"][0]["id"].to_string()];
    // Projected to an H100 (by MFU: a CPU's step says little about a GPU's)
    // and to two threads here (by the step's parts); always a band, labelled.
    let (out, p) = output_json(
        trainbench(&scratch.0).args(["project", &ids[0], "--gpu", "H100 SXM", "--json"]),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(p["label"], "projected");
    let b = &p["samples_per_s"];
    assert!(
        b["low"].as_f64().unwrap() < b["mid"].as_f64().unwrap()
            && b["mid"].as_f64().unwrap() < b["high"].as_f64().unwrap(),
        "{p}"
    );
    assert!(p["method"].as_str().unwrap().starts_with("by MFU"), "{p}");
    assert!(
        p["memory"].as_str().unwrap().starts_with("not projected"),
        "{p}"
    );
    let (out, p) =
        output_json(trainbench(&scratch.0).args(["project", &ids[0], "--threads", "2", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        p["method"]
            .as_str()
            .unwrap()
            .starts_with("by the step's parts"),
        "{p}"
    );
    let measured = p["measured_samples_per_s"].as_f64().unwrap();
    assert!(
        (p["samples_per_s"]["low"].as_f64().unwrap() - measured).abs() < 1e-6 * measured,
        "{p}"
    );
    let out = trainbench(&scratch.0)
        .args(["project", &ids[0]])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = trainbench(&scratch.0)
        .args(["project", &ids[0], "--gpu", "Z80"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("gpu = Z80 is not allowed: expected one of H100 SXM"),
        "{}",
        text(&out)
    );
    let out = trainbench(&scratch.0)
        .args(["project", &ids[0], "--gpu", "H200"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("PROJECTED, not measured") && said.contains("projected"),
        "{said}"
    );
}

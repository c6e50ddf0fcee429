//! Reports and portable sessions through the real `trainbench` binary: real
//! CPU runs in a real SQLite file, saved as a session, exported as PDF (read
//! back with poppler), CSV (read back with a CSV parser), chart images and a
//! session file imported into a second database.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

mod common;

use common::{output_json, text, Scratch, TRAINBENCH};

fn tch_worker_env(c: &mut Command) -> &mut Command {
    let w = Path::new(TRAINBENCH).with_file_name("trainbench-worker-tch");
    c.env("TRAINBENCH_WORKER_TCH", w)
}

/// `trainbench --db DIR/DB ARGS` (two databases stand for two machines).
fn run_in(dir: &Path, db: &str, args: &[&str]) -> (Output, Value) {
    let mut c = Command::new(TRAINBENCH);
    c.arg("--db")
        .arg(dir.join(db))
        .env("OMP_NUM_THREADS", "1")
        .env("TRAINBENCH_NO_NVML", "1");
    tch_worker_env(&mut c);
    output_json(c.args(args))
}

fn ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", text(o));
}

fn refused(o: &Output, field: &str) -> String {
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains(field), "the error names {field}: {err}");
    err
}

fn pdf_text(path: &Path) -> String {
    let out = Command::new("pdftotext")
        .arg(path)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils, installed by scripts/setup.sh)");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn session_save_export_import_round_trip() {
    let scratch = Scratch::new("reports");
    let dir = &scratch.0;
    let a = |args: &[&str]| run_in(dir, "a.sqlite", args);

    let (out, v) = a(&[
        "run",
        "--model",
        "resnet_mini",
        "--precision",
        "fp32,amp-bf16",
        "--steps",
        "40",
        "--batch-size",
        "8",
        "--window-steps",
        "3",
        "--price",
        "AWS p4d.24xlarge on-demand",
        "--json",
    ]);
    ok(&out);
    let ids: Vec<String> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].to_string())
        .collect();
    assert_eq!(ids.len(), 2);

    // Save, list, show.
    let (out, s) = a(&[
        "session",
        "save",
        "fp32 vs bf16",
        &ids[0],
        &ids[1],
        "--baseline",
        &ids[0],
        "--json",
    ]);
    ok(&out);
    assert_eq!(s["name"], "fp32 vs bf16");
    let (out, _) = a(&["session", "save", "fp32 vs bf16", &ids[0], &ids[1]]);
    refused(&out, "name");
    let (out, _) = a(&[
        "session",
        "save",
        "bad charts",
        &ids[0],
        &ids[1],
        "--charts",
        "pie",
    ]);
    refused(&out, "charts = pie");
    let (out, list) = a(&["session", "list", "--json"]);
    ok(&out);
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    let (out, show) = a(&["session", "show", "fp32 vs bf16", "--json"]);
    ok(&out);
    let c = &show["comparison"];
    assert_eq!(c["entries"].as_array().unwrap().len(), 2);
    assert_eq!(c["decisions"].as_array().unwrap().len(), 5);

    exports_pdf(dir);
    exports_charts(dir, &ids);
    exports_csv(dir, &ids);
    carries_the_session_to_a_second_database(dir, &show);

    // Rename, delete (asks first), delete the session.
    let (out, _) = a(&["session", "rename", "fp32 vs bf16", "precisions"]);
    ok(&out);
    let (out, _) = a(&["delete", &ids[1]]);
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("--yes"));
    let (out, _) = a(&["delete", &ids[1], "--yes"]);
    ok(&out);
    let (_, show) = a(&["session", "show", "precisions", "--json"]);
    assert_eq!(show["session"]["run_ids"].as_array().unwrap().len(), 1);
    let (out, _) = a(&["session", "delete", "precisions"]);
    ok(&out);
    let (out, _) = a(&["session", "show", "precisions"]);
    refused(&out, "session precisions does not exist");
}

/// The session's PDF has its sections; a folder that is not there is refused.
fn exports_pdf(dir: &Path) {
    let a = |args: &[&str]| run_in(dir, "a.sqlite", args);
    let pdf = dir.join("report.pdf");
    let (out, v) = a(&[
        "export",
        "pdf",
        "--session",
        "fp32 vs bf16",
        "-o",
        pdf.to_str().unwrap(),
        "--json",
    ]);
    ok(&out);
    assert_eq!(v["written"]["path"], pdf.display().to_string(), "{v}");
    assert!(v["written"]["bytes"].as_u64().unwrap() > 1000, "{v}");
    let t = pdf_text(&pdf);
    for expected in [
        "TrainBench report: fp32 vs bf16",
        "Decision matrix",
        "amp-bf16",
        "Provenance",
        "Method",
        // Synthetic data, an image model: priced for ImageNet-1k, projected,
        // and a GPU offering's price on a CPU run is flagged.
        "Epoch time and cost",
        "ImageNet-1k train",
        "(projected)",
        "price_for_another_device",
    ] {
        assert!(t.contains(expected), "{expected:?} in the PDF:\n{t}");
    }
    let (out, _) = a(&[
        "export",
        "pdf",
        "--session",
        "fp32 vs bf16",
        "-o",
        "/nonexistent/dir/r.pdf",
    ]);
    refused(&out, "output = \"/nonexistent/dir/r.pdf\"");
}

/// Charts as SVG and PNG; a chart that does not exist is refused.
fn exports_charts(dir: &Path, ids: &[String]) {
    let a = |args: &[&str]| run_in(dir, "a.sqlite", args);
    for name in ["throughput.svg", "loss_over_time.png"] {
        let kind = name.split('.').next().unwrap();
        let path = dir.join(name);
        let (out, _) = a(&[
            "export",
            "chart",
            kind,
            &ids[0],
            &ids[1],
            "-o",
            path.to_str().unwrap(),
        ]);
        ok(&out);
        let bytes = std::fs::read(&path).unwrap();
        if name.ends_with(".png") {
            assert!(bytes.starts_with(b"\x89PNG"));
        } else {
            assert!(String::from_utf8_lossy(&bytes).contains("samples per second"));
        }
    }
    let (out, _) = a(&["export", "chart", "pie", &ids[0], &ids[1], "-o", "x.svg"]);
    refused(&out, "charts = pie");
}

/// CSV: all runs, then one run's raw windows; an unknown table is refused.
fn exports_csv(dir: &Path, ids: &[String]) {
    let a = |args: &[&str]| run_in(dir, "a.sqlite", args);
    let (out, _) = a(&["export", "csv"]);
    ok(&out);
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    assert!(r
        .headers()
        .unwrap()
        .iter()
        .any(|h| h == "throughput_samples_per_s"));
    let headers = r.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let rows: Vec<_> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 2);
    for row in &rows {
        assert_eq!(&row[col("cost_is_projected")], "true", "{row:?}");
        assert!(
            row[col("epoch_basis")].starts_with("projected: ImageNet-1k"),
            "{row:?}"
        );
    }
    let (out, _) = a(&["export", "csv", "--raw", "windows", "--run", &ids[1]]);
    ok(&out);
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    let windows: Vec<_> = r.records().map(|x| x.unwrap()).collect();
    assert!(windows.len() >= 10, "40 steps in windows of 3");
    let (out, _) = a(&["export", "csv", "--raw", "gradients", "--run", &ids[1]]);
    refused(&out, "raw");
}

/// The session file into a second database, twice (no duplicates), with
/// identical numbers there; a damaged file changes nothing.
fn carries_the_session_to_a_second_database(dir: &Path, show: &Value) {
    let a = |args: &[&str]| run_in(dir, "a.sqlite", args);
    let file = dir.join("session.json");
    let (out, _) = a(&[
        "export",
        "session",
        "fp32 vs bf16",
        "-o",
        file.to_str().unwrap(),
    ]);
    ok(&out);
    let b = |args: &[&str]| run_in(dir, "b.sqlite", args);
    let (out, imported) = b(&["import", file.to_str().unwrap(), "--json"]);
    ok(&out);
    assert_eq!(imported["runs_imported"], 2);
    let (out, again) = b(&["import", file.to_str().unwrap(), "--json"]);
    ok(&out);
    assert_eq!(again["session_created"], false);
    let (_, runs_b) = b(&["runs", "--json"]);
    assert_eq!(runs_b["runs"].as_array().unwrap().len(), 2, "no duplicates");
    let (out, show_b) = b(&["session", "show", "fp32 vs bf16", "--json"]);
    ok(&out);
    // Identical numbers on the other machine.
    let strip = |c: &Value| {
        let mut c = c.clone();
        for e in c["entries"].as_array_mut().unwrap() {
            e.as_object_mut().unwrap().remove("run_ids");
            e.as_object_mut().unwrap().remove("key");
            e.as_object_mut().unwrap().remove("label");
        }
        c.as_object_mut().unwrap().remove("warnings");
        c
    };
    assert_eq!(strip(&show_b["comparison"]), strip(&show["comparison"]));
    let (_, detail) = b(&["show", &runs_b["runs"][0]["id"].to_string(), "--json"]);
    assert!(
        detail["origin"]["hostname"].is_string(),
        "marked as imported: {detail}"
    );

    // A damaged file changes nothing.
    let bytes = std::fs::read(&file).unwrap();
    let broken = dir.join("broken.json");
    std::fs::write(&broken, &bytes[..bytes.len() / 3]).unwrap();
    let (out, _) = b(&["import", broken.to_str().unwrap()]);
    let err = refused(&out, "file");
    assert!(err.contains("not valid JSON"), "{err}");
    let (_, after) = b(&["runs", "--json"]);
    assert_eq!(after, runs_b);
}

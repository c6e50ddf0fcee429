//! Charts, CSV and the PDF report from runs stored in a real SQLite file,
//! checked with real readers: usvg and png for the charts, a CSV parser, and
//! poppler's pdftoppm / pdftotext for the PDF.

use std::process::Command;

use trainbench_core::compare::{compare, Comparison, Grouping};
use trainbench_core::session::ChartKind;
use trainbench_report::{charts, csv, document, pdf};

mod common;

use common::{details, out_dir, stored};
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

#[test]
fn every_chart_renders_as_svg_and_png() {
    let dir = out_dir("charts");
    let (store, ids) = stored(&dir);
    let runs = details(&store, &ids);
    let rows: Vec<_> = runs.iter().map(|r| r.row.clone()).collect();
    let c = compare(&rows, Grouping::Configurations, None).expect("compare");
    assert_eq!(
        c.entries.len(),
        5,
        "3 frameworks, the 2-device run, the failed run"
    );
    let data = charts::ChartData {
        comparison: &c,
        runs: &runs,
        hidden: &[],
    };
    for kind in ChartKind::ALL {
        let svg = charts::svg(&data, kind).expect("svg");
        let tree = usvg::Tree::from_str(&svg, &trainbench_report::fonts::svg_options())
            .unwrap_or_else(|e| panic!("{kind:?}: SVG does not parse: {e}"));
        assert!(tree.size().width() > 100.0);
        let (title, x_axis, _) = charts::titles(kind);
        assert!(svg.contains(x_axis), "{kind:?}: axis named with its unit");
        assert!(
            svg.contains(title.split(' ').next().unwrap_or("")),
            "{kind:?}: title"
        );
        std::fs::write(dir.join(format!("{}.svg", kind.key())), &svg).expect("write");
        let png = charts::png(&data, kind, 1).expect("png");
        let decoder = png::Decoder::new(std::io::Cursor::new(&png));
        let reader = decoder.read_info().expect("PNG decodes");
        assert_eq!(reader.info().width, 960);
        assert_eq!(reader.info().height, charts::height(&data, kind));
        std::fs::write(dir.join(format!("{}.png", kind.key())), &png).expect("write");
    }
    // Labels readable: every entry's label is in the bar chart, and values too.
    let svg = charts::svg(&data, ChartKind::Throughput).expect("svg");
    for e in &c.entries {
        let escaped = e.label.replace('&', "&amp;");
        assert!(svg.contains(&escaped), "label {} in the chart", e.label);
    }
    assert!(svg.contains("not measured"), "the failed run's bar says so");
    // The scaling chart has the 1- and 2-device tch runs and their efficiency.
    let svg = charts::svg(&data, ChartKind::Scaling).expect("svg");
    assert!(svg.contains("efficiency"), "scaling efficiency labelled");
    // A hidden series is not drawn.
    let hidden = vec![c.entries[1].key.clone()];
    let data_hidden = charts::ChartData {
        hidden: &hidden,
        ..data
    };
    let svg = charts::svg(&data_hidden, ChartKind::LossOverTime).expect("svg");
    assert!(!svg.contains(&c.entries[1].label.replace('&', "&amp;")));
}

#[test]
fn runs_csv_round_trips_through_a_csv_parser_and_neutralises_formulas() {
    let dir = out_dir("csv");
    let (store, ids) = stored(&dir);
    let rows = store.list_runs().expect("rows");
    let mut bytes = Vec::new();
    csv::runs(&rows, &mut bytes).expect("csv");
    std::fs::write(dir.join("runs.csv"), &bytes).expect("write");
    assert!(bytes.windows(2).any(|w| w == b"\r\n"), "CRLF line ends");
    let mut reader = ::csv::ReaderBuilder::new().from_reader(bytes.as_slice());
    let headers = reader.headers().expect("headers").clone();
    assert_eq!(headers.len(), csv::RUN_COLUMNS.len());
    let records: Vec<::csv::StringRecord> = reader.records().map(|r| r.expect("record")).collect();
    assert_eq!(records.len(), ids.len());
    let col = |name: &str| headers.iter().position(|h| h == name).expect(name);
    for (r, rec) in rows.iter().zip(&records) {
        assert_eq!(rec[col("run_id")], r.id.to_string());
        let tp = r.summary.as_ref().and_then(|s| s.throughput_samples_per_s);
        match tp {
            Some(tp) => assert_eq!(
                rec[col("throughput_samples_per_s")]
                    .parse::<f64>()
                    .expect("number"),
                tp
            ),
            None => assert_eq!(
                &rec[col("throughput_samples_per_s")],
                "",
                "not measured is empty"
            ),
        }
    }
    // A training script's precision and data are its own: empty cells, not
    // the harness's defaults.
    let mut script = rows[0].clone();
    script.model = "script:/home/ada/train.py --lr 3e-4".into();
    let mut one = Vec::new();
    csv::runs(&[script], &mut one).expect("csv");
    let rec = ::csv::Reader::from_reader(one.as_slice())
        .records()
        .next()
        .expect("one row")
        .expect("record");
    assert_eq!((&rec[col("precision")], &rec[col("data")]), ("", ""));
    let failed = records.last().expect("failed run");
    assert_eq!(
        &failed[col("status_reason")],
        "'=HYPERLINK(\"http://x\"), with \"quotes\"\nand a line break",
        "a formula is neutralised; commas, quotes and line breaks survive quoting"
    );

    // Raw windows of one run, with throughput and the warm-up flag.
    let run = store.run_detail(ids[0]).expect("detail");
    let mut raw = Vec::new();
    csv::raw(&run, &[], csv::Raw::Windows, &mut raw).expect("raw");
    let mut reader = ::csv::Reader::from_reader(raw.as_slice());
    let recs: Vec<_> = reader.records().map(|r| r.expect("record")).collect();
    assert_eq!(recs.len(), run.windows.len());
    assert_eq!(&recs[0][11], "true", "first window is warm-up");
    let telemetry = store.telemetry(ids[0]).expect("telemetry");
    let mut raw = Vec::new();
    csv::raw(&run, &telemetry, csv::Raw::Telemetry, &mut raw).expect("raw");
    assert_eq!(
        ::csv::Reader::from_reader(raw.as_slice()).records().count(),
        telemetry.len()
    );
}

fn tool(cmd: &str, args: &[&str]) -> std::process::Output {
    Command::new(cmd).args(args).output().unwrap_or_else(|e| {
        panic!("{cmd} (Debian poppler-utils, installed by scripts/setup.sh): {e}")
    })
}

#[test]
fn pdf_report_renders_with_poppler_and_its_text_is_extractable() {
    let dir = out_dir("pdf");
    let (store, ids) = stored(&dir);
    let runs = details(&store, &ids);
    let rows: Vec<_> = runs.iter().map(|r| r.row.clone()).collect();
    let c = compare(&rows, Grouping::Configurations, Some(ids[2])).expect("compare");
    let prices: Vec<_> = store
        .prices()
        .expect("prices")
        .into_iter()
        .map(|p| p.0)
        .filter(|p| {
            rows.iter()
                .any(|r| r.price_offering.as_ref() == Some(&p.offering))
        })
        .collect();
    let bytes = pdf::report(&document::ReportInput {
        title: "tch vs PyTorch vs JAX".into(),
        comparison: &c,
        runs: &runs,
        charts: &ChartKind::ALL,
        hidden_series: &[],
        prices: &prices,
        generated_unix_ms: 1_795_348_257_707,
        studio_version: "test",
        extra: &[],
        context: &[],
    })
    .expect("pdf");
    let path = dir.join("report.pdf");
    std::fs::write(&path, &bytes).expect("write");
    assert!(bytes.starts_with(b"%PDF-"));

    let info = tool("pdfinfo", &[path.to_str().expect("utf-8")]);
    assert!(
        info.status.success(),
        "{}",
        String::from_utf8_lossy(&info.stderr)
    );
    let info = String::from_utf8_lossy(&info.stdout).to_string();
    let pages: usize = info
        .lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .and_then(|p| p.trim().parse().ok())
        .expect("page count");
    assert!((4..=12).contains(&pages), "{pages} pages\n{info}");

    let ppm = tool(
        "pdftoppm",
        &[
            "-r",
            "60",
            "-png",
            path.to_str().expect("utf-8"),
            dir.join("page").to_str().expect("utf-8"),
        ],
    );
    assert!(
        ppm.status.success(),
        "pdftoppm: {}",
        String::from_utf8_lossy(&ppm.stderr)
    );
    assert!(
        String::from_utf8_lossy(&ppm.stderr).trim().is_empty(),
        "poppler complains: {}",
        String::from_utf8_lossy(&ppm.stderr)
    );
    let pngs = std::fs::read_dir(&dir)
        .expect("dir")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("page"))
        })
        .count();
    assert_eq!(pngs, pages, "one image per page");

    let text = tool(
        "pdftotext",
        &["-layout", path.to_str().expect("utf-8"), "-"],
    );
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    for expected in [
        "TrainBench report: tch vs PyTorch vs JAX",
        "2026-11-22 11:50 UTC",
        "The question",
        "Compared: framework (tch, pytorch, jax, tensorflow)",
        "Decision matrix",
        "Summary with deltas against the baseline",
        "as a percentage of the baseline's", // what each Δ is on
        "runner-up's value",                 // and what a margin is on
        "more than ",                        // throughput's margin: higher is better
        "less than ",                        // memory's: lower is better
        "baseline",
        "Scaling efficiency",
        "Speed-up against the baseline",
        "Method: ", // each speed-up's interval method
        "Warnings",
        "run ", // a failed-run warning
        "ResourceExhaustedError",
        "Charts",
        "Throughput (steady state, 95 % CI)", // chart text is text too
        "samples per second",
        "Provenance",
        "generated fixture",
        "Method",
        "Warm-up: the first window is warm-up",
        "AWS p4d.24xlarge", // the price row (its name wraps in the table)
        "not measured",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} not in the PDF text:\n{text}"
        );
    }
}

/// Runs stored from `fixtures`, compared by configuration: the comparison
/// and the PDF's question.
fn question_of(name: &str, fixtures: &[FixtureRun]) -> (Comparison, String) {
    let dir = out_dir(name);
    let mut store = Store::open(&dir.join("runs.sqlite")).expect("open");
    let ids: Vec<i64> = fixtures
        .iter()
        .map(|f| write_run(&mut store, f).expect("fixture"))
        .collect();
    let runs = details(&store, &ids);
    let rows: Vec<_> = runs.iter().map(|r| r.row.clone()).collect();
    let c = compare(&rows, Grouping::Configurations, None).expect("compare");
    let q = document::question(&c, &runs);
    (c, q)
}

#[test]
fn a_version_sweep_names_the_releases_it_compares() {
    let fixtures: Vec<FixtureRun> = ["jax==0.6.1", "jax==0.8.0"]
        .iter()
        .enumerate()
        .map(|(k, env)| FixtureRun {
            framework: trainbench_core::Framework::Jax,
            environment: Some((*env).into()),
            seed: k as u64,
            ..Default::default()
        })
        .collect();
    let (_, q) = question_of("releases", &fixtures);
    assert!(
        q.contains("Compared: framework (jax==0.6.1, jax==0.8.0)"),
        "{q}"
    );
    assert!(!q.contains("framework jax,"), "{q}");
}

#[test]
fn a_settings_sweep_names_the_variables_it_compares() {
    let fixtures: Vec<FixtureRun> = ["", "--xla_cpu_multi_thread_eigen=false"]
        .iter()
        .enumerate()
        .map(|(k, flags)| {
            let mut env = std::collections::BTreeMap::new();
            if !flags.is_empty() {
                env.insert("XLA_FLAGS".to_owned(), (*flags).to_owned());
            }
            FixtureRun {
                framework: trainbench_core::Framework::Jax,
                seed: k as u64,
                env,
                ..Default::default()
            }
        })
        .collect();
    let (c, q) = question_of("settings", &fixtures);
    assert_eq!(c.entries.len(), 2);
    assert!(
        q.contains(
            "Compared: environment variables (none set, XLA_FLAGS=--xla_cpu_multi_thread_eigen=false)"
        ),
        "{q}"
    );
    // Each entry's label says its variables.
    let labels: Vec<&str> = c.entries.iter().map(|e| e.label.as_str()).collect();
    assert!(labels.contains(&"no framework variables set"), "{labels:?}");
    assert!(
        labels.contains(&"XLA_FLAGS=--xla_cpu_multi_thread_eigen=false"),
        "{labels:?}"
    );
}

#[test]
fn curves_carry_each_points_step_and_where_the_steady_windows_begin() {
    let dir = out_dir("curves");
    let (store, ids) = stored(&dir);
    let runs = details(&store, &ids[..2]);
    let rows: Vec<_> = runs.iter().map(|r| r.row.clone()).collect();
    let c = compare(&rows, Grouping::Runs, None).expect("compare");
    let data = charts::ChartData {
        comparison: &c,
        runs: &runs,
        hidden: &[],
    };
    let curve = charts::curves(
        &data,
        trainbench_core::session::ChartKind::ThroughputOverTime,
    )
    .into_iter()
    .find(|c| c.run_id == ids[0])
    .expect("a throughput curve");
    let r = &runs[0];
    assert_eq!(curve.steps.len(), curve.points.len());
    let w = &r.windows[0];
    assert_eq!(
        curve.steps[0],
        w.first_step + w.steps - 1,
        "a window's last step"
    );
    assert!(
        curve.steps.windows(2).all(|s| s[0] < s[1]),
        "{:?}",
        curve.steps
    );
    let warmup = r.row.summary.as_ref().expect("summary").windows_warmup;
    let steady = curve.steady_from_s.expect("a summarised run");
    // The first steady window starts after the warm-up's last one ends and
    // before its own end.
    assert!(warmup >= 1, "the fixture has a warm-up");
    assert!(
        steady >= curve.points[warmup - 1].0 - 1e-9,
        "{steady} {:?}",
        curve.points
    );
    assert!(
        steady < curve.points[warmup].0,
        "{steady} {:?}",
        curve.points
    );
}

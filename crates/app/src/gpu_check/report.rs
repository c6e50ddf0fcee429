//! The suite's figures and verdicts as rows (the CLI's tables) and as the
//! PDF's sections.

use trainbench_core::acceptance::{Check, Verdict, CHECKS};
use trainbench_core::record::RunDetail;
use trainbench_report::document::Section;

use trainbench_probe::GpuInfo;

/// The columns of [`figures_row`].
pub const FIGURE_HEADERS: [&str; 9] = [
    "run",
    "framework",
    "model",
    "precision",
    "devices",
    "samples/s",
    "MFU",
    "J/sample",
    "alloc GiB",
];

fn fmt_opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or("not measured".into(), f)
}

/// One line per run: what it measured.
pub fn figures_row(d: &RunDetail) -> Vec<String> {
    let s = d.row.summary.as_ref();
    let alloc = d
        .memory
        .iter()
        .filter(|m| m.source == "allocator")
        .map(|m| m.peak_bytes)
        .max();
    vec![
        format!("#{}", d.row.id),
        d.row.framework.to_string(),
        d.row.model.clone(),
        format!(
            "{}{}",
            d.row.precision,
            match d.spec["compile"].as_str() {
                Some("off") | None => String::new(),
                Some(c) => format!(" compile={c}"),
            }
        ),
        d.row.devices.to_string(),
        fmt_opt(s.and_then(|s| s.throughput_samples_per_s), |t| {
            format!("{t:.1}")
        }),
        fmt_opt(s.and_then(|s| s.mfu), |m| format!("{:.1} %", m * 100.0)),
        fmt_opt(s.and_then(|s| s.energy_j_per_sample), |j| format!("{j:.4}")),
        fmt_opt(alloc.map(|b| b as f64), |b| {
            format!("{:.2}", b / (1u64 << 30) as f64)
        }),
    ]
}

/// One line per run: its verdict on every check (`CHECKS` order).
pub fn verdict_row(d: &RunDetail, checks: &[Check]) -> Vec<String> {
    let mut row = vec![format!("#{}", d.row.id)];
    for (key, _) in CHECKS {
        row.push(
            checks
                .iter()
                .find(|c| c.key == key)
                .map_or("?", |c| c.verdict.symbol())
                .to_owned(),
        );
    }
    row
}

const CHECK_LEGEND: &str = "done = completed; alloc = framework allocator peak; nvml = NVML memory, utilisation, power and energy samples; energy = energy per sample with the counter within 10 % of mean power × time; mfu = 0 < MFU ≤ 1; sku = the GPU's exact SKU in the peak table (or unknown); scale = amp-fp16 with dynamic loss scaling; warn = run warnings. ok passed, FAIL failed, note = reported, - = does not apply; the evidence of every failure and note follows";

/// The PDF's sections ahead of the comparison: verdicts, figures, and the
/// evidence of every failure and note.
pub fn sections(
    gpus: &[GpuInfo],
    skipped: &[String],
    details: &[RunDetail],
    checks: &[Vec<Check>],
    all_passed: bool,
) -> Vec<Section> {
    let config = |d: &RunDetail| {
        let f = figures_row(d);
        format!("{} {} {} ×{}", f[1], f[2], f[3], f[4])
    };
    // One row per run, one column per check (as the terminal shows it).
    let matrix: Vec<Vec<String>> = details
        .iter()
        .zip(checks)
        .map(|(d, c)| {
            let mut row = verdict_row(d, c);
            row.insert(1, config(d));
            row
        })
        .collect();
    let mut headers = vec!["Run".to_owned(), "Configuration".to_owned()];
    headers.extend(CHECKS.iter().map(|c| c.1.to_owned()));
    let mut widths = vec![26.0, 150.0];
    widths.extend(CHECKS.iter().map(|_| 40.0));
    let gpus = gpus
        .iter()
        .map(|g| g.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let skipped = if skipped.is_empty() {
        "nothing".to_owned()
    } else {
        skipped.join("; ")
    };
    let verdicts = Section {
        heading: "GPU acceptance checks".into(),
        text: format!(
            "{} on {gpus}: {CHECK_LEGEND}. Skipped: {skipped}.",
            if all_passed {
                "Every check passed"
            } else {
                "Some checks FAILED"
            },
        ),
        headers,
        widths,
        rows: matrix,
    };
    let figures = Section {
        heading: "GPU acceptance figures".into(),
        text: "Steady-window throughput, MFU against the GPU's dense peak for the precision, energy per sample from NVML's energy counter, and the framework allocator's peak.".into(),
        headers: ["Run", "Configuration", "samples/s", "MFU", "J/sample", "alloc GiB"]
            .map(String::from)
            .to_vec(),
        widths: vec![26.0, 214.0, 60.0, 50.0, 60.0, 60.0],
        rows: details
            .iter()
            .map(|d| {
                let f = figures_row(d);
                let mut row = vec![f[0].clone(), config(d)];
                row.extend(f[5..].iter().cloned());
                row
            })
            .collect(),
    };
    let evidence = evidence_rows(details, checks);
    let mut sections = vec![verdicts, figures];
    if !evidence.is_empty() {
        sections.push(Section {
            heading: "Failures and notes".into(),
            text: "The evidence behind every check that failed or is a note; checks.json holds the evidence of every check.".into(),
            headers: ["Run", "Check", "Verdict", "Evidence"].map(String::from).to_vec(),
            widths: vec![26.0, 70.0, 40.0, 334.0],
            rows: evidence,
        });
    }
    sections
}

/// (run, check, verdict, evidence) of every check that failed or is a note.
pub fn evidence_rows(details: &[RunDetail], checks: &[Vec<Check>]) -> Vec<Vec<String>> {
    details
        .iter()
        .zip(checks)
        .flat_map(|(d, c)| {
            c.iter()
                .filter(|ch| matches!(ch.verdict, Verdict::Fail | Verdict::Note))
                .map(|ch| {
                    vec![
                        format!("#{}", d.row.id),
                        ch.key.clone(),
                        ch.verdict.symbol().to_owned(),
                        ch.evidence.clone(),
                    ]
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

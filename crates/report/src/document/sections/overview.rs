//! The report's opening: its title line, the question the comparison
//! answers, the caller's own sections, and the configurations compared.

use trainbench_core::compare::Comparison;
use trainbench_core::record::RunDetail;

use crate::document::provenance::Provenance;
use crate::document::text::letter;
use crate::document::Page;
use crate::document::{ReportInput, Section};

/// The title, and who wrote the report when from how many runs.
pub(crate) fn title(l: &mut impl Page, input: &ReportInput<'_>, provenance: &Provenance) {
    let c = input.comparison;
    l.heading(&format!("TrainBench report: {}", input.title), 17.0);
    l.paragraph(
        &format!(
            "Generated {} by TrainBench Studio {} from {} run(s) in {} entr{}.",
            provenance.generated_at,
            provenance.studio_version,
            input.runs.len(),
            c.entries.len(),
            if c.entries.len() == 1 { "y" } else { "ies" }
        ),
        9.0,
        true,
    );
}

/// "The question": what varies between the entries and what is held fixed.
pub(crate) fn the_question(l: &mut impl Page, c: &Comparison, runs: &[RunDetail]) {
    l.heading("The question", 12.0);
    l.paragraph(&question(c, runs), 9.5, false);
}

/// The sections the caller supplied, each a heading, a paragraph and a table.
pub(crate) fn extra(l: &mut impl Page, sections: &[Section]) {
    for s in sections {
        l.heading(&s.heading, 12.0);
        if !s.text.is_empty() {
            l.paragraph(&s.text, 9.0, false);
        }
        if !s.rows.is_empty() {
            let headers: Vec<&str> = s.headers.iter().map(String::as_str).collect();
            l.table(&headers, &s.widths, &s.rows, 7.0);
        }
    }
}

/// "Configurations": each entry's letter, label, runs and parameter count.
pub(crate) fn configurations(l: &mut impl Page, c: &Comparison) {
    l.heading("Configurations", 12.0);
    if !c.shared_label.is_empty() {
        l.paragraph(
            &format!(
                "Every entry: {}. Each entry's label below, and in the charts and tables, says what sets it apart.",
                c.shared_label
            ),
            9.0,
            false,
        );
    }
    let base = c.baseline;
    let rows: Vec<Vec<String>> = c
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            vec![
                letter(i),
                format!("{}{}", e.label, if i == base { " (baseline)" } else { "" }),
                e.run_ids
                    .iter()
                    .map(|r| format!("#{r}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                format!("{} of {}", e.runs_completed, e.run_ids.len()),
                e.param_count
                    .map_or("not measured".into(), |p| p.to_string()),
            ]
        })
        .collect();
    l.table(
        &["", "Configuration", "Runs", "Completed", "Parameters"],
        &[22.0, 260.0, 80.0, 60.0, 70.0],
        &rows,
        8.0,
    );
}

/// The question the comparison answers: what varies and what is held fixed.
pub fn question(c: &Comparison, runs: &[RunDetail]) -> String {
    // The first run of an entry (its configuration key, or a run's id).
    let row = |key: &str| {
        runs.iter()
            .find(|r| r.row.config_key == key || r.row.id.to_string() == key)
    };
    let compile = |key: &str| -> String {
        row(key)
            .and_then(|r| {
                r.spec
                    .get("compile")
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| "off".into())
    };
    // The environment variables the entry's runs set (`spec::env`).
    let settings = |key: &str| -> String {
        row(key)
            .map(|r| &r.row.env)
            .filter(|env| !env.is_empty())
            .map_or("none set".into(), trainbench_core::spec::env::label)
    };
    let threads = |key: &str| -> String {
        row(key)
            .and_then(|r| r.row.threads)
            .map_or("the framework's choice".into(), |t| t.to_string())
    };
    let benchmark = |key: &str| -> String {
        match row(key).and_then(|r| r.row.cudnn_benchmark) {
            Some(true) => "on".into(),
            Some(false) => "off".into(),
            None => "the worker's default".into(),
        }
    };
    let dims: Vec<(&str, Vec<String>)> = vec![
        (
            "framework",
            // With its environment or release (`jax==0.7.2`), the first
            // part of the entry's whole label.
            c.entries
                .iter()
                .map(|e| {
                    e.full_label
                        .split_whitespace()
                        .next()
                        .filter(|f| f.starts_with(e.framework.as_str()))
                        .unwrap_or(&e.framework)
                        .to_owned()
                })
                .collect(),
        ),
        ("model", c.entries.iter().map(|e| e.model.clone()).collect()),
        (
            "precision",
            c.entries.iter().map(|e| e.precision.clone()).collect(),
        ),
        (
            "compile mode",
            c.entries.iter().map(|e| compile(&e.key)).collect(),
        ),
        (
            "devices",
            c.entries.iter().map(|e| e.devices.to_string()).collect(),
        ),
        (
            "batch per device",
            c.entries.iter().map(|e| e.batch_size.to_string()).collect(),
        ),
        ("data", c.entries.iter().map(|e| e.data.clone()).collect()),
        (
            "CPU threads",
            c.entries.iter().map(|e| threads(&e.key)).collect(),
        ),
        (
            "cuDNN benchmark",
            c.entries.iter().map(|e| benchmark(&e.key)).collect(),
        ),
        (
            "environment variables",
            c.entries.iter().map(|e| settings(&e.key)).collect(),
        ),
    ];
    let mut varied = Vec::new();
    let mut fixed = Vec::new();
    for (name, mut values) in dims {
        let mut seen = Vec::new();
        values.retain(|v| {
            let new = !seen.contains(v);
            seen.push(v.clone());
            new
        });
        if values.len() > 1 {
            varied.push(format!("{name} ({})", values.join(", ")));
        } else if let Some(v) = values.first() {
            fixed.push(format!("{name} {v}"));
        }
    }
    let varied = if varied.is_empty() {
        "repeats of one configuration".to_string()
    } else {
        varied.join("; ")
    };
    format!(
        "Which configuration trains fastest, in the least memory, for the least money, and reaches the target accuracy first? Compared: {varied}. Held fixed: {}.",
        if fixed.is_empty() { "nothing".into() } else { fixed.join(", ") }
    )
}

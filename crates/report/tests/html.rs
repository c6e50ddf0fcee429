//! The HTML report from runs stored in a real SQLite file: the PDF's
//! sections in the PDF's order, every chart drawn with its figures and
//! toggles, every stored string escaped, and nothing the page could fetch.
//! (The real browser's checks — hover, toggles, no request — are the
//! end-to-end test's, in `ui/e2e/html-report.e2e.mjs`.)

mod common;

use std::process::Command;

use common::{details, out_dir, stored};
use trainbench_core::compare::{compare, Comparison, Grouping};
use trainbench_core::session::ChartKind;
use trainbench_report::document::{ReportInput, Section};
use trainbench_report::{html, pdf};

const HOSTILE: &str = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>";

#[test]
fn the_html_report_has_the_pdfs_sections_every_chart_and_escapes_every_string() {
    let dir = out_dir("html");
    let (store, ids) = stored(&dir);
    let runs = details(&store, &ids);
    let rows: Vec<_> = runs.iter().map(|r| r.row.clone()).collect();
    let c = compare(&rows, Grouping::Configurations, Some(ids[2])).expect("compare");
    let extra = [Section {
        heading: format!("A caller's section {HOSTILE}"),
        text: HOSTILE.into(),
        headers: vec!["what".into(), "said".into()],
        widths: vec![1.0, 3.0],
        rows: vec![vec!["cell".into(), HOSTILE.into()]],
    }];
    let input = ReportInput {
        title: format!("tch vs PyTorch {HOSTILE}"),
        comparison: &c,
        runs: &runs,
        charts: &ChartKind::ALL,
        hidden_series: &[],
        prices: &[],
        generated_unix_ms: 1_795_348_257_707,
        studio_version: "test",
        extra: &extra,
        context: &[],
    };
    let page = html::report(&input).expect("html");
    std::fs::write(dir.join("report.html"), &page).expect("write");

    escaped_and_fetching_nothing(&page);
    the_pdfs_sections_in_order(&page, &input, &dir);
    every_chart_with_figures_and_toggles(&page, &c);
}

/// Nothing stored or supplied becomes markup, and nothing can be fetched.
fn escaped_and_fetching_nothing(page: &str) {
    // Nothing stored or supplied becomes markup.
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the studio's script"
    );
    assert!(!page.contains("<img"), "no image element");
    assert!(page.contains(
        "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"
    ));
    // No address the page could fetch, and a policy that forbids any.
    for fetches in [
        "http://", "https://", "src=\"", "href=\"", "url(", "@import",
    ] {
        let hits: Vec<_> = page
            .match_indices(fetches)
            .map(|(i, _)| &page[i.saturating_sub(40)..(i + 60).min(page.len())])
            .collect();
        // The failed run's formula text is shown (escaped), never a link.
        assert!(
            hits.iter().all(|h| h.contains("HYPERLINK")),
            "{fetches}: {hits:?}"
        );
    }
    assert!(
        page.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';")
    );
}

/// The PDF's section headings, in the PDF's order.
fn the_pdfs_sections_in_order(page: &str, input: &ReportInput<'_>, dir: &std::path::Path) {
    let pdf_path = dir.join("report.pdf");
    std::fs::write(&pdf_path, pdf::report(input).expect("pdf")).expect("write");
    let text = Command::new("pdftotext")
        .args(["-raw"])
        .arg(&pdf_path)
        .arg("-")
        .output()
        .expect("pdftotext");
    let text = String::from_utf8_lossy(&text.stdout);
    let headings: Vec<String> = page
        .split("<h2>")
        .skip(1)
        .map(|h| {
            h.split("</h2>")
                .next()
                .unwrap_or_default()
                .replace("&amp;", "&")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
        })
        .collect();
    assert!(headings.len() >= 12, "{headings:?}");
    let mut from = 0;
    for h in &headings {
        let first_line = h.lines().next().unwrap_or_default();
        let at = text[from..].find(
            first_line
                .split(' ')
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
                .as_str(),
        );
        assert!(at.is_some(), "{h:?} is not in the PDF after offset {from}");
        from += at.unwrap_or(0);
    }
}

/// Every chart: a figure, shapes with their figures, and a legend whose
/// check boxes name the series they hide.
fn every_chart_with_figures_and_toggles(page: &str, c: &Comparison) {
    let figures = page.matches("<figure class=\"chart\"").count();
    assert_eq!(figures, ChartKind::ALL.len());
    for kind in ChartKind::ALL {
        let at = page
            .find(&format!("data-kind=\"{}\"", kind.key()))
            .expect("figure");
        let figure = &page[at..at + page[at..].find("</figure>").expect("closed")];
        if kind == ChartKind::StepBreakdown && c.entries.iter().all(|e| e.breakdown.is_none()) {
            assert!(figure.contains("No step breakdown measured"), "{figure}");
            continue;
        }
        assert!(
            figure.contains("data-tip=\""),
            "{kind:?} has no figures to hover"
        );
        assert!(
            figure.contains("data-toggle=\"") && figure.contains("data-series=\""),
            "{kind:?} has no toggles"
        );
    }
    let tips: Vec<&str> = page
        .split("data-tip=\"")
        .skip(1)
        .map(|t| t.split('"').next().unwrap_or_default())
        .collect();
    assert!(
        tips.iter().any(|t| t.contains("samples/s, 95 % interval")),
        "{tips:?}"
    );
    assert!(
        tips.iter()
            .any(|t| t.contains("devices,") && t.contains("% of linear")),
        "{tips:?}"
    );
}

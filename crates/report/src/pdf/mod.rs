//! The PDF report of a comparison or saved session, written with krilla:
//! real text in the shipped DejaVu fonts (selectable and extractable), charts
//! embedded as vectors from their SVG.
//!
//! Layout happens in two passes: `layout` places text, rules and charts on
//! A4 pages (wrapping text with the font's own advance widths and repeating
//! table headers across page breaks), then `render` draws the pages.
//!
//! - `sections`: one function per section of the report, in order;
//! - `provenance`: where the report and its runs come from, gathered once;
//! - `text`: how dates, entry letters, metric values and recorded JSON read.

mod layout;
mod provenance;
mod render;
mod sections;
mod text;

use trainbench_core::compare::Comparison;
use trainbench_core::record::RunDetail;
use trainbench_core::reference::PriceRow;
use trainbench_core::session::ChartKind;

use crate::ReportError;
use layout::Layout;
use provenance::Provenance;

pub use sections::question;
pub use text::{letter, utc_text};

/// What a report is made of.
#[derive(Debug, Clone)]
pub struct ReportInput<'a> {
    /// The session's name, or a description of the runs compared.
    pub title: String,
    pub comparison: &'a Comparison,
    /// Every run of the comparison, in full.
    pub runs: &'a [RunDetail],
    /// Charts in the order to show them.
    pub charts: &'a [ChartKind],
    pub hidden_series: &'a [String],
    /// The price rows the runs' costs used.
    pub prices: &'a [PriceRow],
    pub generated_unix_ms: i64,
    pub studio_version: &'a str,
    /// Sections a caller adds after the question (a check suite's verdicts).
    pub extra: &'a [Section],
    /// Sections that place the runs in context (the published record, a
    /// projection), after the comparison's own findings.
    pub context: &'a [Section],
}

/// A section of the report supplied by its caller: a heading, a paragraph and
/// a table.
#[derive(Debug, Clone, Default)]
pub struct Section {
    pub heading: String,
    pub text: String,
    pub headers: Vec<String>,
    /// Column widths in points (the page's text column is about 500 wide).
    pub widths: Vec<f32>,
    pub rows: Vec<Vec<String>>,
}

/// Writes the report; returns the PDF's bytes.
pub fn report(input: &ReportInput<'_>) -> Result<Vec<u8>, ReportError> {
    let c = input.comparison;
    let provenance = Provenance::of(input);
    let mut l = Layout::new()?;
    sections::title(&mut l, input, &provenance);
    sections::the_question(&mut l, c, input.runs);
    sections::extra(&mut l, input.extra);
    sections::configurations(&mut l, c);
    sections::decisions(&mut l, c);
    sections::summary(&mut l, c);
    sections::speedups(&mut l, c);
    sections::breakdown(&mut l, c);
    sections::profile_gaps(&mut l, c);
    sections::profiles(&mut l, input.runs);
    sections::scaling(&mut l, c);
    sections::warnings(&mut l, c, input.runs);
    sections::extra(&mut l, input.context);
    // The charts and the per-run details start on a page of their own.
    l.new_page();
    sections::charts(&mut l, input)?;
    sections::runs(&mut l, c, input.runs);
    sections::energy(&mut l, input.runs);
    sections::cost(&mut l, input.runs);
    sections::provenance(&mut l, &provenance.runs);
    sections::method(&mut l, input.prices);
    render::render(l, &input.title, &provenance)
}

#[cfg(test)]
mod tests;

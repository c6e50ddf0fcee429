//! What every report says, whatever it is written as: the input, the
//! sections in their order, and the [`Page`] they are written on. The PDF
//! ([`crate::pdf`]) lays them out on A4 pages; the HTML report
//! ([`crate::html`]) writes them as one self-contained web page.
//!
//! - `sections`: one function per section, in order;
//! - `provenance`: where the report and its runs come from, gathered once;
//! - `text`: how dates, entry letters, metric values and recorded JSON read.

mod provenance;
mod sections;
mod text;

use trainbench_core::compare::Comparison;
use trainbench_core::record::RunDetail;
use trainbench_core::reference::PriceRow;
use trainbench_core::session::ChartKind;

use crate::charts::ChartData;
use crate::ReportError;

pub(crate) use provenance::Provenance;
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

/// What the sections write on: a PDF's pages or an HTML document.
pub(crate) trait Page {
    /// A bold heading; `size` in points (14 and over: a report's title,
    /// 12: a section, under 12: a part of one).
    fn heading(&mut self, text: &str, size: f32);
    /// A paragraph (`grey` for secondary text).
    fn paragraph(&mut self, text: &str, size: f32, grey: bool);
    /// A table; `widths` are the columns' relative widths, one per header,
    /// and every row has a cell per header.
    fn table(&mut self, headers: &[&str], widths: &[f32], rows: &[Vec<String>], size: f32);
    /// One chart of the comparison.
    fn chart(&mut self, data: &ChartData<'_>, kind: ChartKind) -> Result<(), ReportError>;
    /// Where the details begin (a new page on paper).
    fn break_page(&mut self) {}
}

/// A table's shape, checked in tests and debug builds: a cell the PDF had
/// no column for would be dropped from the page without a word.
pub(crate) fn check_table(headers: &[&str], widths: &[f32], rows: &[Vec<String>]) {
    debug_assert_eq!(headers.len(), widths.len(), "{headers:?}");
    for row in rows {
        debug_assert_eq!(row.len(), headers.len(), "{headers:?}: {row:?}");
    }
}

/// Every section of the report, in order, written on `p`.
pub(crate) fn write<P: Page>(
    p: &mut P,
    input: &ReportInput<'_>,
    provenance: &Provenance,
) -> Result<(), ReportError> {
    let c = input.comparison;
    sections::title(p, input, provenance);
    sections::the_question(p, c, input.runs);
    sections::extra(p, input.extra);
    sections::configurations(p, c);
    sections::decisions(p, c);
    sections::summary(p, c);
    sections::speedups(p, c);
    sections::breakdown(p, c);
    sections::profile_gaps(p, c);
    sections::profiles(p, input.runs);
    sections::scaling(p, c);
    sections::warnings(p, c, input.runs);
    sections::extra(p, input.context);
    // The charts and the per-run details start on a page of their own.
    p.break_page();
    sections::charts(p, input)?;
    sections::runs(p, c, input.runs);
    sections::energy(p, input.runs);
    sections::cost(p, input.runs);
    sections::provenance(p, &provenance.runs);
    sections::method(p, input.prices);
    Ok(())
}

#[cfg(test)]
mod tests;

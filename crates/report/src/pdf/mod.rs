//! The PDF report of a comparison or saved session, written with krilla:
//! real text in the shipped DejaVu fonts (selectable and extractable), charts
//! embedded as vectors from their SVG.
//!
//! Layout happens in two passes: `layout` places the sections' text, rules
//! and charts on A4 pages (wrapping text with the font's own advance widths
//! and repeating table headers across page breaks), then `render` draws the
//! pages. What the sections say is [`crate::document`]'s.

mod layout;
mod render;

use crate::document::{self, Provenance, ReportInput};
use crate::ReportError;
use layout::Layout;

/// Writes the report; returns the PDF's bytes.
pub fn report(input: &ReportInput<'_>) -> Result<Vec<u8>, ReportError> {
    let provenance = Provenance::of(input);
    let mut l = Layout::new()?;
    document::write(&mut l, input, &provenance)?;
    render::render(l, &input.title, &provenance)
}

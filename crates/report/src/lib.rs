//! TrainBench reports, from plain run records (no database here):
//!
//! - [`charts`]: the comparison's charts with plotters, as SVG or PNG;
//! - [`csv`]: runs with their configuration and summary, and a run's raw
//!   windows, evaluations and telemetry, as RFC 4180 CSV with formula cells
//!   neutralised;
//! - [`document`]: what a report says, section by section, whatever it is
//!   written as;
//! - [`pdf`]: the report of a comparison or saved session as a PDF (krilla;
//!   text selectable, charts as vectors);
//! - [`html`]: the same report as one self-contained web page (interactive
//!   charts, nothing fetched).
//!
//! Fonts are the DejaVu files in `assets/fonts`, compiled in, so a report
//! looks the same on every machine.

pub mod charts;
pub mod csv;
pub mod document;
pub mod html;
pub mod pdf;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("chart: {0}")]
    Chart(String),
    #[error("font: {0}")]
    Font(String),
    #[error("PDF: {0}")]
    Pdf(String),
    #[error("{0}")]
    Io(String),
    #[error("CSV: {0}")]
    Csv(#[from] ::csv::Error),
    #[error("{field} = {value:?} is not allowed: {allowed}")]
    Invalid {
        field: &'static str,
        value: String,
        allowed: String,
    },
}

/// The fonts every report and chart uses.
pub mod fonts {
    use std::sync::{Arc, OnceLock};

    use crate::ReportError;

    pub const REGULAR: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
    pub const BOLD: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-Bold.ttf");
    pub const FAMILY: &str = "DejaVu Sans";

    /// Makes plotters draw "sans-serif" with the shipped fonts (once per process).
    pub fn register_for_plotters() -> Result<(), ReportError> {
        static DONE: OnceLock<Result<(), String>> = OnceLock::new();
        DONE.get_or_init(|| {
            use plotters::style::{register_font, FontStyle};
            for (style, bytes) in [(FontStyle::Normal, REGULAR), (FontStyle::Bold, BOLD)] {
                register_font("sans-serif", style, bytes)
                    .map_err(|_| "the shipped DejaVu font does not parse".to_string())?;
            }
            Ok(())
        })
        .clone()
        .map_err(ReportError::Font)
    }

    /// SVG parsing options whose only fonts are the shipped ones.
    pub fn svg_options() -> usvg::Options<'static> {
        let mut db = usvg::fontdb::Database::new();
        db.load_font_data(REGULAR.to_vec());
        db.load_font_data(BOLD.to_vec());
        db.set_sans_serif_family(FAMILY);
        usvg::Options {
            font_family: FAMILY.to_string(),
            fontdb: Arc::new(db),
            ..usvg::Options::default()
        }
    }
}

//! The names of the files a session writes in its output folder.

/// Every item's result, rewritten after each item.
pub const RESULTS_JSON: &str = "results.json";
/// The results as Markdown rows.
pub const RESULTS_MD: &str = "results.md";
/// The stored runs as a session file (two runs or more).
pub const SESSION_FILE: &str = "gpu-session.trainbench-session.json";
/// The acceptance checks of the stored runs.
pub const CHECKS_JSON: &str = "checks.json";
/// The PDF report.
pub const REPORT_PDF: &str = "report.pdf";

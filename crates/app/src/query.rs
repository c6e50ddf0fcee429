//! `trainbench query`: one read-only SQL statement over the store's
//! documented views (docs/query.md), its answer bounded in rows and time, and
//! written as CSV or JSON for a script or an agent. The store refuses
//! anything that writes; this layer checks the limits and owns the formats.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use trainbench_store::{query_read_only, query_read_only_each, QueryLimits};

pub use trainbench_store::{Cell, QueryAnswer, QUERY_ALLOWED};

use crate::{AppError, AppResult};

/// Rows kept unless `--max-rows` says otherwise.
pub const DEFAULT_MAX_ROWS: usize = 1000;
/// The most rows a query may ask for.
pub const MAX_ROWS_CEILING: usize = 1_000_000;
/// Seconds a query may run unless `--timeout` says otherwise.
pub const DEFAULT_TIMEOUT_S: f64 = 10.0;
/// The longest time limit a query may ask for, seconds.
pub const TIMEOUT_CEILING_S: f64 = 3600.0;

/// What to run and how far it may go.
#[derive(Debug, Clone)]
pub struct QueryRequest {
    pub sql: String,
    pub max_rows: usize,
    pub timeout_s: f64,
}

impl QueryRequest {
    /// `sql` with the default limits.
    pub fn new(sql: impl Into<String>) -> QueryRequest {
        QueryRequest {
            sql: sql.into(),
            max_rows: DEFAULT_MAX_ROWS,
            timeout_s: DEFAULT_TIMEOUT_S,
        }
    }

    fn limits(&self) -> AppResult<QueryLimits> {
        if !(1..=MAX_ROWS_CEILING).contains(&self.max_rows) {
            return Err(AppError::bad_input(
                "max_rows",
                self.max_rows,
                &format!("a whole number of rows from 1 to {MAX_ROWS_CEILING}"),
            ));
        }
        if !(self.timeout_s.is_finite()
            && self.timeout_s > 0.0
            && self.timeout_s <= TIMEOUT_CEILING_S)
        {
            return Err(AppError::bad_input(
                "timeout",
                self.timeout_s,
                &format!("seconds above 0 and at most {TIMEOUT_CEILING_S}"),
            ));
        }
        Ok(QueryLimits {
            max_rows: self.max_rows,
            timeout: Duration::from_secs_f64(self.timeout_s),
        })
    }
}

/// Runs the request on the database at `db` (which must exist: a query never
/// makes one), read only.
pub fn query(db: &Path, request: &QueryRequest) -> AppResult<QueryAnswer> {
    let limits = request.limits()?;
    Ok(query_read_only(db, &request.sql, limits)?)
}

/// [`query`] a row at a time, for an answer of any length: the columns go
/// to `start`, then each row to `each` as it is read. Returns whether rows
/// were left out by the row limit. Stops at the first error `start` or
/// `each` returns.
pub fn query_each<E: From<AppError>>(
    db: &Path,
    request: &QueryRequest,
    start: impl FnOnce(&[String]) -> Result<(), E>,
    each: impl FnMut(Vec<Cell>) -> Result<(), E>,
) -> Result<bool, E> {
    let limits = request.limits()?;
    query_read_only_each(db, &request.sql, limits, start, each).map_err(AppError::from)?
}

/// The answer as one JSON document: `columns`, `rows` (numbers typed, NULL
/// as null, a blob as `{"blob_bytes": N}`), and `truncated` when rows were
/// left out by the row limit.
pub fn to_json(answer: &QueryAnswer) -> serde_json::Value {
    #[derive(Serialize)]
    struct Doc<'a> {
        columns: &'a [String],
        rows: &'a [Vec<Cell>],
        truncated: bool,
    }
    serde_json::to_value(Doc {
        columns: &answer.columns,
        rows: &answer.rows,
        truncated: answer.truncated,
    })
    .unwrap_or(serde_json::Value::Null)
}

/// A cell as text: NULL empty, a blob as its size.
pub fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Null => String::new(),
        Cell::Integer(v) => v.to_string(),
        Cell::Real(v) => v.to_string(),
        Cell::Text(t) => t.clone(),
        Cell::Blob { blob_bytes } => format!("({blob_bytes} bytes)"),
    }
}

/// The answer as CSV (RFC 4180: a header line, CRLF line ends, a field
/// quoted when it holds a comma, quote or line break). NULL is an empty
/// field; text a spreadsheet would run as a formula gets a leading `'`, as
/// in every CSV the studio writes; numbers are never altered.
pub fn to_csv(answer: &QueryAnswer) -> String {
    let mut out = csv_header(&answer.columns);
    for row in &answer.rows {
        out.push_str(&csv_row(row));
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// The header line of [`to_csv`], with its line end.
pub fn csv_header(columns: &[String]) -> String {
    let header: Vec<String> = columns.iter().map(|c| csv_field(c)).collect();
    format!("{}\r\n", header.join(","))
}

/// One row's line of [`to_csv`], with its line end.
pub fn csv_row(row: &[Cell]) -> String {
    let cells: Vec<String> = row
        .iter()
        .map(|c| match c {
            Cell::Text(t) => csv_field(&trainbench_report::csv::text_cell(t)),
            other => csv_field(&cell_text(other)),
        })
        .collect();
    format!("{}\r\n", cells.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> QueryAnswer {
        QueryAnswer {
            columns: vec!["model".into(), "throughput".into(), "note".into()],
            rows: vec![
                vec![
                    Cell::Text("resnet, mini".into()),
                    Cell::Real(412.5),
                    Cell::Null,
                ],
                vec![
                    Cell::Text("=cmd".into()),
                    Cell::Integer(3),
                    Cell::Blob { blob_bytes: 4 },
                ],
            ],
            truncated: true,
        }
    }

    #[test]
    fn csv_quotes_and_keeps_numbers() {
        assert_eq!(
            to_csv(&answer()),
            "model,throughput,note\r\n\"resnet, mini\",412.5,\r\n'=cmd,3,(4 bytes)\r\n"
        );
    }

    #[test]
    fn json_types_numbers_and_nulls() {
        let doc = to_json(&answer());
        assert_eq!(doc["columns"][1], "throughput");
        assert_eq!(doc["rows"][0][1], 412.5);
        assert!(doc["rows"][0][2].is_null());
        assert_eq!(doc["rows"][1][1], 3);
        assert_eq!(doc["rows"][1][2]["blob_bytes"], 4);
        assert_eq!(doc["truncated"], true);
    }

    #[test]
    fn limits_are_checked_naming_the_field() {
        let mut r = QueryRequest::new("SELECT 1");
        r.max_rows = 0;
        assert_eq!(r.limits().unwrap_err().field(), Some("max_rows"));
        let mut r = QueryRequest::new("SELECT 1");
        r.timeout_s = f64::NAN;
        assert_eq!(r.limits().unwrap_err().field(), Some("timeout"));
        r.timeout_s = 0.5;
        assert!(r.limits().is_ok());
    }
}

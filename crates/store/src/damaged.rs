//! A stored run whose row holds a value this studio cannot use — a hand
//! edit, or a damaged file: a negative parameter count, a precision it does
//! not know, a summary that is not a summary. The run and the column are
//! named; a listing goes on without the run and says why.

use rusqlite::types::ValueRef;
use trainbench_core::record::RunRow;
use trainbench_core::text::{cut, escape_controls};

/// What the row's reader reports for each column it reads, in the order of
/// `RUN_COLUMNS` (`crate::runs`).
const COLUMNS: [&str; 32] = [
    "id",
    "sweep_id",
    "config_key",
    "repeat_index",
    "framework",
    "model",
    "precision",
    "device",
    "devices",
    "batch_size",
    "data",
    "status",
    "status_reason",
    "error_class",
    "exit_code",
    "created_unix_ms",
    "started_unix_ms",
    "ended_unix_ms",
    "param_count",
    "price_offering",
    "summary",
    "origin",
    "scaling_key",
    "environment",
    "compile",
    "parallel",
    "provenance.hostname",
    "provenance.gpus[0].name",
    "hello.framework_version",
    "spec.env",
    "spec.threads",
    "spec.cudnn_benchmark",
];

/// A run whose stored row cannot be used: which run, which column, the
/// value found and what is allowed there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("run {run} is damaged: {column} = {value} is not allowed: expected {expected} (the stored row was edited by hand or the file is damaged)")]
pub struct Damaged {
    pub run: i64,
    pub column: &'static str,
    pub value: String,
    pub expected: String,
}

/// Every run that could be read, and those left out with why.
#[derive(Debug, Clone, Default)]
pub struct RunList {
    pub rows: Vec<RunRow>,
    pub left_out: Vec<Damaged>,
}

/// What a column must hold, said by the row's reader when a stored value
/// does not parse (a typed setting, a summary).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Expected(pub(crate) String);

/// The reader's error `e` on run `id`'s row `r`, as the column and value at
/// fault; `None` for an error that is not about a stored value.
pub(crate) fn of(r: &rusqlite::Row<'_>, id: i64, e: &rusqlite::Error) -> Option<Damaged> {
    use rusqlite::Error as E;
    let (column, expected) = match e {
        E::IntegralValueOutOfRange(i, _) => (*i, "a whole number ≥ 0 within its range".to_owned()),
        E::FromSqlConversionFailure(i, _, why) => (*i, why.to_string()),
        E::InvalidColumnType(i, _, found) => (*i, format!("a value of its type, not {found}")),
        _ => return None,
    };
    Some(Damaged {
        run: id,
        column: COLUMNS.get(column).copied().unwrap_or("?"),
        value: value_text(r, column),
        expected,
    })
}

/// A stored value as text for a message: cut to 80 bytes, control
/// characters escaped.
fn value_text(r: &rusqlite::Row<'_>, i: usize) -> String {
    let text = match r.get_ref(i) {
        Ok(ValueRef::Null) => "NULL".to_owned(),
        Ok(ValueRef::Integer(n)) => n.to_string(),
        Ok(ValueRef::Real(x)) => x.to_string(),
        Ok(ValueRef::Text(t)) => String::from_utf8_lossy(t).into_owned(),
        Ok(ValueRef::Blob(b)) => format!("a blob of {} bytes", b.len()),
        Err(_) => "?".to_owned(),
    };
    escape_controls(&cut(text, 80)).into_owned()
}

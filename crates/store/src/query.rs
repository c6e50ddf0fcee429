//! `trainbench query`: one SELECT over the store, read only. Four guards,
//! each enough on its own for writes to the file: the connection is opened
//! read-only (`SQLITE_OPEN_READ_ONLY`), `PRAGMA query_only` is on, an
//! authorizer allows nothing but reading (no ATTACH, no PRAGMA other than
//! `table_info`, no transaction), and a statement SQLite does not call
//! read-only (`sqlite3_stmt_readonly`) is refused before it runs. A progress
//! handler stops a query past its time, and at most `max_rows` rows are kept.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use crate::{invalid, open_error, usable_schema, Result, Store, StoreError, MIGRATIONS};

/// What a query is allowed, said in every refusal.
pub const QUERY_ALLOWED: &str = "one read-only statement: SELECT or WITH … SELECT over the views q_runs, q_windows, q_evals, q_telemetry, q_sweeps, q_gates (docs/query.md); nothing that writes (INSERT, UPDATE, DELETE, CREATE, DROP, ATTACH, PRAGMA, transactions)";

/// How far a query may go.
#[derive(Debug, Clone, Copy)]
pub struct QueryLimits {
    /// Rows kept; the query stops reading after one more (to say "more").
    pub max_rows: usize,
    /// The query is interrupted once it has run this long.
    pub timeout: Duration,
}

/// One value as SQLite typed it. A blob is given as its length.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob { blob_bytes: usize },
}

/// A query's answer: its columns, its rows (at most `max_rows`) and whether
/// rows were left out by that limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryAnswer {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    pub truncated: bool,
}

/// What the authorizer refused, kept to name it in the error.
type Refused = Arc<Mutex<Option<String>>>;

fn authorize(ctx: AuthContext<'_>, refused: &Refused) -> Authorization {
    let denied = match ctx.action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Function { .. } => None,
        AuthAction::Recursive => None,
        AuthAction::Pragma {
            pragma_name: "table_info" | "table_xinfo",
            ..
        } => None,
        AuthAction::Pragma { pragma_name, .. } => Some(format!("PRAGMA {pragma_name}")),
        AuthAction::Attach { .. } => Some("ATTACH".to_owned()),
        AuthAction::Detach { .. } => Some("DETACH".to_owned()),
        AuthAction::Insert { table_name } => Some(format!("INSERT into {table_name}")),
        AuthAction::Update { table_name, .. } => Some(format!("UPDATE of {table_name}")),
        AuthAction::Delete { table_name } => Some(format!("DELETE from {table_name}")),
        AuthAction::Transaction { .. } => Some("a transaction".to_owned()),
        other => Some(format!("{other:?}")),
    };
    match denied {
        None => Authorization::Allow,
        Some(what) => {
            if let Ok(mut slot) = refused.lock() {
                slot.get_or_insert(what);
            }
            Authorization::Deny
        }
    }
}

/// The database opened read-only, brought up to date first when it is older
/// than this studio (the views come with a migration; that is the one write
/// a query can cause, and only to the schema).
fn open_read_only(path: &Path) -> Result<Connection> {
    if !path.is_file() {
        return Err(StoreError::NotFound {
            what: "database",
            id: path.display().to_string(),
        });
    }
    let open = || {
        Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| StoreError::Open {
            path: path.to_owned(),
            source,
        })
    };
    let conn = open()?;
    conn.busy_timeout(crate::BUSY_TIMEOUT)?;
    let current = usable_schema(&conn, path).map_err(|e| open_error(path, e))?;
    if current < MIGRATIONS.last().map_or(0, |m| m.0) {
        drop(conn);
        drop(Store::open(path)?);
        return open();
    }
    Ok(conn)
}

/// Runs `sql` on the database at `path`, read only, within `limits`.
/// Anything that is not one read-only statement is refused as
/// [`StoreError::Invalid`] with field `sql`, as is a query that SQLite cannot
/// prepare (the message says why) or that runs past `limits.timeout`.
pub fn query_read_only(path: &Path, sql: &str, limits: QueryLimits) -> Result<QueryAnswer> {
    let mut columns = Vec::new();
    let mut rows = Vec::new();
    let truncated = query_read_only_each(
        path,
        sql,
        limits,
        |names| {
            columns = names.to_vec();
            Ok::<(), std::convert::Infallible>(())
        },
        |row| {
            rows.push(row);
            Ok(())
        },
    )?
    .unwrap_or_else(|never| match never {});
    Ok(QueryAnswer {
        columns,
        rows,
        truncated,
    })
}

/// [`query_read_only`] a row at a time, for an answer of any length: the
/// columns go to `start`, then each row to `each` as it is read (at most
/// `limits.max_rows`, and the time limit counts what they do too). Returns
/// whether rows were left out by the row limit. The outer error is the
/// query's; the inner one is the first error `start` or `each` returned,
/// after which nothing more is read.
pub fn query_read_only_each<E>(
    path: &Path,
    sql: &str,
    limits: QueryLimits,
    start: impl FnOnce(&[String]) -> std::result::Result<(), E>,
    each: impl FnMut(Vec<Cell>) -> std::result::Result<(), E>,
) -> Result<std::result::Result<bool, E>> {
    if sql.trim().is_empty() {
        return Err(invalid(
            "sql",
            "(empty)",
            format!("expected {QUERY_ALLOWED}"),
        ));
    }
    let mut conn = open_read_only(path)?;
    conn.pragma_update(None, "query_only", true)?;
    let refused: Refused = Arc::default();
    let seen = Arc::clone(&refused);
    conn.authorizer(Some(move |ctx: AuthContext<'_>| authorize(ctx, &seen)))?;
    let deadline = Instant::now() + limits.timeout;
    conn.progress_handler(1000, Some(move || Instant::now() >= deadline))?;
    let shown = trainbench_core::text::cut(sql.trim().to_owned(), 200);
    let answer = run(&conn, sql, limits.max_rows, start, each).map_err(|e| match e {
        rusqlite::Error::MultipleStatement => invalid(
            "sql",
            &shown,
            format!("it holds more than one statement; expected {QUERY_ALLOWED}"),
        ),
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::OperationInterrupted =>
        {
            invalid(
                "sql",
                &shown,
                format!(
                    "it was stopped after {} s, its time limit (timeout): narrow it (WHERE, LIMIT) or allow it more time",
                    limits.timeout.as_secs_f64()
                ),
            )
        }
        _ => match refused.lock().ok().and_then(|r| r.clone()) {
            Some(what) => invalid(
                "sql",
                &shown,
                format!("it asks for {what}; expected {QUERY_ALLOWED}"),
            ),
            None => invalid("sql", &shown, format!("SQLite says: {e}; expected {QUERY_ALLOWED}")),
        },
    });
    // Nothing else runs on this connection; the hooks go with it.
    drop(conn);
    answer
}

fn run<E>(
    conn: &Connection,
    sql: &str,
    max_rows: usize,
    start: impl FnOnce(&[String]) -> std::result::Result<(), E>,
    mut each: impl FnMut(Vec<Cell>) -> std::result::Result<(), E>,
) -> rusqlite::Result<std::result::Result<bool, E>> {
    let mut stmt = conn.prepare(sql)?;
    if !stmt.readonly() {
        // The authorizer refuses every write first; this is the last guard.
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
            Some("the statement writes".to_owned()),
        ));
    }
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let mut cursor = stmt.query([])?;
    // The first row is read before anything is handed on, so that a query
    // SQLite refuses only once it runs is an error with nothing written.
    let mut next = cursor.next()?;
    if let Err(e) = start(&columns) {
        return Ok(Err(e));
    }
    let mut kept = 0;
    while let Some(row) = next {
        if kept == max_rows {
            return Ok(Ok(true));
        }
        let cells = (0..columns.len())
            .map(|i| {
                Ok(match row.get_ref(i)? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(v) => Cell::Integer(v),
                    ValueRef::Real(v) => Cell::Real(v),
                    ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Cell::Blob {
                        blob_bytes: b.len(),
                    },
                })
            })
            .collect::<rusqlite::Result<Vec<Cell>>>()?;
        if let Err(e) = each(cells) {
            return Ok(Err(e));
        }
        kept += 1;
        next = cursor.next()?;
    }
    Ok(Ok(false))
}

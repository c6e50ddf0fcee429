//! Every stored run, read one row at a time: a listing of any length held in
//! the memory of one run (`trainbench runs --json`, the runs CSV), or
//! gathered whole where a caller needs them all at once (a table, a
//! comparison).

use trainbench_core::record::RunRow;

use crate::damaged::{Damaged, RunList};
use crate::runs::{checked_row, RUN_COLUMNS};
use crate::{Result, Store};

/// Several reads that see one state of the database (a read transaction:
/// nothing is written, and what other connections commit meanwhile is not
/// seen). The reads end when it is dropped.
pub struct Snapshot<'a> {
    _read: rusqlite::Transaction<'a>,
}

impl Store {
    /// Every run that can be read, oldest first; a damaged row is left out
    /// ([`Store::run_list`] says which and why).
    pub fn list_runs(&self) -> Result<Vec<RunRow>> {
        Ok(self.run_list()?.rows)
    }

    /// Every run that can be read, oldest first, and the runs left out
    /// because their row holds a value that cannot be used, each named
    /// with its column.
    pub fn run_list(&self) -> Result<RunList> {
        let mut list = RunList::default();
        self.each_run(|row| {
            match row {
                Ok(r) => list.rows.push(r),
                Err(d) => list.left_out.push(d),
            }
            Ok::<(), std::convert::Infallible>(())
        })?
        .unwrap_or_else(|never| match never {});
        Ok(list)
    }

    /// Hands every stored run to `each`, oldest first, one row at a time
    /// (a run whose row holds a value that cannot be used as its
    /// [`Damaged`]), so that only one run is in memory at once. The outer
    /// error is the database's; the inner one is the first error `each`
    /// returned, after which nothing more is read.
    pub fn each_run<E>(
        &self,
        mut each: impl FnMut(std::result::Result<RunRow, Damaged>) -> std::result::Result<(), E>,
    ) -> Result<std::result::Result<(), E>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs r LEFT JOIN summaries s ON s.run_id = r.id ORDER BY r.id"
        ))?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            if let Err(e) = each(checked_row(r)?) {
                return Ok(Err(e));
            }
        }
        Ok(Ok(()))
    }

    /// The runs left out of a listing (see [`Store::run_list`]), every row
    /// read but only those kept.
    pub fn damaged_runs(&self) -> Result<Vec<Damaged>> {
        let mut left_out = Vec::new();
        self.each_run(|row| {
            if let Err(d) = row {
                left_out.push(d);
            }
            Ok::<(), std::convert::Infallible>(())
        })?
        .unwrap_or_else(|never| match never {});
        Ok(left_out)
    }

    /// Starts reads that see one state of the database until the
    /// [`Snapshot`] is dropped (two passes over the runs that must agree).
    pub fn snapshot(&self) -> Result<Snapshot<'_>> {
        Ok(Snapshot {
            _read: self.conn.unchecked_transaction()?,
        })
    }
}

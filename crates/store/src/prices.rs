//! The price table cost per epoch is computed from.

use rusqlite::params;
use trainbench_core::reference::PriceRow;

use crate::{Result, Store};

impl Store {
    pub fn prices(&self) -> Result<Vec<(PriceRow, bool)>> {
        let mut stmt = self.conn.prepare(
            "SELECT offering, devices, device, usd_per_hour, usd_per_device_hour, as_of, source, edited_by_user
             FROM prices ORDER BY offering",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    PriceRow {
                        offering: r.get(0)?,
                        devices: r.get(1)?,
                        device: r.get(2)?,
                        usd_per_hour: r.get(3)?,
                        usd_per_device_hour: r.get(4)?,
                        as_of: r.get(5)?,
                        source: r.get(6)?,
                    },
                    r.get::<_, bool>(7)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    pub fn price(&self, offering: &str) -> Result<Option<PriceRow>> {
        Ok(self
            .prices()?
            .into_iter()
            .map(|p| p.0)
            .find(|p| p.offering == offering))
    }

    pub fn upsert_price(&self, p: &PriceRow, by_user: bool) -> Result<()> {
        upsert_price_on(&self.conn, p, by_user)
    }

    /// Deletes an offering, in one transaction with the check that no stored
    /// run is priced by it (their cost per epoch comes from the row).
    pub fn delete_price(&mut self, offering: &str) -> Result<PriceDeletion> {
        let tx = self.conn.transaction()?;
        let used: i64 = tx.query_row(
            "SELECT COUNT(*) FROM runs WHERE price_offering = ?1",
            [offering],
            |r| r.get(0),
        )?;
        if used > 0 {
            return Ok(PriceDeletion::InUse(used));
        }
        let gone = tx.execute("DELETE FROM prices WHERE offering = ?1", [offering])?;
        tx.commit()?;
        Ok(if gone == 0 {
            PriceDeletion::NotFound
        } else {
            PriceDeletion::Deleted
        })
    }
}

/// What deleting a price did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceDeletion {
    Deleted,
    NotFound,
    /// Kept: this many stored runs are priced by it.
    InUse(i64),
}

/// One price row written on `conn` (inside a caller's transaction too).
pub(crate) fn upsert_price_on(
    conn: &rusqlite::Connection,
    p: &PriceRow,
    by_user: bool,
) -> Result<()> {
    conn.execute(
        "INSERT INTO prices (offering, devices, device, usd_per_hour, usd_per_device_hour, as_of, source, edited_by_user)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (offering) DO UPDATE SET devices = ?2, device = ?3, usd_per_hour = ?4,
             usd_per_device_hour = ?5, as_of = ?6, source = ?7, edited_by_user = ?8",
        params![p.offering, p.devices, p.device, p.usd_per_hour, p.usd_per_device_hour, p.as_of, p.source, by_user],
    )?;
    Ok(())
}

//! The price table behind cost per epoch: listed, added and edited under one
//! rule set (`PriceRow::validate` in core), whether a row comes whole from
//! the app's settings or as a partial edit from `trainbench prices`.

use trainbench_core::reference::PriceRow;
use trainbench_store::PriceDeletion;

use crate::error::{AppError, AppResult};
use crate::workspace::Workspace;

/// A price-table row with whether a person entered it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PriceEntry {
    pub row: PriceRow,
    pub by_user: bool,
}

/// A price as a person gives it: every field but the offering may be left
/// out of an edit (the stored value stays).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceEdit {
    pub offering: String,
    pub devices: Option<i64>,
    pub device: Option<String>,
    /// The whole offering's price per hour.
    pub usd_per_hour: Option<f64>,
    /// Per device-hour; default: per hour ÷ devices.
    pub usd_per_device_hour: Option<f64>,
    pub as_of: Option<String>,
    pub source: Option<String>,
}

impl PriceEdit {
    /// The row this edit makes, over `existing` for an edit.
    fn row(&self, existing: Option<&PriceRow>) -> AppResult<PriceRow> {
        let need = |field: &str| {
            AppError::bad(
                field,
                format!(
                    "{field} is missing: expected --{} for a new offering",
                    field.replace('_', "-")
                ),
            )
        };
        let devices = match (self.devices, existing) {
            (Some(d), _) => u32::try_from(d)
                .ok()
                .filter(|&d| d >= 1)
                .ok_or_else(|| AppError::bad_input("devices", d, "a whole number ≥ 1"))?,
            (None, Some(e)) => e.devices,
            (None, None) => return Err(need("devices")),
        };
        let per_hour = match (self.usd_per_hour, existing) {
            (Some(v), _) => v,
            (None, Some(e)) => e.usd_per_hour,
            (None, None) => return Err(need("usd_per_hour")),
        };
        // A new total or device count re-derives the device-hour price
        // unless it is given too.
        let per_device = match (self.usd_per_device_hour, existing) {
            (Some(v), _) => v,
            (None, Some(e)) if self.usd_per_hour.is_none() && self.devices.is_none() => {
                e.usd_per_device_hour
            }
            (None, _) => per_hour / f64::from(devices),
        };
        let keep = |given: &Option<String>, old: Option<&String>, field: &str| {
            given
                .clone()
                .or_else(|| old.cloned())
                .ok_or_else(|| need(field))
        };
        Ok(PriceRow {
            offering: self.offering.clone(),
            devices,
            device: keep(&self.device, existing.map(|e| &e.device), "device")?,
            usd_per_hour: per_hour,
            usd_per_device_hour: per_device,
            as_of: keep(&self.as_of, existing.map(|e| &e.as_of), "as_of")?,
            source: keep(&self.source, existing.map(|e| &e.source), "source")?,
        })
    }
}

/// What `prices add` or `prices edit` did: the row stored, the one it
/// replaced, and a warning when its prices disagree with each other.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceChange {
    pub row: PriceRow,
    /// The row before an edit; `None` for an add.
    pub before: Option<PriceRow>,
    /// Said when the device-hour price is not the hourly price ÷ devices.
    pub warning: Option<String>,
}

impl PriceChange {
    fn new(row: PriceRow, before: Option<PriceRow>) -> PriceChange {
        let warning = contradiction(&row);
        PriceChange {
            row,
            before,
            warning,
        }
    }

    /// Each field an edit changed as (field, before, after); every field
    /// of an add, with an empty "before".
    pub fn changed(&self) -> Vec<(&'static str, String, String)> {
        let fields = |r: &PriceRow| {
            [
                ("devices", r.devices.to_string()),
                ("device", r.device.clone()),
                ("usd_per_hour", r.usd_per_hour.to_string()),
                ("usd_per_device_hour", r.usd_per_device_hour.to_string()),
                ("as_of", r.as_of.clone()),
                ("source", r.source.clone()),
            ]
        };
        let after = fields(&self.row);
        let before = self.before.as_ref().map(fields);
        after
            .into_iter()
            .enumerate()
            .filter_map(|(i, (field, new))| {
                let old = before.as_ref().map(|b| b[i].1.clone()).unwrap_or_default();
                (old != new).then_some((field, old, new))
            })
            .collect()
    }
}

/// A row whose device-hour price is not its hourly price ÷ its devices (by
/// more than half a per cent), said with the fields and the figures.
pub fn contradiction(row: &PriceRow) -> Option<String> {
    let derived = row.usd_per_hour / f64::from(row.devices.max(1));
    let off = (row.usd_per_device_hour - derived).abs();
    (off > 0.005 * derived.abs().max(1e-9)).then(|| {
        format!(
            "usd_per_device_hour = {} is not usd_per_hour ÷ devices = {} ÷ {} = {}: cost per epoch uses usd_per_device_hour; \
             `trainbench prices edit {:?} --usd-per-device-hour {}` makes them agree",
            row.usd_per_device_hour,
            row.usd_per_hour,
            row.devices,
            derived,
            row.offering,
            derived
        )
    })
}

impl Workspace {
    /// The price table, defaults first, with whether a person entered each row.
    pub fn prices(&self) -> AppResult<Vec<PriceEntry>> {
        Ok(self
            .store
            .prices()?
            .into_iter()
            .map(|(row, by_user)| PriceEntry { row, by_user })
            .collect())
    }

    /// Adds or replaces a whole row (the app's settings), checked first.
    pub fn save_price(&self, row: &PriceRow) -> AppResult<()> {
        row.validate()?;
        Ok(self.store.upsert_price(row, true)?)
    }

    /// Adds an offering that is not in the table yet.
    pub fn add_price(&self, edit: &PriceEdit) -> AppResult<PriceChange> {
        check_offering(&edit.offering)?;
        if self.store.price(&edit.offering)?.is_some() {
            return Err(AppError::bad(
                "offering",
                format!(
                    "offering = {} already exists: use `trainbench prices edit`",
                    edit.offering
                ),
            ));
        }
        let row = edit.row(None)?;
        self.save_price(&row)?;
        Ok(PriceChange::new(row, None))
    }

    /// Deletes an offering. Refused while stored runs are priced by it: their
    /// cost per epoch is computed from the row, and would be lost.
    pub fn delete_price(&mut self, offering: &str) -> AppResult<()> {
        match self.store.delete_price(offering)? {
            PriceDeletion::Deleted => Ok(()),
            PriceDeletion::NotFound => Err(AppError::bad(
                "offering",
                format!("offering = {offering} is not in the price table"),
            )),
            PriceDeletion::InUse(n) => Err(AppError::bad(
                "offering",
                format!(
                    "offering = {offering} prices {n} stored run(s): their cost per epoch is computed from it; delete those runs first, or edit the price instead"
                ),
            )),
        }
    }

    /// Changes the fields given of an offering in the table.
    pub fn edit_price(&self, edit: &PriceEdit) -> AppResult<PriceChange> {
        check_offering(&edit.offering)?;
        let existing = self.store.price(&edit.offering)?.ok_or_else(|| {
            AppError::bad(
                "offering",
                format!(
                    "offering = {} is not in the price table: use `trainbench prices add`",
                    edit.offering
                ),
            )
        })?;
        let row = edit.row(Some(&existing))?;
        self.save_price(&row)?;
        Ok(PriceChange::new(row, Some(existing)))
    }
}

fn check_offering(offering: &str) -> AppResult<()> {
    if offering.trim().is_empty() {
        return Err(AppError::bad_input("offering", "\"\"", "a name"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_hour_price_against_the_hourly_price_is_said_with_the_fields() {
        let mut row = PriceRow {
            offering: "lab".into(),
            devices: 4,
            device: "L40S".into(),
            usd_per_hour: 8.0,
            usd_per_device_hour: 2.0,
            as_of: "2026-11".into(),
            source: "invoice".into(),
        };
        assert_eq!(contradiction(&row), None);
        row.usd_per_device_hour = 3.0;
        let said = contradiction(&row).unwrap();
        for part in [
            "usd_per_device_hour = 3",
            "usd_per_hour ÷ devices = 8 ÷ 4 = 2",
            "--usd-per-device-hour 2",
        ] {
            assert!(said.contains(part), "{part:?} in {said}");
        }
        let change = PriceChange::new(
            row.clone(),
            Some(PriceRow {
                usd_per_device_hour: 2.0,
                ..row
            }),
        );
        assert_eq!(
            change.changed(),
            vec![("usd_per_device_hour", "2".to_owned(), "3".to_owned())]
        );
        assert!(change.warning.is_some());
    }

    #[test]
    fn an_edit_rederives_the_device_hour_only_when_the_total_or_count_changes() {
        let old = PriceRow {
            offering: "lab".into(),
            devices: 4,
            device: "L40S".into(),
            usd_per_hour: 6.0,
            usd_per_device_hour: 1.4,
            as_of: "2026-11".into(),
            source: "invoice".into(),
        };
        let edit = |e: PriceEdit| e.row(Some(&old)).expect("edit");
        let base = PriceEdit {
            offering: "lab".into(),
            ..PriceEdit::default()
        };
        assert_eq!(edit(base.clone()).usd_per_device_hour, 1.4);
        let total = edit(PriceEdit {
            usd_per_hour: Some(8.0),
            ..base.clone()
        });
        assert_eq!((total.usd_per_hour, total.usd_per_device_hour), (8.0, 2.0));
        let count = edit(PriceEdit {
            devices: Some(2),
            ..base.clone()
        });
        assert_eq!(count.usd_per_device_hour, 3.0);
        let both = edit(PriceEdit {
            usd_per_hour: Some(8.0),
            usd_per_device_hour: Some(2.5),
            ..base
        });
        assert_eq!(both.usd_per_device_hour, 2.5);
        let missing = PriceEdit {
            offering: "new".into(),
            devices: Some(1),
            ..PriceEdit::default()
        }
        .row(None)
        .unwrap_err();
        assert_eq!(missing.field(), Some("usd_per_hour"));
    }
}

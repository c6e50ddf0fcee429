//! A search's trace beside its sweep (`tunes`): the runs are the sweep's own
//! rows; the trace is rewritten after every run, so a search stopped
//! part-way (Ctrl-C, a crash) keeps what it had found.

use rusqlite::{params, OptionalExtension};

use crate::{now_unix_ms, Result, Store};

/// A search as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTune {
    pub sweep_id: i64,
    pub model: String,
    /// The objective's key (`throughput`).
    pub objective: String,
    /// The trace as the app layer wrote it (JSON).
    pub outcome_json: String,
    pub updated_unix_ms: i64,
}

impl Store {
    /// Stores the trace of the search of `t.sweep_id`, replacing the one
    /// written before.
    pub fn save_tune(&self, t: &StoredTune) -> Result<()> {
        self.conn.execute(
            "INSERT INTO tunes (sweep_id, model, objective, outcome_json, updated_unix_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(sweep_id) DO UPDATE SET outcome_json = excluded.outcome_json,
                 updated_unix_ms = excluded.updated_unix_ms",
            params![
                t.sweep_id,
                t.model,
                t.objective,
                t.outcome_json,
                now_unix_ms()
            ],
        )?;
        Ok(())
    }

    /// The search of `sweep`, if it was one.
    pub fn tune(&self, sweep: i64) -> Result<Option<StoredTune>> {
        Ok(self
            .conn
            .query_row(
                "SELECT sweep_id, model, objective, outcome_json, updated_unix_ms
                 FROM tunes WHERE sweep_id = ?1",
                params![sweep],
                |r| {
                    Ok(StoredTune {
                        sweep_id: r.get(0)?,
                        model: r.get(1)?,
                        objective: r.get(2)?,
                        outcome_json: r.get(3)?,
                        updated_unix_ms: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_stored_beside_its_sweep_and_rewritten() {
        let store = Store::open_in_memory().unwrap();
        let sweep = store.create_sweep("trainbench tune", 3, 1).unwrap();
        assert_eq!(store.tune(sweep).unwrap(), None);
        let mut t = StoredTune {
            sweep_id: sweep,
            model: "resnet_mini".into(),
            objective: "throughput".into(),
            outcome_json: "{\"ended\":\"running\"}".into(),
            updated_unix_ms: 0,
        };
        store.save_tune(&t).unwrap();
        t.outcome_json = "{\"ended\":\"finished\"}".into();
        store.save_tune(&t).unwrap();
        let back = store.tune(sweep).unwrap().unwrap();
        assert_eq!(back.outcome_json, t.outcome_json);
        assert_eq!(back.model, "resnet_mini");
        assert!(back.updated_unix_ms > 0);
        // A trace belongs to an existing sweep.
        t.sweep_id = sweep + 100;
        assert!(store.save_tune(&t).is_err());
    }
}

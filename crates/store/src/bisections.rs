//! A bisection's result beside its sweep (`bisections`): the runs are the
//! sweep's own rows; what the search found is written once, when it ends.

use rusqlite::{params, OptionalExtension};

use crate::{now_unix_ms, Result, Store};

/// A bisection as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredBisection {
    pub sweep_id: i64,
    pub framework: String,
    pub good: String,
    pub bad: String,
    /// The metric's key (`throughput`).
    pub metric: String,
    /// What it found, as the app layer wrote it (JSON).
    pub outcome_json: String,
    pub ended_unix_ms: i64,
}

impl Store {
    /// Stores what the bisection of `b.sweep_id` found (replacing nothing:
    /// a sweep has one bisection).
    pub fn save_bisection(&self, b: &StoredBisection) -> Result<()> {
        self.conn.execute(
            "INSERT INTO bisections (sweep_id, framework, good, bad, metric, outcome_json, ended_unix_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                b.sweep_id,
                b.framework,
                b.good,
                b.bad,
                b.metric,
                b.outcome_json,
                now_unix_ms()
            ],
        )?;
        Ok(())
    }

    /// The bisection of `sweep`, if it was one and has ended.
    pub fn bisection(&self, sweep: i64) -> Result<Option<StoredBisection>> {
        Ok(self
            .conn
            .query_row(
                "SELECT sweep_id, framework, good, bad, metric, outcome_json, ended_unix_ms
                 FROM bisections WHERE sweep_id = ?1",
                params![sweep],
                |r| {
                    Ok(StoredBisection {
                        sweep_id: r.get(0)?,
                        framework: r.get(1)?,
                        good: r.get(2)?,
                        bad: r.get(3)?,
                        metric: r.get(4)?,
                        outcome_json: r.get(5)?,
                        ended_unix_ms: r.get(6)?,
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
    fn a_bisection_is_stored_beside_its_sweep_once() {
        let store = Store::open_in_memory().unwrap();
        let sweep = store.create_sweep("trainbench bisect", 0, 3).unwrap();
        assert_eq!(store.bisection(sweep).unwrap(), None);
        let b = StoredBisection {
            sweep_id: sweep,
            framework: "jax".into(),
            good: "0.6.1".into(),
            bad: "0.7.1".into(),
            metric: "throughput".into(),
            outcome_json: "{}".into(),
            ended_unix_ms: 0,
        };
        store.save_bisection(&b).unwrap();
        let read = store.bisection(sweep).unwrap().unwrap();
        assert_eq!(
            (read.good.as_str(), read.metric.as_str()),
            ("0.6.1", "throughput")
        );
        assert!(read.ended_unix_ms > 0);
        assert!(
            store.save_bisection(&b).is_err(),
            "a sweep has one bisection"
        );
    }
}

//! A performance gate's verdict beside its sweep (`gates`): the runs are the
//! sweep's own rows; the verdict is written once, when the gate ends (or a
//! side could not run: verdict `error`, no ratio).

use rusqlite::{params, OptionalExtension};

use crate::{now_unix_ms, Result, Store};

/// A gate as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredGate {
    pub sweep_id: i64,
    /// What each side is, in words (`script:base.py`, `env XLA_FLAGS=…`).
    pub baseline: String,
    pub candidate: String,
    /// The slowdown allowed, a fraction (0.03).
    pub max_slowdown: f64,
    /// `pass`, `fail`, `undecided` or `error`.
    pub verdict: String,
    pub exit_code: i64,
    /// Candidate time per sample ÷ the baseline's, with its 95 % interval.
    pub ratio: Option<f64>,
    pub ci95: Option<(f64, f64)>,
    pub baseline_runs: i64,
    pub candidate_runs: i64,
    pub runs_to_decide: Option<i64>,
    /// The verdict in words (or why a side could not run).
    pub message: String,
    /// The whole outcome as the app layer wrote it (JSON), when decided.
    pub outcome_json: Option<String>,
    pub ended_unix_ms: i64,
}

impl Store {
    /// Stores the verdict of the gate of `g.sweep_id` (a sweep has one).
    pub fn save_gate(&self, g: &StoredGate) -> Result<()> {
        self.conn.execute(
            "INSERT INTO gates (sweep_id, baseline, candidate, max_slowdown, verdict, exit_code, ratio,
                 ci95_low, ci95_high, baseline_runs, candidate_runs, runs_to_decide, message,
                 outcome_json, ended_unix_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                g.sweep_id,
                g.baseline,
                g.candidate,
                g.max_slowdown,
                g.verdict,
                g.exit_code,
                g.ratio,
                g.ci95.map(|c| c.0),
                g.ci95.map(|c| c.1),
                g.baseline_runs,
                g.candidate_runs,
                g.runs_to_decide,
                g.message,
                g.outcome_json,
                now_unix_ms()
            ],
        )?;
        Ok(())
    }

    /// The gate of `sweep`, if it was one and has ended.
    pub fn gate(&self, sweep: i64) -> Result<Option<StoredGate>> {
        Ok(self
            .conn
            .query_row(
                "SELECT sweep_id, baseline, candidate, max_slowdown, verdict, exit_code, ratio,
                     ci95_low, ci95_high, baseline_runs, candidate_runs, runs_to_decide, message,
                     outcome_json, ended_unix_ms
                 FROM gates WHERE sweep_id = ?1",
                params![sweep],
                |r| {
                    let low: Option<f64> = r.get(7)?;
                    let high: Option<f64> = r.get(8)?;
                    Ok(StoredGate {
                        sweep_id: r.get(0)?,
                        baseline: r.get(1)?,
                        candidate: r.get(2)?,
                        max_slowdown: r.get(3)?,
                        verdict: r.get(4)?,
                        exit_code: r.get(5)?,
                        ratio: r.get(6)?,
                        ci95: low.zip(high),
                        baseline_runs: r.get(9)?,
                        candidate_runs: r.get(10)?,
                        runs_to_decide: r.get(11)?,
                        message: r.get(12)?,
                        outcome_json: r.get(13)?,
                        ended_unix_ms: r.get(14)?,
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
    fn a_gate_is_stored_beside_its_sweep_once_and_named_in_q_sweeps() {
        let store = Store::open_in_memory().unwrap();
        let sweep = store.create_sweep("trainbench gate", 2, 12).unwrap();
        assert_eq!(store.gate(sweep).unwrap(), None);
        let g = StoredGate {
            sweep_id: sweep,
            baseline: "script:a.py".into(),
            candidate: "script:b.py".into(),
            max_slowdown: 0.03,
            verdict: "fail".into(),
            exit_code: 1,
            ratio: Some(1.05),
            ci95: Some((1.04, 1.06)),
            baseline_runs: 3,
            candidate_runs: 3,
            runs_to_decide: None,
            message: "fail".into(),
            outcome_json: Some("{}".into()),
            ended_unix_ms: 0,
        };
        store.save_gate(&g).unwrap();
        let read = store.gate(sweep).unwrap().unwrap();
        assert_eq!((read.ratio, read.ci95), (Some(1.05), Some((1.04, 1.06))));
        assert!(read.ended_unix_ms > 0);
        assert!(store.save_gate(&g).is_err(), "a sweep has one gate");
        let kind: String = store
            .conn
            .query_row(
                "SELECT kind FROM q_sweeps WHERE sweep_id = ?1",
                [sweep],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(kind, "gate");
        let verdict: String = store
            .conn
            .query_row("SELECT verdict FROM q_gates", [], |r| r.get(0))
            .unwrap();
        assert_eq!(verdict, "fail");
    }
}

//! The searches (`trainbench tune`) a session file carries: exported when
//! the session holds every run of one, imported as a sweep of their own with
//! the trace beside it (`tunes`), the trace's run ids made this database's.

use std::collections::{BTreeSet, HashMap, HashSet};

use rusqlite::{params, Transaction};
use trainbench_core::session::{PortableRun, PortableSearch, SessionFile};
use trainbench_core::tune::method::TuneOutcome;

use crate::{now_unix_ms, Result, Store};

impl Store {
    /// The searches whose every run is among `runs`, oldest sweep first; a
    /// search with runs the session lacks stays home (its trace would name
    /// runs the file does not carry).
    pub(crate) fn portable_searches(&self, runs: &[PortableRun]) -> Result<Vec<PortableSearch>> {
        let ids: HashSet<i64> = runs.iter().map(|r| r.id).collect();
        let mut sweeps = BTreeSet::new();
        for r in runs {
            let sweep: Option<i64> = self.conn.query_row(
                "SELECT sweep_id FROM runs WHERE id = ?1",
                params![r.id],
                |x| x.get(0),
            )?;
            sweeps.extend(sweep);
        }
        let mut out = Vec::new();
        for sweep in sweeps {
            let Some(t) = self.tune(sweep)? else {
                continue;
            };
            // A trace this studio cannot read travels without (its runs do).
            let Ok(outcome) = serde_json::from_str::<TuneOutcome>(&t.outcome_json) else {
                continue;
            };
            let search = PortableSearch {
                model: t.model,
                objective: t.objective,
                outcome,
            };
            if search.run_ids().iter().all(|id| ids.contains(id)) {
                out.push(search);
            }
        }
        Ok(out)
    }
}

/// Stores each search of `file` whose runs this import added (`local`: the
/// file's run id → this database's; `added`: the file's run ids imported
/// now): a sweep holding them, and its trace with the ids made local. A
/// search whose runs were here already keeps the sweep they have.
pub(crate) fn import_searches(
    tx: &Transaction<'_>,
    file: &SessionFile,
    local: &HashMap<i64, i64>,
    added: &HashSet<i64>,
) -> Result<usize> {
    let mut stored = 0;
    for s in &file.searches {
        let ids = s.run_ids();
        if ids.is_empty() || !ids.iter().all(|id| added.contains(id)) {
            continue;
        }
        let Some(mapped) = s.with_run_ids(local) else {
            continue;
        };
        tx.execute(
            "INSERT INTO sweeps (created_unix_ms, command, configurations, repeats) VALUES (?1, ?2, ?3, 1)",
            params![
                now_unix_ms(),
                format!("trainbench tune (imported from {})", file.machine.hostname),
                i64::try_from(mapped.outcome.candidates.len()).unwrap_or(i64::MAX)
            ],
        )?;
        let sweep = tx.last_insert_rowid();
        for id in mapped.run_ids() {
            tx.execute(
                "UPDATE runs SET sweep_id = ?1 WHERE id = ?2",
                params![sweep, id],
            )?;
        }
        tx.execute(
            "INSERT INTO tunes (sweep_id, model, objective, outcome_json, updated_unix_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                sweep,
                mapped.model,
                mapped.objective,
                serde_json::to_string(&mapped.outcome)?,
                now_unix_ms()
            ],
        )?;
        stored += 1;
    }
    Ok(stored)
}

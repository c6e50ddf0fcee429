//! Saved comparison sessions: a named set of runs with a baseline and the
//! view's settings.

use rusqlite::{params, OptionalExtension, Transaction};
use trainbench_core::compare::{compare, Comparison, Grouping};
use trainbench_core::record::RunDetail;
use trainbench_core::reference::PriceRow;
use trainbench_core::session::{check_session_name, SavedSession, SessionSettings};

use crate::{invalid, now_unix_ms, Result, Store, StoreError};

fn session_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(SavedSession, String)> {
    let settings: String = r.get(4)?;
    Ok((
        SavedSession {
            id: r.get(0)?,
            uid: r.get(1)?,
            name: r.get(2)?,
            run_ids: Vec::new(),
            baseline_run_id: r.get(3)?,
            settings: SessionSettings::default(),
            created_unix_ms: r.get(5)?,
            updated_unix_ms: r.get(6)?,
            imported_from: r.get(7)?,
        },
        settings,
    ))
}

const SESSION_COLUMNS: &str = "id, uid, name, baseline_run_id, settings_json, created_unix_ms, updated_unix_ms, imported_from";

fn check_runs_exist(tx: &Transaction<'_>, run_ids: &[i64]) -> Result<()> {
    if run_ids.is_empty() {
        return Err(invalid("runs", "", "expected at least one run"));
    }
    let mut seen = std::collections::HashSet::new();
    for id in run_ids {
        if !seen.insert(id) {
            return Err(invalid("runs", id, "each run once"));
        }
        let exists: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM runs WHERE id = ?1)",
            params![id],
            |r| r.get(0),
        )?;
        if !exists {
            return Err(StoreError::NotFound {
                what: "run",
                id: id.to_string(),
            });
        }
    }
    Ok(())
}

pub(crate) fn set_session_runs(
    tx: &Transaction<'_>,
    session_id: i64,
    run_ids: &[i64],
) -> Result<()> {
    tx.execute(
        "DELETE FROM session_runs WHERE session_id = ?1",
        params![session_id],
    )?;
    for (pos, id) in run_ids.iter().enumerate() {
        tx.execute(
            "INSERT INTO session_runs (session_id, run_id, position) VALUES (?1, ?2, ?3)",
            params![session_id, id, pos as i64],
        )?;
    }
    Ok(())
}

fn check_baseline(run_ids: &[i64], baseline: Option<i64>) -> Result<()> {
    match baseline {
        Some(b) if !run_ids.contains(&b) => {
            Err(invalid("baseline", b, "expected one of the session's runs"))
        }
        _ => Ok(()),
    }
}

pub(crate) fn name_taken(tx: &Transaction<'_>, name: &str, except: Option<i64>) -> Result<bool> {
    Ok(tx
        .query_row(
            "SELECT id FROM sessions WHERE name = ?1",
            params![name],
            |r| r.get::<_, i64>(0),
        )
        .optional()?
        .is_some_and(|id| Some(id) != except))
}

/// A comparison with everything needed to show or report it.
#[derive(Debug, Clone)]
pub struct LoadedComparison {
    pub comparison: Comparison,
    /// Every compared run in full, in the order given.
    pub runs: Vec<RunDetail>,
    /// The price rows the runs' costs used (each once).
    pub prices: Vec<PriceRow>,
}

impl Store {
    /// Loads runs and compares them (see [`trainbench_core::compare::compare`]).
    pub fn load_comparison(
        &self,
        run_ids: &[i64],
        grouping: Grouping,
        baseline: Option<i64>,
    ) -> Result<LoadedComparison> {
        let runs = run_ids
            .iter()
            .map(|id| self.run_detail(*id))
            .collect::<Result<Vec<_>>>()?;
        let rows: Vec<_> = runs.iter().map(|r| r.row.clone()).collect();
        let comparison = compare(&rows, grouping, baseline)?;
        let mut prices: Vec<PriceRow> = Vec::new();
        for id in run_ids {
            let price_json: Option<String> = self.conn.query_row(
                "SELECT COALESCE(r.price_json, (SELECT json_object('offering', p.offering, 'devices', p.devices,
                     'device', p.device, 'usd_per_hour', p.usd_per_hour, 'usd_per_device_hour', p.usd_per_device_hour,
                     'as_of', p.as_of, 'source', p.source) FROM prices p WHERE p.offering = r.price_offering))
                 FROM runs r WHERE r.id = ?1",
                params![id],
                |r| r.get(0),
            )?;
            if let Some(p) = price_json {
                let p: PriceRow = serde_json::from_str(&p)?;
                if !prices.contains(&p) {
                    prices.push(p);
                }
            }
        }
        Ok(LoadedComparison {
            comparison,
            runs,
            prices,
        })
    }

    /// This database's random machine id (created by migration 3).
    pub fn machine_id(&self) -> Result<String> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'machine_id'", [], |r| {
                r.get(0)
            })?)
    }

    /// Saves a new session. Its name must be unused; its runs must exist.
    pub fn save_session(
        &mut self,
        name: &str,
        run_ids: &[i64],
        baseline: Option<i64>,
        settings: &SessionSettings,
    ) -> Result<SavedSession> {
        check_session_name(name)?;
        check_baseline(run_ids, baseline)?;
        let tx = self.conn.transaction()?;
        check_runs_exist(&tx, run_ids)?;
        if name_taken(&tx, name, None)? {
            return Err(invalid("name", name, "a name no other session has"));
        }
        let now = now_unix_ms();
        tx.execute(
            "INSERT INTO sessions (uid, name, baseline_run_id, settings_json, created_unix_ms, updated_unix_ms)
             VALUES (lower(hex(randomblob(16))), ?1, ?2, ?3, ?4, ?4)",
            params![name, baseline, serde_json::to_string(settings)?, now],
        )?;
        let id = tx.last_insert_rowid();
        set_session_runs(&tx, id, run_ids)?;
        tx.commit()?;
        self.session(id)
    }

    /// Replaces a session's runs, baseline and chart settings.
    pub fn update_session(
        &mut self,
        id: i64,
        run_ids: &[i64],
        baseline: Option<i64>,
        settings: &SessionSettings,
    ) -> Result<SavedSession> {
        check_baseline(run_ids, baseline)?;
        self.session(id)?;
        let tx = self.conn.transaction()?;
        check_runs_exist(&tx, run_ids)?;
        tx.execute(
            "UPDATE sessions SET baseline_run_id = ?2, settings_json = ?3, updated_unix_ms = ?4 WHERE id = ?1",
            params![id, baseline, serde_json::to_string(settings)?, now_unix_ms()],
        )?;
        set_session_runs(&tx, id, run_ids)?;
        tx.commit()?;
        self.session(id)
    }

    pub fn rename_session(&mut self, id: i64, name: &str) -> Result<SavedSession> {
        check_session_name(name)?;
        self.session(id)?;
        let tx = self.conn.transaction()?;
        if name_taken(&tx, name, Some(id))? {
            return Err(invalid("name", name, "a name no other session has"));
        }
        tx.execute(
            "UPDATE sessions SET name = ?2, updated_unix_ms = ?3 WHERE id = ?1",
            params![id, name, now_unix_ms()],
        )?;
        tx.commit()?;
        self.session(id)
    }

    /// Deletes a session (its runs stay).
    pub fn delete_session(&self, id: i64) -> Result<()> {
        let n = self
            .conn
            .execute("DELETE FROM sessions WHERE id = ?1", params![id])?;
        if n == 0 {
            return Err(StoreError::NotFound {
                what: "session",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    pub fn session(&self, id: i64) -> Result<SavedSession> {
        let found = self
            .conn
            .query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"),
                params![id],
                session_from_row,
            )
            .optional()?;
        let (mut s, settings) = found.ok_or_else(|| StoreError::NotFound {
            what: "session",
            id: id.to_string(),
        })?;
        self.fill_session(&mut s, &settings)?;
        Ok(s)
    }

    /// A session by name, or by id when `name_or_id` is a number no session
    /// is named.
    pub fn find_session(&self, name_or_id: &str) -> Result<SavedSession> {
        let by_name: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM sessions WHERE name = ?1",
                params![name_or_id],
                |r| r.get(0),
            )
            .optional()?;
        match (by_name, name_or_id.parse::<i64>()) {
            (Some(id), _) | (None, Ok(id)) => self.session(id),
            (None, Err(_)) => Err(StoreError::NotFound {
                what: "session",
                id: name_or_id.to_string(),
            }),
        }
    }

    fn fill_session(&self, s: &mut SavedSession, settings: &str) -> Result<()> {
        s.settings = serde_json::from_str(settings)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT run_id FROM session_runs WHERE session_id = ?1 ORDER BY position",
        )?;
        s.run_ids = stmt
            .query_map(params![s.id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(())
    }

    pub fn sessions(&self) -> Result<Vec<SavedSession>> {
        let mut out = Vec::new();
        self.each_session(|s| {
            out.push(s);
            Ok::<(), std::convert::Infallible>(())
        })?
        .unwrap_or_else(|never| match never {});
        Ok(out)
    }

    /// Every saved session, most recently changed first, handed to `each`
    /// one at a time (a listing of any length in the memory of one). The
    /// outer error is the database's; the inner one the first error `each`
    /// returned, after which nothing more is read.
    pub fn each_session<E>(
        &self,
        mut each: impl FnMut(SavedSession) -> std::result::Result<(), E>,
    ) -> Result<std::result::Result<(), E>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions ORDER BY updated_unix_ms DESC, id DESC"
        ))?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let (mut s, settings) = session_from_row(row)?;
            self.fill_session(&mut s, &settings)?;
            if let Err(e) = each(s) {
                return Ok(Err(e));
            }
        }
        Ok(Ok(()))
    }
}

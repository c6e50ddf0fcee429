//! A search for the best way to train a model (`trainbench tune`) carried
//! in a session file (version 3): its model, objective and trace — each
//! candidate, the round it reached, why it stopped, every run it made — so
//! the search reads the same where the file is imported. The trace names
//! its runs by their ids in the file (`runs[].id`); the importer gives them
//! their new ids ([`PortableSearch::with_run_ids`]).

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::validate::{check_bounded, check_line, invalid};
use super::{SessionFile, SessionFileError};
use crate::tune::method::TuneOutcome;
use crate::tune::Objective;

/// The version that added `searches`.
pub const SEARCHES_VERSION: u32 = 3;
/// Candidates a search may carry (the search itself refuses over 256).
const MAX_CANDIDATES: usize = 4096;

/// A search whose every run the file carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct PortableSearch {
    /// The model searched (as its runs name it).
    pub model: String,
    /// The objective's key (`throughput`, `memory`, `cost`,
    /// `time-to-accuracy`, `energy`).
    pub objective: String,
    /// The trace as the search left it, run ids those of the file's runs.
    pub outcome: TuneOutcome,
}

impl PortableSearch {
    /// Every run id the trace names, in its order.
    pub fn run_ids(&self) -> Vec<i64> {
        self.outcome
            .candidates
            .iter()
            .flat_map(|c| c.rounds.iter())
            .flat_map(|r| r.runs.iter().map(|t| t.run_id))
            .collect()
    }

    /// The search with each run id replaced by `ids`' (an id it lacks: `None`).
    pub fn with_run_ids(&self, ids: &HashMap<i64, i64>) -> Option<PortableSearch> {
        let mut out = self.clone();
        for c in &mut out.outcome.candidates {
            for r in &mut c.rounds {
                for t in &mut r.runs {
                    t.run_id = *ids.get(&t.run_id)?;
                }
            }
        }
        Some(out)
    }
}

impl SessionFile {
    /// Searches: only from version 3; each a known objective, its texts
    /// bounded, its figures finite, its winner and runner-up among its
    /// candidates, and every run it names one of the file's, in one search
    /// at most.
    pub(super) fn check_searches(&self) -> Result<(), SessionFileError> {
        if !self.searches.is_empty() && self.version < SEARCHES_VERSION {
            return Err(invalid(
                "searches",
                format!(
                    "is not allowed in a version {} file: expected version {SEARCHES_VERSION}",
                    self.version
                ),
            ));
        }
        let ids: HashSet<i64> = self.runs.iter().map(|r| r.id).collect();
        let mut claimed: HashMap<i64, usize> = HashMap::new();
        for (i, s) in self.searches.iter().enumerate() {
            let f = |n: &str| format!("searches[{i}].{n}");
            check_bounded(&f("model"), "searches[].model", &s.model)?;
            check_line(&f("model"), &s.model)?;
            Objective::parse(&s.objective)
                .map_err(|e| invalid(f("objective"), format!("= {:?}: {e}", s.objective)))?;
            let text = serde_json::to_string(&s.outcome).unwrap_or_default();
            check_bounded(&f("outcome"), "searches[].outcome", &text)?;
            check_outcome(&f("outcome"), &s.outcome)?;
            for id in s.run_ids() {
                if !ids.contains(&id) {
                    return Err(invalid(
                        f("outcome"),
                        format!("names run {id}, which is not one of the file's runs"),
                    ));
                }
                if let Some(other) = claimed.insert(id, i).filter(|&o| o != i) {
                    return Err(invalid(
                        f("outcome"),
                        format!("names run {id}, which searches[{other}] names too"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A trace's shape: candidates bounded, indices inside, figures finite.
fn check_outcome(field: &str, o: &TuneOutcome) -> Result<(), SessionFileError> {
    let n = o.candidates.len();
    if n == 0 || n > MAX_CANDIDATES {
        return Err(invalid(
            field,
            format!("has {n} candidates: expected 1 to {MAX_CANDIDATES}"),
        ));
    }
    for (name, index) in [("winner", o.winner), ("runner_up", o.runner_up)] {
        if let Some(k) = index.filter(|&k| k >= n) {
            return Err(invalid(
                format!("{field}.{name}"),
                format!("= {k} is not allowed: expected a candidate's index below {n}"),
            ));
        }
    }
    let mut figures: Vec<f64> = o.ratio.into_iter().collect();
    figures.extend(o.ratio_ci95.iter().flat_map(|c| [c.low, c.high]));
    for c in &o.candidates {
        for r in &c.rounds {
            figures.extend(r.value);
            figures.extend(r.ci95.iter().flat_map(|c| [c.low, c.high]));
            figures.extend(
                r.runs
                    .iter()
                    .flat_map(|t| t.value.into_iter().chain([t.started_s])),
            );
        }
    }
    if let Some(x) = figures.iter().find(|x| !x.is_finite()) {
        return Err(invalid(
            field,
            format!("holds {x}: expected finite figures"),
        ));
    }
    Ok(())
}

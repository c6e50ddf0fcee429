//! What an item of a session gives: how it ended, its figures and
//! projections, and the batch a later item takes from it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::items::{Batch, Item, What};
use trainbench_app::error::AppResult;
use trainbench_app::workspace::Workspace;

/// How an item ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It ran to its end.
    Ran,
    /// It ran and failed (the reason says how).
    Failed,
    /// The budget ended while it ran: stopped.
    Cut,
    /// It did not start (the reason says why).
    Skipped,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ran => "ran",
            Status::Failed => "failed",
            Status::Cut => "cut",
            Status::Skipped => "skipped",
        }
    }
}

/// One item's result.
#[derive(Debug, Clone, Serialize)]
pub struct ItemResult {
    pub id: String,
    pub title: String,
    pub status: Status,
    pub reason: Option<String>,
    /// Seconds into the session when it started, and how long it took.
    pub started_s: Option<f64>,
    pub seconds: f64,
    /// The studio runs it stored (probes are not runs).
    pub run_ids: Vec<i64>,
    pub batch: Option<i64>,
    pub samples_per_s: Option<f64>,
    /// A studio run's 95 % interval of that rate, from its steady windows
    /// (`[low, high]`; docs/metrics.md); none for a peer.
    pub samples_per_s_ci95: Option<[f64; 2]>,
    pub mfu: Option<f64>,
    pub params: Option<u64>,
    /// A peer's own report (`python -m trainbench_peers`).
    pub peer: Option<Value>,
    /// A peer's studio ÷ peer ratio (or a studio item's ÷ the one it is
    /// held against), or why there is none.
    pub ratio: Option<f64>,
    /// What the ratio divides: `studio ÷ peer`, or `÷ vit-eager`.
    pub ratio_of: Option<String>,
    pub ratio_note: Option<String>,
    /// The run projected to the twin GPU (to two threads when rehearsing).
    pub projected: Vec<ProjectedTo>,
    /// A search's outcome (its figures above are its winner's last run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tune: Option<Searched>,
}

/// What a search found, as a session keeps it.
#[derive(Debug, Clone, Serialize)]
pub struct Searched {
    /// Its sweep in the session's database (and session file).
    pub sweep_id: i64,
    /// The winner's label (`pytorch · amp-bf16 · b1024`), if any.
    pub winner: Option<String>,
    /// The search's verdict: the winner against the runner-up with the
    /// ratio's 95 % interval, or a tie, or why there is no winner.
    pub verdict: String,
    /// How it ended: `converged`, `budget`, `cancelled`, …
    pub ended: String,
    /// Candidates that ran, and those refused before running.
    pub candidates: usize,
    pub refused: usize,
    /// The best single configuration measured before, which `ratio`
    /// divides by (`None`: none at this model, precision and size).
    pub best_before: Option<super::best::Best>,
}

impl ItemResult {
    pub(super) fn new(item: &Item, status: Status, reason: Option<String>) -> ItemResult {
        ItemResult {
            id: item.id.clone(),
            title: item.title.clone(),
            status,
            reason,
            started_s: None,
            seconds: 0.0,
            run_ids: Vec::new(),
            batch: None,
            samples_per_s: None,
            samples_per_s_ci95: None,
            mfu: None,
            params: None,
            peer: None,
            ratio: None,
            ratio_of: None,
            ratio_note: None,
            projected: Vec::new(),
            tune: None,
        }
    }

    /// The batch, parameters, rate with its interval and MFU of stored run `id`.
    pub(super) fn take_figures(&mut self, ws: &Workspace, id: i64) -> AppResult<()> {
        let row = ws.run(id)?;
        self.batch = Some(row.batch_size as i64);
        self.params = row.param_count;
        if let Some(sum) = &row.summary {
            self.samples_per_s = sum.throughput_samples_per_s;
            self.samples_per_s_ci95 = sum.throughput_ci95.map(|i| [i.low, i.high]);
            self.mfu = sum.mfu;
        }
        Ok(())
    }
}

/// A run projected to another device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectedTo {
    pub to: String,
    pub low: f64,
    pub mid: f64,
    pub high: f64,
}

/// The batch an item runs at: fixed, searched, or found by an earlier item
/// (a search's batches are its space's: `Batch::Fixed` of the first).
pub fn batch_of(item: &Item, done: &[ItemResult]) -> Result<Batch, String> {
    let batch = match &item.what {
        What::Studio { batch, .. } | What::Peer { batch, .. } => batch,
        What::Tune(space) => {
            return Ok(Batch::Fixed(
                space.batch_size.first().copied().unwrap_or_default(),
            ))
        }
    };
    match batch {
        Batch::FoundBy(id) => match done.iter().find(|r| &r.id == id) {
            Some(ItemResult {
                status: Status::Ran,
                batch: Some(b),
                ..
            }) => Ok(Batch::Fixed(*b)),
            Some(r) => Err(format!(
                "needs the batch found by {id}, which {}",
                r.status.as_str()
            )),
            None => Err(format!(
                "needs the batch found by {id}, which is not in this session"
            )),
        },
        other => Ok(other.clone()),
    }
}

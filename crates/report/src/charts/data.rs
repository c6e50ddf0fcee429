//! What the charts are drawn from, and the points of the time charts.

use trainbench_core::compare::{CompareEntry, Comparison};
use trainbench_core::record::RunDetail;
use trainbench_core::session::ChartKind;

/// What the charts are drawn from: the comparison and every run it holds.
#[derive(Debug, Clone, Copy)]
pub struct ChartData<'a> {
    pub comparison: &'a Comparison,
    pub runs: &'a [RunDetail],
    /// Entry keys not to draw.
    pub hidden: &'a [String],
}

impl ChartData<'_> {
    /// The entries not hidden, with their positions in the comparison.
    pub(crate) fn visible(&self) -> impl Iterator<Item = (usize, &CompareEntry)> {
        self.comparison
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| !self.hidden.contains(&e.key))
    }

    fn run(&self, id: i64) -> Option<&RunDetail> {
        self.runs.iter().find(|r| r.row.id == id)
    }
}

/// A curve of one run over wall time since the start of training.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub entry: usize,
    pub run_id: i64,
    pub points: Vec<(f64, f64)>,
    /// The training step of each point (a window's last step, an
    /// evaluation's step), for curves drawn against steps.
    pub steps: Vec<u64>,
    /// When the run's first steady window began, seconds since training
    /// started: curves drawn from there line up runs whose warm-up or
    /// compilation took different times. `None` before a summary.
    pub steady_from_s: Option<f64>,
}

/// A window's last step.
fn last_step(w: &trainbench_core::record::StoredWindow) -> u64 {
    w.first_step + w.steps.saturating_sub(1)
}

fn train_start_ns(r: &RunDetail) -> Option<u64> {
    r.hello
        .as_ref()
        .and_then(|h| h.get("train_start_ns"))
        .and_then(serde_json::Value::as_u64)
        .or_else(|| r.windows.first().map(|w| w.start_ns))
}

/// The points of a time chart (x: seconds since training started): window
/// throughput (samples/s) or mean loss at each window's end, or validation
/// accuracy (%) at each evaluation.
pub fn curves(data: &ChartData<'_>, kind: ChartKind) -> Vec<Curve> {
    let mut out = Vec::new();
    for (i, e) in data.visible() {
        for id in &e.run_ids {
            let Some(r) = data.run(*id) else { continue };
            let Some(t0) = train_start_ns(r) else {
                continue;
            };
            let at = |ns: u64| ns.saturating_sub(t0) as f64 / 1e9;
            let points: Vec<(f64, f64, u64)> = match kind {
                ChartKind::ThroughputOverTime => r
                    .windows
                    .iter()
                    .filter(|w| w.end_ns > w.start_ns)
                    .map(|w| {
                        (
                            at(w.end_ns),
                            w.samples as f64 / ((w.end_ns - w.start_ns) as f64 / 1e9),
                            last_step(w),
                        )
                    })
                    .collect(),
                ChartKind::LossOverTime => r
                    .windows
                    .iter()
                    .map(|w| (at(w.end_ns), w.loss_mean, last_step(w)))
                    .collect(),
                ChartKind::AccuracyOverTime => r
                    .evals
                    .iter()
                    .map(|e| (e.elapsed_s, e.accuracy * 100.0, e.step))
                    .collect(),
                _ => Vec::new(),
            };
            let points: Vec<(f64, f64, u64)> = points
                .into_iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .collect();
            if !points.is_empty() {
                let warmup = r.row.summary.as_ref().map(|s| s.windows_warmup);
                out.push(Curve {
                    entry: i,
                    run_id: *id,
                    points: points.iter().map(|p| (p.0, p.1)).collect(),
                    steps: points.iter().map(|p| p.2).collect(),
                    steady_from_s: warmup
                        .and_then(|n| r.windows.get(n))
                        .map(|w| at(w.start_ns)),
                });
            }
        }
    }
    out
}

//! What the winner of a search means for a real training: what an epoch
//! takes and costs here (measured, from the winner's run), and the winner
//! projected on every GPU of the peak table (labelled projected: nothing
//! there was measured; `trainbench project` explains each method).

use serde::Serialize;
use trainbench_core::reference::gpu_peaks;

use crate::projection::{project_detail, Projected, Target};
use crate::workspace::Workspace;

/// The winner's epoch here, and on other GPUs as projected.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Outlook {
    /// The winner's run the figures come from.
    pub run_id: i64,
    /// Seconds per epoch here, from the run's measured throughput over its
    /// epoch (`epoch_basis` says which, and whether its size is a default).
    pub epoch_s: Option<f64>,
    /// Which epoch: the data set's, or the size asked for.
    pub epoch_basis: Option<String>,
    /// At the price the search was given, when one was.
    pub cost_per_epoch_usd: Option<f64>,
    /// The winner on each GPU of the peak table: projected, never measured.
    pub projected: Vec<Projected>,
    /// GPUs not projected, with why.
    pub not_projected: Vec<String>,
}

/// The outlook of run `run_id` (the winner's last measured run).
pub(super) fn outlook(ws: &Workspace, run_id: i64) -> Option<Outlook> {
    let detail = ws.run_detail(run_id).ok()?;
    let summary = detail.row.summary.as_ref();
    let mut projected = Vec::new();
    let mut not_projected = Vec::new();
    for gpu in gpu_peaks() {
        match project_detail(ws, &detail, &Target::Gpu(gpu.device.clone())) {
            Ok(p) => projected.push(p),
            Err(e) => not_projected.push(format!("{}: {e}", gpu.device)),
        }
    }
    Some(Outlook {
        run_id,
        epoch_s: summary.and_then(|s| s.epoch_time_s),
        epoch_basis: summary.and_then(|s| s.epoch_basis.clone()),
        cost_per_epoch_usd: summary.and_then(|s| s.cost_per_epoch_usd),
        projected,
        not_projected,
    })
}

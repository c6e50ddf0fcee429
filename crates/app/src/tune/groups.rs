//! The groups of `tune --batch-size max`: one largest-batch search per
//! framework × compile mode × precision, and the batches a search's result
//! gives (the largest, its half, its quarter).

use trainbench_core::tune::space::FrameworkAxes;

use crate::sweep::{PlannedConfig, SweepRequest};

/// How many batches a group found gives: the largest, its half, its
/// quarter.
pub const HALVES: usize = 3;

/// One largest-batch search the plan waits on.
#[derive(Debug, Clone)]
pub struct BatchGroup {
    /// Single-valued but for the batch (`batch_max`) and the threads.
    pub request: SweepRequest,
    /// The configuration planned with its batch search.
    pub config: PlannedConfig,
    /// The thread counts each batch found runs at (`None`: the
    /// framework's own choice).
    pub threads: Vec<Option<i64>>,
}

/// The batch found and its halves, largest first, at least 1, distinct.
pub fn halves(largest: u32) -> Vec<i64> {
    let mut out: Vec<i64> = (0..HALVES)
        .map(|k| i64::from(largest >> k))
        .filter(|&b| b >= 1)
        .collect();
    out.dedup();
    out
}

/// A share's thread counts, each a candidate's (`None`: the framework's
/// own choice, on a GPU).
pub fn thread_choices(share: &FrameworkAxes) -> Vec<Option<i64>> {
    if share.threads.is_empty() {
        vec![None]
    } else {
        share.threads.iter().copied().map(Some).collect()
    }
}

/// `reqs`, each once per value of `values` with `set` applied to it;
/// unchanged when `values` is empty (the run's own setting stands).
fn expand<T>(
    reqs: Vec<SweepRequest>,
    values: &[T],
    set: impl Fn(&mut SweepRequest, &T),
) -> Vec<SweepRequest> {
    if values.is_empty() {
        return reqs;
    }
    let mut out = Vec::with_capacity(reqs.len() * values.len());
    for r in reqs {
        for v in values {
            let mut one = r.clone();
            set(&mut one, v);
            out.push(one);
        }
    }
    out
}

/// Each request once per device count, loader-worker count and cuDNN mode
/// of the share (those axes given; else the run's own).
pub fn with_knobs(reqs: Vec<SweepRequest>, share: &FrameworkAxes) -> Vec<SweepRequest> {
    let reqs = expand(reqs, &share.devices, |r, &d| r.devices = vec![d]);
    let reqs = expand(reqs, &share.loader_workers, |r, &w| {
        r.loader_workers = Some(w);
    });
    expand(reqs, &share.cudnn_benchmark, |r, &on| {
        r.cudnn_benchmark = vec![on];
    })
}

/// One framework's groups: a request per compile mode × precision (× the
/// knobs given), its batch to be searched; the threads each found batch
/// runs at.
pub fn group_requests(
    base: &SweepRequest,
    share: &FrameworkAxes,
) -> Vec<(SweepRequest, Vec<Option<i64>>)> {
    let threads = thread_choices(share);
    let mut out = Vec::new();
    for compile in &share.compile {
        for precision in &share.precision {
            let request = SweepRequest {
                framework: vec![share.framework.clone()],
                compile: vec![compile.clone()],
                precision: vec![precision.clone()],
                batch_size: Vec::new(),
                batch_max: true,
                // Memory hardly depends on the thread count: the search
                // probes at the first, each batch found runs at every one.
                threads: threads.first().copied().flatten().into_iter().collect(),
                repeats: 1,
                ..base.clone()
            };
            for r in with_knobs(vec![request], share) {
                out.push((r, threads.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_found_gives_itself_its_half_and_its_quarter() {
        assert_eq!(halves(256), [256, 128, 64]);
        assert_eq!(halves(3), [3, 1]);
        assert_eq!(halves(1), [1]);
    }
}

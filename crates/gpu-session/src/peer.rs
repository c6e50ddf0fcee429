//! Peer items: a plain loop of another library (`python -m
//! trainbench_peers`) stopped at the budget's end, and the ratio of two
//! throughputs measured alike (studio ÷ peer, or the libtorch worker ÷
//! PyTorch eager).

use std::time::Instant;

use serde_json::Value;

use super::items::{Batch, Item, What};
use super::result::{batch_of, ItemResult, Status};
use super::{write, Session};

/// A peer item: `python -m trainbench_peers` in the PyTorch environment's
/// interpreter, stopped at the budget's end.
pub(super) async fn peer(
    s: &Session,
    item: &Item,
    done: &[ItemResult],
    end: Instant,
    tell: &mut dyn FnMut(&str),
) -> ItemResult {
    let Ok(Batch::Fixed(batch)) = batch_of(item, done) else {
        return ItemResult::new(item, Status::Failed, Some("no batch".into()));
    };
    let What::Peer { of, .. } = &item.what else {
        return ItemResult::new(item, Status::Failed, Some("not a peer item".into()));
    };
    let studio = done.iter().find(|r| &r.id == of);
    let out = match write::peer_command(s, item, batch) {
        Ok(cmd) => run_until(cmd, end).await,
        Err(e) => Err(e),
    };
    let mut r = ItemResult::new(item, Status::Ran, None);
    r.batch = Some(batch);
    match out {
        Ok((json, log)) => {
            for line in log.lines().filter(|l| !l.trim().is_empty()).take(20) {
                tell(&format!("  {line}"));
            }
            r.samples_per_s = json["samples_per_s"].as_f64();
            r.params = json["params"].as_u64();
            r.peer = Some(json);
        }
        Err(e) => {
            r.status = if Instant::now() >= end {
                Status::Cut
            } else {
                Status::Failed
            };
            r.reason = Some(e);
            return r;
        }
    }
    if let Some(st) = studio {
        (r.ratio, r.ratio_note) = ratio(st, &r);
        r.ratio_of = Some("studio ÷ peer".into());
    }
    r
}

/// Studio ÷ peer (or the libtorch worker ÷ PyTorch eager), only for the
/// same model size and batch. An item that did not run has no ratio and no
/// note beside its own reason.
pub(super) fn ratio(studio: &ItemResult, peer: &ItemResult) -> (Option<f64>, Option<String>) {
    let (Some(a), Some(b)) = (studio.samples_per_s, peer.samples_per_s) else {
        return (None, None);
    };
    let batch = |b: Option<i64>| b.map_or("unknown".to_owned(), |b| b.to_string());
    match (studio.params, peer.params) {
        (Some(x), Some(y)) if x != y => (
            None,
            Some(format!("not comparable: {x} parameters against {y}")),
        ),
        _ if studio.batch != peer.batch => (
            None,
            Some(format!(
                "not comparable: batch {} against {}",
                batch(studio.batch),
                batch(peer.batch)
            )),
        ),
        _ if b > 0.0 => (Some(a / b), None),
        _ => (None, Some("the other side's throughput is 0".into())),
    }
}

/// Runs a command to its end or the budget's, its last stdout line parsed as
/// JSON; the error holds the end of what it said.
async fn run_until(
    mut cmd: tokio::process::Command,
    end: Instant,
) -> Result<(Value, String), String> {
    cmd.kill_on_drop(true)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start the peer: {e}"))?;
    let left = end.saturating_duration_since(Instant::now());
    let out = match tokio::time::timeout(left, child.wait_with_output()).await {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => return Err(format!("the peer did not end: {e}")),
        Err(_) => return Err("stopped: the budget ended while it ran".into()),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail = |t: &str| {
        t.chars()
            .rev()
            .take(1500)
            .collect::<String>()
            .chars()
            .rev()
            .collect::<String>()
    };
    if !out.status.success() {
        return Err(format!(
            "the peer exited with {}: {}",
            out.status,
            tail(&stderr).trim()
        ));
    }
    let last = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'));
    match last.and_then(|l| serde_json::from_str::<Value>(l).ok()) {
        Some(v) => Ok((v, format!("{stderr}"))),
        None => Err(format!(
            "the peer printed no result: {}",
            tail(&stdout).trim()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::items::plan;
    use crate::result::Status;
    use trainbench_app::execute;

    /// A ratio only between two items that ran at the same batch; a failed
    /// item gets no note beside its own reason, and a note says batches as
    /// numbers (a fold once wrote "batch None against Some(64)").
    #[test]
    fn ratios_need_two_runs_at_one_batch() {
        let items = plan(false);
        let ran = |i: usize, batch: i64, sps: f64| {
            let mut r = ItemResult::new(&items[i], Status::Ran, None);
            (r.batch, r.samples_per_s, r.params) = (Some(batch), Some(sps), Some(86));
            r
        };
        let failed = ItemResult::new(&items[1], Status::Failed, Some("no libtorch".into()));
        assert_eq!(ratio(&failed, &ran(0, 64, 2000.0)), (None, None));
        assert_eq!(ratio(&ran(0, 64, 2000.0), &failed), (None, None));
        let (r, note) = ratio(&ran(1, 64, 1000.0), &ran(0, 64, 2000.0));
        assert_eq!((r, note), (Some(0.5), None));
        let (r, note) = ratio(&ran(1, 32, 1000.0), &ran(0, 64, 2000.0));
        assert_eq!(r, None);
        assert_eq!(note.as_deref(), Some("not comparable: batch 32 against 64"));
    }

    #[test]
    fn a_peer_still_running_when_the_budget_ends_is_stopped() {
        let rt = execute::runtime().unwrap();
        rt.block_on(async {
            let mut cmd = tokio::process::Command::new("sleep");
            cmd.arg("60");
            let began = Instant::now();
            let r = run_until(cmd, Instant::now() + Duration::from_millis(200)).await;
            assert!(r.unwrap_err().contains("the budget ended"));
            assert!(began.elapsed() < Duration::from_secs(50));
        });
    }

    #[test]
    fn a_ratio_needs_the_same_model_and_batch() {
        let item = &super::super::items::plan(true)[0];
        let with = |rate: f64, params: u64, batch: i64| {
            let mut r = ItemResult::new(item, Status::Ran, None);
            (r.samples_per_s, r.params, r.batch) = (Some(rate), Some(params), Some(batch));
            r
        };
        assert_eq!(
            ratio(&with(90.0, 10, 8), &with(100.0, 10, 8)),
            (Some(0.9), None)
        );
        let (x, note) = ratio(&with(90.0, 10, 8), &with(100.0, 11, 8));
        assert!(x.is_none() && note.unwrap().contains("10 parameters against 11"));
        let (x, note) = ratio(&with(90.0, 10, 8), &with(100.0, 10, 16));
        assert!(x.is_none() && note.unwrap().contains("batch"));
    }
}

//! A search item: the application's `tune` (the same plan, checks, runs,
//! stored sweep and trace as `trainbench tune`) over the item's space,
//! within its allowance: no run starts after [`BUDGET_SHARE`] of it, and
//! the run under way at its end (or at the session's) is stopped. The
//! winner's last run gives the item's figures; its rate is then held
//! against the best single configuration measured before ([`super::best`]).

use std::time::Duration;

use serde_json::Value;
use tokio::runtime::Runtime;
use tokio::sync::watch;
use trainbench_app::error::AppResult;
use trainbench_app::host::Host;
use trainbench_app::sweep::SweepRequest;
use trainbench_app::tune::{last_measured, plan_tune, Told, TunePlan, TuneRequest};
use trainbench_app::workspace::Workspace;
use trainbench_core::tune::space::Axes;
use trainbench_core::tune::Ended;
use trainbench_runner::RunnerOptions;

use super::best::{self, Best};
use super::items::{Item, What};
use super::result::{ItemResult, Searched, Status};
use super::tune_items::{Space, BUDGET_SHARE};
use super::Session;

/// A stop switch that turns on at `deadline` or when `outer` does (a switch
/// whose sender is gone never turns on), and the task that turns it.
pub(super) fn stop_at(
    rt: &tokio::runtime::Runtime,
    deadline: tokio::time::Instant,
    outer: &watch::Receiver<bool>,
) -> (watch::Receiver<bool>, tokio::task::JoinHandle<()>) {
    let (tx, stop) = watch::channel(false);
    let mut outer = outer.clone();
    let task = rt.spawn(async move {
        let outer_stops = async {
            if outer.wait_for(|c| *c).await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => {}
            () = outer_stops => {}
        }
        let _ = tx.send(true);
    });
    (stop, task)
}

/// The search's request: the space's axes (the session's frameworks among
/// them), the probe's length, throughput, the budget.
fn request(s: &Session, item: &Item, space: &Space) -> TuneRequest {
    let base = SweepRequest {
        model: vec![space.model.clone()],
        device: Some(s.device.clone()),
        steps: Some(space.probe_steps),
        window_steps: Some(space.window_steps),
        image_size: space.image_size,
        seq_len: space.seq_len,
        ..SweepRequest::default()
    };
    let axes = Axes {
        framework: space
            .frameworks
            .iter()
            .filter_map(|k| s.framework(*k).map(str::to_owned))
            .collect(),
        compile: space.compile.clone(),
        precision: vec![space.precision.clone()],
        batch_size: space.batch_size.clone(),
        threads: s.lengths.threads.into_iter().collect(),
        ..Axes::default()
    };
    let budget = (item.allowance_s * BUDGET_SHARE).floor().max(1.0);
    TuneRequest {
        base,
        axes,
        objective: "throughput".into(),
        budget: Some(format!("{budget:.0}s")),
        confirm_repeats: Some(space.confirm_repeats),
    }
}

/// Where a search's runs go: the session's runtime, and its stop (the
/// budget's end, a cancel).
pub(super) struct On<'a> {
    pub rt: &'a Runtime,
    pub stop: &'a watch::Receiver<bool>,
}

/// Runs a search item on the session's runtime; the session's stop or the
/// item's own allowance ends it.
pub(super) fn tune(
    ws: &mut Workspace,
    host: &Host,
    s: &Session,
    item: &Item,
    done: &[ItemResult],
    on: On<'_>,
    tell: &mut dyn FnMut(&str),
) -> AppResult<ItemResult> {
    let On { rt, stop } = on;
    let What::Tune(space) = &item.what else {
        return Ok(ItemResult::new(
            item,
            Status::Failed,
            Some("not a search".into()),
        ));
    };
    let mut plan = match plan_tune(&request(s, item, space), host) {
        Ok(p) => p,
        Err(e) => return Ok(ItemResult::new(item, Status::Failed, Some(e.to_string()))),
    };
    // The item's stop: its allowance's end or the session's stop.
    let end = tokio::time::Instant::now() + Duration::from_secs_f64(item.allowance_s);
    let (item_stop, stopper) = stop_at(rt, end, stop);
    // The search's lines said with the item's indent.
    let mut shell = Told {
        rt,
        stop: item_stop,
        opts: RunnerOptions {
            silence_timeout: Duration::from_secs_f64(s.timeout_s),
            ..RunnerOptions::default()
        },
        say: |line: String| tell(&format!("  {line}")),
    };
    let command = format!("trainbench gpu-session (item {})", item.id);
    let tuned = ws.tune(host, &mut plan, &command, &mut shell);
    stopper.abort();
    let tuned = match tuned {
        Ok(t) => t,
        Err(e) => return Ok(ItemResult::new(item, Status::Failed, Some(e.to_string()))),
    };
    let o = &tuned.outcome;
    let winner_run = last_measured(o, o.winner);
    let mut r = ItemResult::new(item, Status::Ran, None);
    if winner_run.is_none() {
        r.status = Status::Failed;
        r.reason = Some(o.verdict.clone());
    }
    if o.ended == Ended::Cancelled && *stop.borrow() {
        r.status = Status::Cut;
    }
    // The winner's run first: the projections and the figures are its.
    r.run_ids = winner_run.into_iter().collect();
    r.run_ids
        .extend(tuned.run_ids.iter().filter(|id| Some(**id) != winner_run));
    if let Some(id) = winner_run {
        r.take_figures(ws, id)?;
    }
    let best_before = best_before(s, &best::Key::of(space), done);
    let winner = o
        .winner
        .and_then(|w| o.candidates.get(w))
        .map(|c| c.label.clone());
    hold_against(&mut r, &o.verdict, best_before.as_ref(), &plan);
    r.tune = Some(Searched {
        sweep_id: tuned.sweep_id,
        winner,
        verdict: o.verdict.clone(),
        ended: o.ended.words().to_owned(),
        candidates: o
            .candidates
            .iter()
            .filter(|c| c.round_reached.is_some())
            .count(),
        refused: plan.unsupported.len(),
        best_before,
    });
    Ok(r)
}

/// The winner's rate ÷ the best single configuration's (at one model,
/// precision and size: the ratio of their MFUs), with a note giving the
/// search's verdict and that configuration.
fn hold_against(r: &mut ItemResult, verdict: &str, best: Option<&Best>, plan: &TunePlan) {
    let Some(rate) = r.samples_per_s.filter(|_| r.status == Status::Ran) else {
        return;
    };
    let Some(best) = best else {
        r.ratio_note = Some(format!(
            "search: {verdict}. No single configuration of {} at this precision and size was measured before on this device",
            plan.model
        ));
        return;
    };
    r.ratio = Some(rate / best.samples_per_s);
    r.ratio_of = Some(format!("÷ best single configuration, {}", best.words()));
    let mfu =
        |m: Option<f64>| m.map_or_else(|| "no MFU".into(), |m| format!("MFU {:.1} %", 100.0 * m));
    let mfus = if r.mfu.is_none() && best.mfu.is_none() {
        " (no MFU: no device peak on record here)".to_owned()
    } else {
        format!(": the winner's {} to its {}", mfu(r.mfu), mfu(best.mfu))
    };
    r.ratio_note = Some(format!(
        "search: {verdict}. Against the best single configuration before, {} at {:.1} samples/s{}{mfus}",
        best.words(),
        best.samples_per_s,
        best.batch.map_or_else(String::new, |b| format!(", batch {b}")),
    ));
}

/// The best single configuration before a search: of this session's items
/// so far, or the record's that the session was prepared with
/// ([`Session::earlier_best`]).
fn best_before(s: &Session, key: &best::Key, done: &[ItemResult]) -> Option<Best> {
    let items: Vec<Value> = s
        .items
        .iter()
        .filter(|i| matches!(i.what, What::Studio { .. }))
        .filter_map(|i| serde_json::to_value(i).ok())
        .collect();
    let results: Vec<Value> = done
        .iter()
        .filter(|r| r.status == Status::Ran)
        .filter_map(|r| serde_json::to_value(r).ok())
        .collect();
    let earlier = s
        .earlier_best
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, b)| b.clone());
    best::faster(best::best_of(key, &items, &results, None), earlier)
}

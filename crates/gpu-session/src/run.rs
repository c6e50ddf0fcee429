//! The session's clock: before each item, what is left of the budget decides
//! whether it starts; an item still running when the budget ends (less the
//! reserve for the outputs) is stopped and stored as cut; the outputs are
//! rewritten after every item.

use std::time::{Duration, Instant};

use tokio::sync::watch;
use trainbench_core::summary::RunStatus;
use trainbench_runner::RunnerOptions;

use super::items::{Batch, Item, What};
use super::result::{batch_of, ItemResult, Status};
use super::{write, Session};
use trainbench_app::batch_words::Narrated;
use trainbench_app::error::AppResult;
use trainbench_app::execute::{self, Silent};
use trainbench_app::host::Host;
use trainbench_app::sweep::{plan_sweep, SweepRequest};
use trainbench_app::workspace::Workspace;

/// What the session did and wrote.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub results: Vec<ItemResult>,
    pub written: write::Written,
}

/// Runs the session's items in order within its budget on `rt` (a shell's
/// runtime, where its Ctrl-C task runs too); `say` gets a line for each
/// step (they are kept in session.log too). `cancel` stops it as the end of
/// the budget does.
pub fn run(
    rt: &tokio::runtime::Runtime,
    ws: &mut Workspace,
    host: &Host,
    s: &Session,
    cancel: watch::Receiver<bool>,
    say: &mut dyn FnMut(&str),
) -> AppResult<Outcome> {
    let start = Instant::now();
    let end = start + Duration::from_secs_f64((s.budget_s - s.reserve_s).max(0.0));
    let mut log = write::Log::open(&s.out_dir.join("session.log"));
    let mut tell = |line: &str| {
        log.line(line);
        say(line);
    };
    tell(&format!(
        "gpu-session: {} items, budget {:.0} s ({:.0} s kept for the outputs), on {}",
        s.items.len(),
        s.budget_s,
        s.reserve_s,
        if s.rehearse {
            "the CPU (rehearsal: small models)".to_owned()
        } else {
            s.gpus
                .first()
                .map_or_else(|| s.device.clone(), |g| g.name.clone())
        }
    ));
    if let Some(order) = &s.order {
        tell(&format!("gpu-session: {order}"));
    }
    // The budget's end stops what runs, as a cancel does.
    let (stop, _) = super::tuned::stop_at(rt, tokio::time::Instant::from_std(end), &cancel);

    let mut results: Vec<ItemResult> = Vec::new();
    for item in &s.items {
        // Lets a Ctrl-C or the budget's end that came meanwhile be seen.
        rt.block_on(tokio::task::yield_now());
        let left = end.saturating_duration_since(Instant::now()).as_secs_f64();
        let mut r = match why_not(s, item, &results, left, *cancel.borrow()) {
            Some(why) => ItemResult::new(item, Status::Skipped, Some(why)),
            None => {
                tell(&format!(
                    "{}: {} (allowed {:.0} s, {left:.0} s left)",
                    item.id, item.title, item.allowance_s
                ));
                let began = Instant::now();
                let mut r = match &item.what {
                    What::Studio { .. } => {
                        rt.block_on(studio(ws, host, s, item, &results, stop.clone(), &mut tell))?
                    }
                    What::Peer { .. } => {
                        rt.block_on(super::peer::peer(s, item, &results, end, &mut tell))
                    }
                    What::Tune(_) => {
                        let on = super::tuned::On { rt, stop: &stop };
                        super::tuned::tune(ws, host, s, item, &results, on, &mut tell)?
                    }
                };
                held_against(&mut r, item, &results);
                r.projected = super::twins::project(ws, s, &r);
                r.started_s = Some((began - start).as_secs_f64());
                r.seconds = began.elapsed().as_secs_f64();
                r
            }
        };
        if r.status == Status::Failed && *stop.borrow() {
            r.status = Status::Cut;
        }
        tell(&write::result_line(&r));
        results.push(r);
        // Outputs that cannot be written are said, and the session goes on.
        match write::progress(ws, s, &results) {
            Ok(None) => {}
            Ok(Some(why)) => tell(&format!("gpu-session: no session file yet: {why}")),
            Err(e) => tell(&format!(
                "gpu-session: the outputs could not be written: {e}"
            )),
        }
    }
    let written = write::finish(ws, s, &results).unwrap_or_else(|e| {
        tell(&format!(
            "gpu-session: the last outputs could not be written: {e}"
        ));
        write::Written::default()
    });
    tell(&format!(
        "gpu-session: done in {:.0} s: {} ran, {} skipped, {} failed or cut",
        start.elapsed().as_secs_f64(),
        results.iter().filter(|r| r.status == Status::Ran).count(),
        results
            .iter()
            .filter(|r| r.status == Status::Skipped)
            .count(),
        results
            .iter()
            .filter(|r| matches!(r.status, Status::Failed | Status::Cut))
            .count(),
    ));
    Ok(Outcome { results, written })
}

/// Why an item does not start, or `None` when it does.
fn why_not(
    s: &Session,
    item: &Item,
    done: &[ItemResult],
    left: f64,
    cancelled: bool,
) -> Option<String> {
    if cancelled {
        return Some("the session was cancelled".into());
    }
    if let What::Studio { framework, .. } = &item.what {
        if s.framework(*framework).is_none() {
            return Some(format!(
                "{} is not installed here (or not among the frameworks named)",
                framework.as_str()
            ));
        }
    }
    if let What::Tune(space) = &item.what {
        if space.frameworks.iter().all(|k| s.framework(*k).is_none()) {
            let names: Vec<&str> = space.frameworks.iter().map(|k| k.as_str()).collect();
            return Some(format!(
                "none of {} is installed here (or among the frameworks named)",
                names.join(", ")
            ));
        }
    }
    if let Err(why) = batch_of(item, done) {
        return Some(why);
    }
    if let What::Peer { of, .. } = &item.what {
        match done.iter().find(|r| &r.id == of) {
            Some(r) if r.status == Status::Ran => {}
            Some(r) => return Some(format!("its studio run {of} {}", r.status.as_str())),
            None => return Some(format!("its studio run {of} is not in this session")),
        }
    }
    (item.allowance_s > left).then(|| {
        format!(
            "needs up to {:.0} s, {left:.0} s left of the budget",
            item.allowance_s
        )
    })
}

/// A studio item held against an earlier one (`against`): the ratio of the
/// two, or why there is none.
fn held_against(r: &mut ItemResult, item: &Item, results: &[ItemResult]) {
    let What::Studio {
        against: Some(of), ..
    } = &item.what
    else {
        return;
    };
    match results.iter().find(|d| &d.id == of) {
        // A run that failed or was cut may have left figures: no ratio
        // against those.
        Some(other) if other.status != Status::Ran => {
            if r.status == Status::Ran {
                r.ratio_note = Some(format!("no ratio: {of} {}", other.status.as_str()));
            }
        }
        Some(other) => {
            (r.ratio, r.ratio_note) = super::peer::ratio(r, other);
            r.ratio_of = Some(format!("÷ {of}"));
        }
        None => r.ratio_note = Some(format!("{of} is not in this session")),
    }
}

/// A studio item: planned as `trainbench run` plans it, its batch searched
/// where asked, run and stored.
async fn studio(
    ws: &mut Workspace,
    host: &Host,
    s: &Session,
    item: &Item,
    done: &[ItemResult],
    stop: watch::Receiver<bool>,
    tell: &mut dyn FnMut(&str),
) -> AppResult<ItemResult> {
    let What::Studio {
        framework,
        model,
        precision,
        compile,
        image_size,
        seq_len,
        folder,
        cudnn_benchmark,
        ..
    } = &item.what
    else {
        return Ok(ItemResult::new(
            item,
            Status::Failed,
            Some("not a studio item".into()),
        ));
    };
    let batch = batch_of(item, done).unwrap_or(Batch::Fixed(1));
    let l = s.lengths.of(item);
    let mut req = SweepRequest {
        model: vec![model.clone()],
        framework: vec![s.framework(*framework).unwrap_or_default().to_owned()],
        precision: vec![precision.clone()],
        compile: vec![compile.clone()],
        device: Some(s.device.clone()),
        steps: Some(l.steps),
        window_steps: Some(l.window_steps),
        threads: l.threads.into_iter().collect(),
        image_size: *image_size,
        seq_len: *seq_len,
        cudnn_benchmark: cudnn_benchmark.iter().copied().collect(),
        ..SweepRequest::default()
    };
    match batch {
        Batch::Fixed(b) => req.batch_size = vec![b],
        Batch::Max { from, cap } => {
            req.batch_size = Vec::new();
            req.batch_max = true;
            req.batch_from = Some(from);
            req.batch_cap = Some(cap);
            req.memory_limit_bytes = l.memory_limit_bytes;
        }
        Batch::FoundBy(_) => {}
    }
    let images = if *folder {
        let prefix = format!("trainbench-gpu-session-{}", std::process::id());
        let dir = match trainbench_files::private_dir(&std::env::temp_dir(), &prefix) {
            Ok(d) => d,
            Err(e) => {
                let why = format!("cannot make the image folder: {e}");
                return Ok(ItemResult::new(item, Status::Failed, Some(why)));
            }
        };
        if let Err(e) = write::image_folder(s, &dir).await {
            let _ = std::fs::remove_dir_all(&dir);
            return Ok(ItemResult::new(item, Status::Failed, Some(e)));
        }
        req.data = format!("folder:{}", dir.display());
        req.loader_workers = Some(l.folder.2);
        Some(dir)
    } else {
        None
    };
    let r = studio_runs(ws, host, s, item, &req, stop, tell).await;
    if let Some(dir) = images {
        let _ = std::fs::remove_dir_all(dir);
    }
    r
}

async fn studio_runs(
    ws: &mut Workspace,
    host: &Host,
    s: &Session,
    item: &Item,
    req: &SweepRequest,
    stop: watch::Receiver<bool>,
    tell: &mut dyn FnMut(&str),
) -> AppResult<ItemResult> {
    let mut plan = plan_sweep(req, host.machine(), !s.rehearse);
    if let Some(r) = plan.rejected.first() {
        return Ok(ItemResult::new(
            item,
            Status::Failed,
            Some(r.message.clone()),
        ));
    }
    let opts = RunnerOptions {
        silence_timeout: Duration::from_secs_f64(s.timeout_s),
        ..RunnerOptions::default()
    };
    let command = format!("trainbench gpu-session (item {})", item.id);
    let queued = if plan.configs.iter().any(|c| c.batch_search.is_some()) {
        let mut narrated = Narrated {
            say: |line: String| tell(&format!("  {line}")),
        };
        ws.search_then_queue(
            host,
            &mut plan,
            &command,
            None,
            opts,
            stop.clone(),
            &mut narrated,
        )
        .await
    } else {
        ws.queue(&plan, None, &command)
    };
    let jobs = match queued {
        Ok((_, jobs)) => jobs,
        Err(e) => return Ok(ItemResult::new(item, Status::Failed, Some(e.to_string()))),
    };
    let finished =
        execute::run_jobs(ws, host, &jobs, opts, stop, |_, _, _| Silent, |_, _| {}).await?;
    let mut r = ItemResult::new(item, Status::Ran, None);
    r.run_ids = finished.iter().map(|f| f.run_id).collect();
    if let Some(f) = finished.iter().find(|f| f.status != RunStatus::Completed) {
        r.status = Status::Failed;
        r.reason = Some(format!(
            "run #{} {}: {}",
            f.run_id,
            f.status.as_str(),
            f.reason.as_deref().unwrap_or("no reason given")
        ));
    }
    if let Some(id) = r.run_ids.first().copied() {
        r.take_figures(ws, id)?;
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_ratio_against_a_run_that_did_not_run_through() {
        let items = super::super::items::plan(false);
        let find = |id: &str| items.iter().find(|i| i.id == id).unwrap();
        let (tch, eager) = (find("resnet-tch-fp16"), find("resnet-eager-fp16"));
        let with = |item: &Item, status: Status, rate: f64| {
            let mut r = ItemResult::new(item, status, None);
            (r.samples_per_s, r.batch, r.params) = (Some(rate), Some(128), Some(25_557_032));
            r
        };
        let mut r = with(tch, Status::Ran, 4400.0);
        // Cut at the budget's end, with figures from its first windows.
        held_against(&mut r, tch, &[with(eager, Status::Cut, 3000.0)]);
        assert_eq!(r.ratio, None);
        assert_eq!(
            r.ratio_note.as_deref(),
            Some("no ratio: resnet-eager-fp16 cut")
        );
        let mut r = with(tch, Status::Ran, 4400.0);
        held_against(&mut r, tch, &[with(eager, Status::Ran, 4000.0)]);
        assert_eq!(r.ratio, Some(1.1));
        assert_eq!(r.ratio_of.as_deref(), Some("÷ resnet-eager-fp16"));
        let mut r = with(tch, Status::Ran, 4400.0);
        held_against(&mut r, tch, &[]);
        assert_eq!(
            r.ratio_note.as_deref(),
            Some("resnet-eager-fp16 is not in this session")
        );
    }
}

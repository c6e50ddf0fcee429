//! A GPU session: the measurements that matter most, in order of value,
//! within a time budget, in one command — for machines lent for minutes.
//! `rehearse` runs the same plan with small models on the CPU, as CI does.
//! This crate sits above `trainbench-app` and uses it as a shell does; the
//! CLI's `gpu-session` command and the kit's `run.sh` call it.
//!
//! - [`items`]: the plan (studio runs, each followed by a peer: a plain timm
//!   or Hugging Face loop on the same GPU, batch and precision; last two
//!   searches for the fastest setup, [`tune_items`]); [`kind`]: the
//!   frameworks it trains with; [`pace`]: its sizes on a GPU and in the
//!   rehearsal; [`order`]: what was never measured on this GPU first.
//! - [`run`]: checks the clock before each item, skips what would not fit in
//!   what is left, stops what is still running when the budget ends;
//!   [`peer`]: a peer's process and its figures; [`tuned`]: a search run
//!   through the application's `tune`, its winner held against [`best`],
//!   the best single configuration measured before; [`twins`]: each run
//!   projected to the other GPU of the pair.
//! - [`write`]: the outputs, rewritten after every item, so a session cut
//!   short still leaves them; [`result`]: an item's result as stored there;
//!   [`files`]: their names.
//! - [`record`]: the sessions kept in docs/gpu-results/ (results, checks,
//!   session files, notes); [`fold`]: an output folder added to it;
//!   [`render`]: docs/gpu-results.md generated from it, never parsed;
//!   [`doc`]: files read bounded, and Markdown cells with one escaping
//!   function.

use std::path::{Path, PathBuf};

use serde::Serialize;
use trainbench_probe::GpuInfo;

use trainbench_app::error::{AppError, AppResult};
use trainbench_app::host::Host;
use trainbench_app::{frameworks, now_unix_ms, utc_text};

pub mod best;
pub mod doc;
pub mod files;
pub mod fold;
pub mod items;
mod kind;
pub mod order;
mod pace;
mod peer;
pub mod record;
pub mod render;
pub mod result;
pub mod run;
pub mod tune_items;
mod tuned;
pub mod twins;
pub mod write;

pub use items::{Batch, Item, Kind, What};
pub use result::{ItemResult, Status};
pub use run::{run, Outcome};

/// Seconds kept at the end of the budget for the session file, the checks
/// and the PDF (on the CPU rehearsal, a fifth of it).
pub const RESERVE_S: f64 = 30.0;

/// The budget when none is given: inside a lent machine's 10-minute call,
/// with a minute to spare for start-up and carrying the results back.
pub const DEFAULT_BUDGET_S: f64 = 540.0;

/// What a person asks of a session.
#[derive(Debug, Clone)]
pub struct SessionRequest {
    /// Seconds for the whole session, outputs included.
    pub budget_s: f64,
    /// Where the outputs go; `None`: gpu-session-YYYYMMDDHHMMSS here.
    pub out_dir: Option<PathBuf>,
    /// `FRAMEWORK[@ENVIRONMENT]` for PyTorch and JAX, and `tch`; empty: the
    /// installed ones.
    pub frameworks: Vec<String>,
    /// The plan with small models on the CPU (no GPU needed).
    pub rehearse: bool,
    /// Item ids to keep (in the plan's order); empty: every item.
    pub only: Vec<String>,
    /// Seconds a worker may stay silent before its run is stopped.
    pub timeout_s: f64,
    /// The GPU results document: items it shows measured on this GPU model
    /// go after those it does not ([`order`]); `None`: the plan's order.
    pub measured: Option<PathBuf>,
}

impl Default for SessionRequest {
    fn default() -> Self {
        SessionRequest {
            budget_s: DEFAULT_BUDGET_S,
            out_dir: None,
            frameworks: Vec::new(),
            rehearse: false,
            only: Vec::new(),
            timeout_s: 300.0,
            measured: None,
        }
    }
}

/// Steps and windows of one kind of session.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Lengths {
    pub steps: i64,
    pub window_steps: i64,
    pub peer_warmup: i64,
    pub peer_steps: i64,
    /// CPU threads (the rehearsal's one thread); `None`: the framework's own.
    pub threads: Option<i64>,
    /// Resident memory a CPU batch search may use (what "fits" means there).
    pub memory_limit_bytes: Option<u64>,
    /// Images per class, pixels per side and loader workers of the
    /// generated image folder.
    pub folder: (i64, i64, i64),
}

impl Lengths {
    /// The lengths of one item: its steps, windows and a peer's warm-up
    /// times [`Item::steps_x`].
    pub fn of(self, item: &Item) -> Lengths {
        let x = item.steps_x;
        Lengths {
            steps: self.steps * x,
            window_steps: self.window_steps * x,
            peer_warmup: self.peer_warmup * x,
            peer_steps: self.peer_steps * x,
            ..self
        }
    }
}

const GPU_LENGTHS: Lengths = Lengths {
    steps: 80,
    window_steps: 5,
    peer_warmup: 10,
    peer_steps: 40,
    threads: None,
    memory_limit_bytes: None,
    folder: (64, 256, 8),
};

const CPU_LENGTHS: Lengths = Lengths {
    steps: 12,
    window_steps: 3,
    peer_warmup: 2,
    peer_steps: 6,
    threads: Some(1),
    memory_limit_bytes: Some(4 << 30),
    folder: (8, 40, 1),
};

/// The steps and windows of a session on a GPU, or of the rehearsal.
pub fn lengths(rehearse: bool) -> Lengths {
    if rehearse {
        CPU_LENGTHS
    } else {
        GPU_LENGTHS
    }
}

/// A session ready to run.
#[derive(Debug, Clone, Serialize)]
pub struct Session {
    pub items: Vec<Item>,
    /// `cuda:0`, or `cpu` for a rehearsal.
    pub device: String,
    pub gpus: Vec<GpuInfo>,
    pub rehearse: bool,
    pub budget_s: f64,
    pub reserve_s: f64,
    /// The PyTorch and JAX frameworks as the planner takes them (`None`:
    /// not installed or not named).
    pub pytorch: Option<String>,
    pub jax: Option<String>,
    /// The libtorch worker (`tch`) when it can run here.
    pub tch: Option<String>,
    pub lengths: Lengths,
    pub timeout_s: f64,
    /// How the plan was reordered by the record of earlier sessions, in a
    /// sentence (`None`: the plan's own order).
    pub order: Option<String>,
    /// Per search of the plan, the best single configuration the record
    /// shows on this GPU ([`best::in_record`]): what its winner is held
    /// against when this session measures none better.
    pub earlier_best: Vec<(best::Key, best::Best)>,
    #[serde(skip)]
    pub out_dir: PathBuf,
    pub started: String,
}

impl Session {
    pub fn framework(&self, kind: Kind) -> Option<&str> {
        match kind {
            Kind::Pytorch => self.pytorch.as_deref(),
            Kind::Jax => self.jax.as_deref(),
            Kind::Tch => self.tch.as_deref(),
        }
    }
}

/// What [`prepare`] found.
#[derive(Debug, Clone)]
pub enum Prepared {
    /// No GPU and no rehearsal asked for: the reason (nothing was run).
    NoGpu(String),
    Ready(Box<Session>),
}

/// Checks the request, finds the GPU (unless rehearsing) and the
/// frameworks, keeps the items asked for; makes the output folder.
pub fn prepare(req: &SessionRequest, host: &Host) -> AppResult<Prepared> {
    if !(req.budget_s.is_finite() && req.budget_s > 0.0) {
        return Err(AppError::bad_input("budget", req.budget_s, "seconds > 0"));
    }
    if !(req.timeout_s.is_finite() && req.timeout_s > 0.0) {
        return Err(AppError::bad_input("timeout", req.timeout_s, "seconds > 0"));
    }
    let gpus = host.gpus();
    if gpus.is_empty() && !req.rehearse {
        let why = host
            .gpu_unavailable()
            .unwrap_or("no NVIDIA GPU: NVML lists no device");
        return Ok(Prepared::NoGpu(why.to_owned()));
    }
    let mut items = items::plan(req.rehearse);
    if !req.only.is_empty() {
        let known: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
        if let Some(bad) = req.only.iter().find(|o| !known.contains(&o.as_str())) {
            return Err(AppError::bad(
                "only",
                format!(
                    "only = {bad} is not allowed: expected item ids among {}",
                    known.join(", ")
                ),
            ));
        }
        items.retain(|i| req.only.contains(&i.id));
    }
    let (items, order, earlier_best) = match (&req.measured, record_gpu(req.rehearse, &gpus)) {
        (Some(doc), Some(gpu)) => {
            let r = reorder(items, doc, &gpu)?;
            let earlier = earlier_best(&r.items, doc, &gpu)?;
            (r.items, Some(r.note), earlier)
        }
        _ => (items, None, Vec::new()),
    };
    let named = if req.frameworks.is_empty() {
        frameworks::installed_frameworks()
    } else {
        req.frameworks.clone()
    };
    let pick = |kind: Kind| {
        named
            .iter()
            .find(|f| f.split('@').next() == Some(kind.as_str()))
            .cloned()
    };
    if let Some(other) = named
        .iter()
        .find(|f| !matches!(f.split('@').next(), Some("pytorch" | "jax" | "tch")))
        .filter(|_| !req.frameworks.is_empty())
    {
        return Err(AppError::bad(
            "framework",
            format!("framework = {other} is not allowed: a GPU session measures pytorch, jax (FRAMEWORK or FRAMEWORK@ENVIRONMENT) and tch"),
        ));
    }
    let out_dir = req.out_dir.clone().unwrap_or_else(|| {
        let stamp = utc_text(now_unix_ms())
            .replace([' ', ':', '-'], "")
            .replace("UTC", "");
        PathBuf::from(format!("gpu-session-{stamp}"))
    });
    std::fs::create_dir_all(&out_dir).map_err(|e| {
        AppError::bad(
            "out",
            format!("out = {} is not allowed: {e}", out_dir.display()),
        )
    })?;
    let rehearse = req.rehearse;
    Ok(Prepared::Ready(Box::new(Session {
        items,
        device: if rehearse { "cpu" } else { "cuda:0" }.into(),
        gpus: if rehearse { Vec::new() } else { gpus },
        rehearse,
        budget_s: req.budget_s,
        reserve_s: if rehearse { RESERVE_S / 5.0 } else { RESERVE_S },
        pytorch: pick(Kind::Pytorch),
        jax: pick(Kind::Jax),
        tch: pick(Kind::Tch),
        lengths: lengths(rehearse),
        timeout_s: req.timeout_s,
        order,
        earlier_best,
        out_dir,
        started: utc_text(now_unix_ms()),
    })))
}

/// Per search among `items`, the best single configuration of the record
/// in `dir` on a GPU named `gpu`.
fn earlier_best(items: &[Item], dir: &Path, gpu: &str) -> AppResult<Vec<(best::Key, best::Best)>> {
    let record = record::all_results("measured", dir)?;
    Ok(items
        .iter()
        .filter_map(|i| match &i.what {
            What::Tune(space) => {
                let key = best::Key::of(space);
                best::in_record(&record, gpu, &key).map(|b| (key, b))
            }
            _ => None,
        })
        .collect())
}

/// The name a session's rows in the record are matched by: the first GPU's,
/// as NVML names it, or `cpu` for a rehearsal; `None` without either.
pub fn record_gpu(rehearse: bool, gpus: &[GpuInfo]) -> Option<String> {
    match gpus.first() {
        _ if rehearse => Some("cpu".to_owned()),
        Some(g) => Some(g.name.clone()),
        None => None,
    }
}

/// Refuses a `--gpu` the studio does not know: the plan's order is read
/// from the record by this name, so a typo would order it by nothing. Known:
/// a GPU the peak table has, as NVML names it, or `cpu` for a rehearsal.
pub fn check_record_gpu(gpu: &str, rehearse: bool) -> AppResult<()> {
    if (rehearse && gpu == "cpu") || trainbench_core::reference::gpu_peak_for(gpu).is_some() {
        return Ok(());
    }
    let known: Vec<String> = trainbench_core::reference::gpu_peaks()
        .into_iter()
        .map(|p| p.device)
        .collect();
    Err(AppError::bad(
        "gpu",
        format!(
            "gpu = {gpu} is not allowed: expected a GPU model the studio knows, as NVML names it \
             (e.g. \"NVIDIA H100 80GB HBM3\"): {}{}",
            known.join(", "),
            if rehearse { ", or cpu" } else { "" }
        ),
    ))
}

/// Whether each item, in order, starts within `budget_s` even when every
/// item before it that starts takes its whole allowance — the session's
/// clock: an item starts only when its allowance fits in what is left, less
/// [`RESERVE_S`] kept for the outputs; an item that does not fit is skipped
/// and takes no time.
pub fn fits_in_budget(items: &[Item], budget_s: f64) -> Vec<bool> {
    let mut left = budget_s - RESERVE_S;
    items
        .iter()
        .map(|i| {
            let fits = i.allowance_s <= left;
            if fits {
                left -= i.allowance_s;
            }
            fits
        })
        .collect()
}

/// The plan reordered by the record ([`reorder`]).
pub struct Reordered {
    pub items: Vec<Item>,
    /// A sentence saying what the record held and which order was taken.
    pub note: String,
    /// Per item id, the rows that ran on the GPU ([`order::measured`]).
    pub counts: std::collections::HashMap<String, usize>,
}

/// The items least measured on `gpu` first, by the record in `dir` (the
/// folder of the sessions' results, docs/gpu-results/), with a sentence
/// saying what the record held.
pub fn reorder(items: Vec<Item>, dir: &Path, gpu: &str) -> AppResult<Reordered> {
    let counts = order::measured(&record::all_results("measured", dir)?, gpu);
    let before = items
        .iter()
        .filter(|i| counts.get(&i.id).is_some_and(|&c| c > 0))
        .count();
    let total = items.len();
    if before == 0 {
        let note = format!(
            "order: as planned ({} shows none of these items measured on {gpu})",
            dir.display()
        );
        return Ok(Reordered {
            items,
            note,
            counts,
        });
    }
    let items = order::least_measured_first(items, &counts);
    let note = format!(
        "order: the {} items never measured on {gpu} first, cheapest first ({} shows {before} of {total} measured before), then the least measured",
        total - before,
        dir.display()
    );
    Ok(Reordered {
        items,
        note,
        counts,
    })
}

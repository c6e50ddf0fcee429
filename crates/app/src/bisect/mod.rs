//! Bisection over a framework's releases, as both shells run it: the
//! releases between a good and a bad one (the registry's list), the core's
//! [`Bisection`] deciding which release to measure next and how many runs
//! more, each release's environment made when missing, its runs stored in
//! one sweep, and what was found stored beside the sweep (and shown in the
//! sweep's PDF report, [`report::sections`]).

use serde::{Deserialize, Serialize};
use trainbench_core::bisect::{releases_between, Bisection, Outcome, Step};
use trainbench_core::compare::Metric;
use trainbench_core::summary::RunStatus;
use trainbench_core::versions::{Pin, Release};
use trainbench_core::Framework;
use trainbench_store::{NewRun, StoredBisection};

use crate::error::{AppError, AppResult};
use crate::host::Host;
use crate::job::{Finished, Job};
use crate::sweep::{plan_request, SweepRequest};
use crate::workspace::Workspace;

/// The fewest and most runs at one release unless asked otherwise.
pub const MIN_REPEATS: u32 = 3;
pub const MAX_REPEATS: u32 = 9;

/// What to bisect: the releases of `framework` from `good` to `bad`, each
/// trained as `base` says (its `framework` and `repeats` are the
/// bisection's), compared on `metric`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BisectRequest {
    /// `jax`, `pytorch` or `tensorflow`.
    pub framework: String,
    pub good: String,
    pub bad: String,
    /// A comparison metric's key (`throughput`, `peak_memory`, …).
    pub metric: String,
    pub min_repeats: u32,
    pub max_repeats: u32,
    pub base: SweepRequest,
}

/// A checked request: the releases to walk, oldest (good) first.
#[derive(Debug, Clone)]
pub struct BisectPlan {
    pub framework: Framework,
    pub releases: Vec<Release>,
    pub metric: Metric,
    pub min_repeats: u32,
    pub max_repeats: u32,
    pub base: SweepRequest,
}

/// What a finished bisection found, and where it is stored.
#[derive(Debug, Clone, Serialize)]
pub struct Bisected {
    pub sweep_id: i64,
    pub framework: Framework,
    pub metric: Metric,
    /// Every release between good and bad (the registry's), oldest first.
    pub releases: Vec<Release>,
    pub outcome: Outcome,
    pub run_ids: Vec<i64>,
}

/// What a shell does for the bisection: make an environment (with its
/// progress and cancel), run queued jobs (with theirs), say a line.
pub trait BisectShell {
    fn install(&mut self, pin: Pin) -> AppResult<()>;
    fn run(&mut self, ws: &mut Workspace, host: &Host, jobs: &[Job]) -> AppResult<Vec<Finished>>;
    fn say(&mut self, line: String);
}

fn release_of(field: &str, given: &str) -> AppResult<Release> {
    Release::parse(given)
        .filter(|_| given.split('.').count() == 3)
        .ok_or_else(|| {
            AppError::bad_input(field, given, "a release number MAJOR.MINOR.PATCH (0.7.2)")
        })
}

/// The request's framework: one whose releases install from PyPI.
fn framework_of(req: &BisectRequest) -> AppResult<Framework> {
    crate::releases::python_framework(&req.framework)
}

/// Checks `req` against `available` (the registry's supported releases of
/// the framework, oldest first) and against this machine's sweep checks
/// (the model, batch, device …, as a run at the good release).
pub fn plan_bisection(
    req: &BisectRequest,
    available: &[Release],
    host: &Host,
) -> AppResult<BisectPlan> {
    plan_checked(req, checked_alone(req)?, available, host)
}

/// [`plan_bisection`] once [`checked_alone`] has passed.
fn plan_checked(
    req: &BisectRequest,
    (metric, good, bad): (Metric, Release, Release),
    available: &[Release],
    host: &Host,
) -> AppResult<BisectPlan> {
    let framework = framework_of(req)?;
    let releases = releases_between(available, good, bad)?;
    // Validated once here, again by the core when it starts.
    Bisection::new(releases.clone(), req.min_repeats, req.max_repeats)?;
    // The settings checked as a run of the good release would be (planned
    // whether or not it is installed yet): every refusal but that of the
    // framework itself, and one configuration.
    let mut first = req.base.clone();
    first.framework = vec![format!("{framework}=={good}")];
    let plan = plan_request(&first, host)?;
    if let Some(r) = plan.rejected.iter().find(|r| r.field != "framework") {
        return Err(r.clone().into());
    }
    if plan.configs.len() > 1 {
        return Err(AppError::bad(
            "model",
            format!(
                "a bisection trains one configuration at each release; these settings make {} (give one model, precision, batch size …)",
                plan.configs.len()
            ),
        ));
    }
    Ok(BisectPlan {
        framework,
        releases,
        metric,
        min_repeats: req.min_repeats,
        max_repeats: req.max_repeats,
        base: req.base.clone(),
    })
}

/// The bisection `req` asks for, checked against the releases the registry
/// lists for its framework (asked here, after the framework is checked) and
/// against this machine: where both shells start.
pub fn plan_from_registry(req: &BisectRequest, host: &Host) -> AppResult<BisectPlan> {
    let framework = framework_of(req)?;
    // What needs no list of releases is refused before the registry is
    // asked (a few MB of JSON, or a wait where there is no network).
    let checked = checked_alone(req)?;
    let available = trainbench_runner::envs::registry::releases(framework)?;
    plan_checked(req, checked, &available, host)
}

/// The request's metric and its two releases, with every check that needs
/// no list of releases: the metric, this machine, the releases' form and
/// order, the repeats.
fn checked_alone(req: &BisectRequest) -> AppResult<(Metric, Release, Release)> {
    let metric = Metric::parse(&req.metric).ok_or_else(|| {
        let keys: Vec<&str> = Metric::ALL.iter().map(|m| m.key()).collect();
        AppError::bad_input("metric", &req.metric, &keys.join(", "))
    })?;
    if let Some(h) = &req.base.host {
        return Err(AppError::bad_input(
            "host",
            h,
            "this machine (a bisection installs each release's environment here; on a remote host, run `trainbench bisect` there)",
        ));
    }
    let (good, bad) = (release_of("good", &req.good)?, release_of("bad", &req.bad)?);
    // The order and the repeats, as the registry's list will be checked.
    let both = releases_between(&[good, bad], good, bad)?;
    Bisection::new(both, req.min_repeats, req.max_repeats)?;
    Ok((metric, good, bad))
}

impl Workspace {
    /// Runs the bisection `plan` to its end: each step's release made when
    /// missing, its runs queued in one sweep and run, their metric recorded.
    /// Stores the outcome beside the sweep.
    pub fn bisect(
        &mut self,
        host: &Host,
        plan: &BisectPlan,
        command: &str,
        shell: &mut dyn BisectShell,
    ) -> AppResult<Bisected> {
        let mut search = Bisection::new(plan.releases.clone(), plan.min_repeats, plan.max_repeats)?;
        let sweep = self.store.create_sweep(
            command,
            u32::try_from(plan.releases.len()).unwrap_or(u32::MAX),
            plan.min_repeats,
        )?;
        let mut run_ids = Vec::new();
        let mut runs_at = vec![0u32; plan.releases.len()];
        let outcome = loop {
            let (index, release, runs) = match search.next() {
                Step::Done(o) => break o,
                Step::Measure {
                    index,
                    release,
                    runs,
                } => (index, release, runs),
            };
            let pin = Pin {
                framework: plan.framework,
                release,
            };
            // Kept from any disk budget from its install to its last run.
            let _using = trainbench_runner::envs::pinned::in_use(pin)?;
            if !trainbench_runner::envs::pinned::env_for(pin).ready {
                shell.install(pin)?;
            }
            shell.say(format!(
                "bisect: {pin}: {runs} run(s) (release {} of the {} from {} to {}; {} measured so far)",
                index + 1,
                plan.releases.len(),
                plan.releases[0],
                plan.releases[plan.releases.len() - 1],
                runs_at.iter().filter(|&&n| n > 0).count()
            ));
            let jobs = self.queue_release(host, plan, sweep, pin, runs_at[index], runs)?;
            runs_at[index] += runs;
            let finished = shell.run(self, host, &jobs)?;
            run_ids.extend(jobs.iter().map(|j| j.run_id));
            let values = self.measured(plan.metric, pin, &jobs, &finished)?;
            search.record(index, &values);
        };
        self.store.save_bisection(&StoredBisection {
            sweep_id: sweep,
            framework: plan.framework.to_string(),
            good: plan.releases[0].to_string(),
            bad: plan.releases[plan.releases.len() - 1].to_string(),
            metric: plan.metric.key().into(),
            outcome_json: serde_json::to_string(&outcome)
                .map_err(|e| AppError::Internal(format!("cannot write the outcome: {e}")))?,
            ended_unix_ms: 0,
        })?;
        Ok(Bisected {
            sweep_id: sweep,
            framework: plan.framework,
            metric: plan.metric,
            releases: plan.releases.clone(),
            outcome,
            run_ids,
        })
    }

    /// `runs` runs of the plan's configuration at `pin`, queued in `sweep`
    /// (repeat numbers going on from `before`).
    fn queue_release(
        &self,
        host: &Host,
        plan: &BisectPlan,
        sweep: i64,
        pin: Pin,
        before: u32,
        runs: u32,
    ) -> AppResult<Vec<Job>> {
        let mut req = plan.base.clone();
        req.framework = vec![pin.to_string()];
        let planned = plan_request(&req, host)?;
        if let Some(r) = planned.rejected.first() {
            return Err(r.clone().into());
        }
        // One configuration per release (checked up front too).
        let cfg = match planned.configs.as_slice() {
            [one] => one,
            many => {
                return Err(AppError::bad(
                    "model",
                    format!(
                        "a bisection trains one configuration at each release; these settings make {} at {pin} (give one model, precision, batch size …)",
                        many.len()
                    ),
                ))
            }
        };
        let mut jobs = Vec::new();
        for r in 0..runs {
            let id = self.store.insert_run(&NewRun {
                sweep_id: Some(sweep),
                repeat_index: before + r,
                price_offering: req.price.clone(),
                epoch_samples: planned.epoch_samples,
                ..NewRun::of_spec(cfg.framework, cfg.env.clone(), &cfg.spec)
            })?;
            jobs.push(Job {
                run_id: id,
                spec: cfg.spec.clone(),
                label: cfg.label.clone(),
                config: 0,
                worker: cfg.worker.clone(),
                memory_limit_bytes: planned.memory_limit_bytes,
                remote: cfg.remote.clone(),
            });
        }
        Ok(jobs)
    }

    /// The metric of the runs that completed; an error when the user
    /// cancelled or none completed (naming the release and why).
    fn measured(
        &self,
        metric: Metric,
        pin: Pin,
        jobs: &[Job],
        finished: &[Finished],
    ) -> AppResult<Vec<f64>> {
        if finished.iter().any(|f| f.status == RunStatus::Cancelled) {
            return Err(AppError::Cancelled);
        }
        let ids: Vec<i64> = jobs.iter().map(|j| j.run_id).collect();
        let rows = self.runs_by_id(&ids)?;
        let values: Vec<f64> = rows
            .iter()
            .filter(|r| r.status == RunStatus::Completed)
            .filter_map(|r| r.summary.as_ref().and_then(|s| metric.of(s)))
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        if values.is_empty() {
            let why = finished
                .iter()
                .find_map(|f| f.reason.clone())
                .unwrap_or_else(|| format!("no run measured {}", metric.key()));
            return Err(AppError::Internal(format!(
                "the bisection stopped at {pin}: its runs gave no {} ({why}); runs {ids:?} are stored",
                metric.title().to_lowercase()
            )));
        }
        Ok(values)
    }

    /// The bisection stored beside `sweep`, if it was one.
    pub fn bisection(&self, sweep: i64) -> AppResult<Option<(StoredBisection, Outcome)>> {
        let Some(b) = self.store.bisection(sweep)? else {
            return Ok(None);
        };
        let outcome: Outcome = serde_json::from_str(&b.outcome_json).map_err(|e| {
            AppError::Internal(format!(
                "sweep {sweep}'s stored bisection cannot be read: {e}"
            ))
        })?;
        Ok(Some((b, outcome)))
    }
}

pub mod report;

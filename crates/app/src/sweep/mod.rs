//! A sweep: the cross product of the values chosen for each setting, checked
//! before anything runs, then queued (configurations × repeats, interleaved).
//! The CLI's flags and the desktop wizard both fill a [`SweepRequest`], so
//! both give the same verdict on every combination.

use serde::{Deserialize, Serialize};
use trainbench_core::batch_search::{BatchSearch, DEFAULT_CAP};
use trainbench_core::spec::{
    check_runnable, interleaved_plan, CheckedSpec, Framework, Machine, RawSpec,
};
use trainbench_store::{NewRun, Store, StoreError};

use crate::error::{AppError, AppResult};
use crate::host::Host;
pub use crate::job::{Job, Rejected};
use crate::workspace::Workspace;
use trainbench_remote::RemoteTarget;

use trainbench_runner::envs;
use trainbench_runner::WorkerCommand;

pub mod again;
mod combination;
mod costing;
mod estimate;
mod library;
pub mod model_file;
mod script;
pub use estimate::{run_seconds, DurationEstimate, Earlier};
mod plan;
pub use plan::{
    folder_classes, missing_releases, named_releases, parse_data, plan_sweep, plan_sweep_on,
    resolve_framework,
};

/// A list given as one number, a list, or nothing (`threads` was one
/// number before it became a sweep axis; requests written then still read).
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<i64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(i64),
        Many(Vec<i64>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(n)) => vec![n],
        Some(OneOrMany::Many(v)) => v,
    })
}

/// Every setting of a sweep; several values in a list make several
/// configurations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SweepRequest {
    pub model: Vec<String>,
    /// `tch`, `pytorch`, `tensorflow`, `jax`, or `FRAMEWORK@ENVIRONMENT`.
    pub framework: Vec<String>,
    pub precision: Vec<String>,
    pub compile: Vec<String>,
    pub devices: Vec<i64>,
    /// A remote host of the studio's list to run on (`None`: this machine).
    #[serde(default)]
    pub host: Option<String>,
    /// Machines a run spans (each with `devices` devices); more than one on a
    /// Slurm host only.
    #[serde(default)]
    pub nodes: Option<i64>,
    pub parallel: Option<String>,
    pub batch_size: Vec<i64>,
    /// `cpu` or `cuda:N`; the first GPU when there is one, else the CPU.
    pub device: Option<String>,
    pub steps: Option<i64>,
    pub epochs: Option<i64>,
    /// `synthetic`, `mnist`, `cifar10:DIR`, `text`, `text:FILE` or `folder:DIR`.
    pub data: String,
    /// Loader workers of an image folder (default 2; 0: the training thread
    /// decodes).
    #[serde(default)]
    pub loader_workers: Option<i64>,
    pub num_classes: Option<i64>,
    /// Tokens per sequence of a text model; `None` keeps the model's.
    #[serde(default)]
    pub seq_len: Option<i64>,
    /// Pixels per side of an image model's input (default: the model's).
    #[serde(default)]
    pub image_size: Option<i64>,
    /// What a file model takes: `CxSxS` (images) or `tokens:N`.
    #[serde(default)]
    pub input_shape: Option<String>,
    /// The token ids' range of a file model taking tokens.
    #[serde(default)]
    pub vocab_size: Option<i64>,
    /// What a library or file model is called in tables and comparisons:
    /// two frameworks' versions of one architecture named alike compare as
    /// one model. `None`: its reference.
    #[serde(default)]
    pub model_name: Option<String>,
    pub target_accuracy: Option<f64>,
    /// A held-out loss to reach (time-to-loss).
    #[serde(default)]
    pub target_loss: Option<f64>,
    /// Evaluate every this many steps (default: each epoch and at the end).
    #[serde(default)]
    pub eval_every_steps: Option<i64>,
    pub stop_at_target: bool,
    pub window_steps: Option<i64>,
    /// CPU threads a framework may use for its operators: each count its
    /// own configuration (a thread-count sweep); empty: the framework's own
    /// choice (`OMP_NUM_THREADS` where set).
    #[serde(default, deserialize_with = "one_or_many")]
    #[cfg_attr(feature = "specta", specta(type = Vec<i64>))]
    pub threads: Vec<i64>,
    /// Environment variables to compare: each entry one alternative,
    /// `NAME=VALUE[;NAME=VALUE…]` or `default` (none set); empty: none set.
    /// Only the frameworks' own families (`spec::env`).
    #[serde(default)]
    pub env: Vec<String>,
    /// A training script's arguments to compare (`script:PATH.py` models):
    /// each entry one alternative, written as on a command line
    /// (`--lr 1e-3 --amp`, quoted as a shell would); empty: no arguments.
    #[serde(default)]
    pub script_args: Vec<String>,
    /// cuDNN's benchmark mode (PyTorch and tch on a GPU): each value its own
    /// configuration; empty: the worker's default (on for a CNN).
    #[serde(default)]
    pub cudnn_benchmark: Vec<bool>,
    pub lr: Option<f64>,
    pub repeats: i64,
    /// A price-table offering for cost per epoch.
    pub price: Option<String>,
    /// Samples in the epoch cost per epoch is priced for, where the data has
    /// no size of its own (synthetic data). None: ImageNet-1k's training
    /// split (1,281,167) for an image model, no epoch for a text model.
    #[serde(default)]
    pub epoch_size: Option<i64>,
    /// The operator profile after the timed part.
    #[serde(default)]
    pub profile: bool,
    /// `--batch-size max`: search the largest power-of-two batch that fits
    /// (then `batch_size` is empty).
    #[serde(default)]
    pub batch_max: bool,
    /// The largest batch the search tries (default 65,536).
    #[serde(default)]
    pub batch_cap: Option<u32>,
    /// The first batch the search tries (default 1): doubling up from it,
    /// halving down when it does not fit.
    #[serde(default)]
    pub batch_from: Option<u32>,
    /// Resident memory a worker's processes may use (bytes): a worker over it
    /// is stopped (failed, out of memory). Required for a batch search on the
    /// CPU, where it is what "fits" means.
    #[serde(default)]
    pub memory_limit_bytes: Option<u64>,
}

impl Default for SweepRequest {
    fn default() -> Self {
        SweepRequest {
            model: vec!["resnet_mini".into()],
            framework: vec![Framework::Tch.to_string()],
            precision: vec!["fp32".into()],
            compile: vec!["off".into()],
            devices: vec![1],
            host: None,
            nodes: None,
            parallel: None,
            batch_size: vec![64],
            device: None,
            steps: Some(100),
            epochs: None,
            data: "synthetic".into(),
            loader_workers: None,
            num_classes: None,
            seq_len: None,
            image_size: None,
            input_shape: None,
            vocab_size: None,
            model_name: None,
            target_accuracy: None,
            target_loss: None,
            eval_every_steps: None,
            stop_at_target: true,
            window_steps: None,
            threads: Vec::new(),
            env: Vec::new(),
            script_args: Vec::new(),
            cudnn_benchmark: Vec::new(),
            lr: None,
            repeats: 1,
            price: None,
            epoch_size: None,
            profile: false,
            batch_max: false,
            batch_cap: None,
            batch_from: None,
            memory_limit_bytes: None,
        }
    }
}

/// One configuration that can run.
#[derive(Debug, Clone)]
pub struct PlannedConfig {
    pub framework: Framework,
    /// A registered environment (`framework@name`); `None` for the framework's own.
    pub env: Option<String>,
    /// The spec as built from the request and as validated.
    pub spec: CheckedSpec,
    pub label: String,
    pub worker: WorkerCommand,
    /// The batch is to be searched (`--batch-size max`) before the runs are
    /// queued: the spec then holds batch 1 until [`Workspace::search_batches`]
    /// sets the largest that fits.
    pub batch_search: Option<BatchSearch>,
    /// Once searched: the search's key (its configuration, `bmax`), under
    /// which the sweep's probes are stored and which its runs record.
    pub searched: Option<String>,
    /// The remote host it runs on; `None`: this machine.
    pub remote: Option<RemoteTarget>,
}

#[derive(Debug, Clone)]
pub struct SweepPlan {
    pub configs: Vec<PlannedConfig>,
    pub rejected: Vec<Rejected>,
    pub repeats: u32,
    /// The request's resident-memory limit, for every run and probe.
    pub memory_limit_bytes: Option<u64>,
    /// The epoch size asked for cost per epoch, stored with every run.
    pub epoch_samples: Option<u64>,
    /// What the figures will mean, said before anything runs (a GPU price
    /// on CPU runs, text models without an epoch): nothing is refused.
    pub notes: Vec<String>,
    /// Releases named (`jax==0.7.2`) whose environment is not installed:
    /// installed first (`releases::install_missing`); nothing is queued
    /// while any is missing.
    pub to_install: Vec<trainbench_core::versions::Pin>,
    /// Model files read for the plan (`PATH.py:FUNCTION`): their bytes are
    /// kept in the store beside the runs queued.
    pub model_files: model_file::ModelFiles,
}

impl SweepPlan {
    /// Runs the sweep would queue.
    pub fn runs(&self) -> usize {
        self.configs.len() * self.repeats as usize
    }

    /// Refuses, naming `framework`, while a release the plan names is not
    /// installed: no run is queued into an environment that is not there.
    pub fn check_installed(&self) -> AppResult<()> {
        match self.to_install.first() {
            None => Ok(()),
            Some(pin) => Err(crate::AppError::bad_input(
                "framework",
                pin.to_string(),
                &format!("an installed release: {pin}'s environment is made from PyPI by the wizard's Start or Install, `trainbench env install {pin}`, or `trainbench run` when it is named"),
            )),
        }
    }
}

/// Checks the price offering exists; names the table's offerings if not.
pub(crate) fn check_price(
    store: &Store,
    price: Option<&str>,
) -> Result<Option<Rejected>, StoreError> {
    let Some(p) = price else { return Ok(None) };
    if store.price(p)?.is_some() {
        return Ok(None);
    }
    let names: Vec<String> = store.prices()?.into_iter().map(|r| r.0.offering).collect();
    Ok(Some(Rejected::shared(
        "price",
        format!(
            "price = {p} is not allowed: expected one of the price table's offerings: {}",
            names.join("; ")
        ),
    )))
}

/// Checks every combination of `req` where it is to run: on the remote host
/// it names, else on this machine.
pub fn plan_request(req: &SweepRequest, host: &Host) -> AppResult<SweepPlan> {
    // `TRAINBENCH_EXAMPLE_STEPS` caps every run (said in the plan's notes).
    let (req, shortened) = shorten(req)?;
    let mut plan = match &req.host {
        Some(name) => plan_on_host(&req, name)?,
        None => plan_sweep(&req, host.machine(), host.gpu_count() > 0),
    };
    plan.notes.extend(shortened);
    Ok(plan)
}

/// `req` with every run at most `TRAINBENCH_EXAMPLE_STEPS` steps when the
/// variable is set (repeats kept: later commands name the runs by id), and
/// the sentence that says so.
fn shorten(req: &SweepRequest) -> AppResult<(SweepRequest, Option<String>)> {
    let Some(s) = crate::shortened::Shortened::from_env()? else {
        return Ok((req.clone(), None));
    };
    let length = s.apply(crate::shortened::Length {
        steps: req.steps,
        epochs: req.epochs,
        window_steps: req.window_steps,
    });
    let shortened = SweepRequest {
        steps: length.steps,
        epochs: length.epochs,
        window_steps: length.window_steps,
        ..req.clone()
    };
    Ok((shortened, Some(s.said())))
}

/// Checks every combination of `req` on the remote host `name` as its last
/// check found it (`trainbench host check`).
pub fn plan_on_host(req: &SweepRequest, name: &str) -> AppResult<SweepPlan> {
    let h = crate::remote::host(name)?;
    let inv = h.inventory.clone().ok_or_else(|| AppError::BadInput {
        field: "host".into(),
        message: format!("host = {name} has not been checked: run `trainbench host check {name}`"),
    })?;
    // A cluster: what one node offers a run (a Ray cluster's runs span
    // several nodes only with an interpreter that imports ray); else the
    // host itself.
    let ray = matches!(h.url, crate::remote::HostUrl::Ray(_));
    let (machine, nodes) = match &inv.cluster {
        Some(s) => (
            Machine {
                gpus: s.gpus_per_node,
                cpu_cores: s.cpus_per_node,
            },
            (!ray || s.ray_python.is_some()).then_some(s.nodes),
        ),
        None => (
            Machine {
                gpus: u32::try_from(inv.gpus.len()).unwrap_or(u32::MAX),
                cpu_cores: inv.cpu_cores,
            },
            (!h.peers.is_empty()).then(|| u32::try_from(h.peers.len() + 1).unwrap_or(u32::MAX)),
        ),
    };
    let target = RemoteTarget {
        host: std::sync::Arc::new(h),
        attach: false,
    };
    let mut plan = plan_sweep_on(req, machine, machine.gpus > 0, Some(&target));
    if let Some(n) = req.nodes.filter(|&n| n > 1) {
        let why = match nodes {
            None if ray => Some(format!(
                "nodes = {n} is not allowed on host {name}: none of its interpreters imports ray, which starts a run's other nodes as Ray tasks; expected 1 (or add one with `trainbench host add {name} URL --python …`)"
            )),
            None => Some(format!(
                "nodes = {n} is not allowed on host {name}: several nodes run through Slurm or a host's peers; expected 1 (add a Slurm login host with `trainbench host add NAME ssh://login --slurm`, or one with `--peer ssh://node2`)"
            )),
            Some(have) if i64::from(have) < n => Some(format!(
                "nodes = {n} is not allowed on host {name}: it has {have} node(s){}; expected at most {have}",
                if ray { "" } else if inv.cluster.is_some() { " in its partition" } else { " (itself and its peers)" }
            )),
            _ => None,
        };
        if let Some(message) = why {
            plan.configs.clear();
            plan.rejected.insert(0, Rejected::shared("nodes", message));
        }
    }
    Ok(plan)
}

/// Stores the sweep and its runs (status `queued`), repeats interleaved.
pub(crate) fn queue_sweep(
    store: &Store,
    plan: &SweepPlan,
    price: Option<&str>,
    command: &str,
) -> Result<(i64, Vec<Job>), StoreError> {
    let sweep = store.create_sweep(command, plan.configs.len() as u32, plan.repeats)?;
    queue_into(store, sweep, plan, price)
}

/// Stores the plan's runs as queued in an existing sweep (one whose batch
/// search ran first).
pub(crate) fn queue_into(
    store: &Store,
    sweep: i64,
    plan: &SweepPlan,
    price: Option<&str>,
) -> Result<(i64, Vec<Job>), StoreError> {
    for f in plan.model_files.read_files() {
        store.keep_model_file(&f.sha256, &f.model, &f.bytes)?;
    }
    let mut queued = Vec::new();
    for (c, r) in interleaved_plan(plan.configs.len(), plan.repeats as usize) {
        let cfg = &plan.configs[c];
        let id = store.insert_run(&NewRun {
            sweep_id: Some(sweep),
            repeat_index: r as u32,
            price_offering: price.map(str::to_string),
            epoch_samples: plan.epoch_samples,
            batch_search: cfg.searched.clone(),
            ..NewRun::of_spec(cfg.framework, cfg.env.clone(), &cfg.spec)
        })?;
        queued.push(Job {
            run_id: id,
            spec: cfg.spec.clone(),
            label: cfg.label.clone(),
            config: c,
            worker: cfg.worker.clone(),
            memory_limit_bytes: plan.memory_limit_bytes,
            remote: cfg.remote.clone(),
        });
    }
    Ok((sweep, queued))
}

impl Workspace {
    /// Checks every combination of `req` where it is to run (this machine,
    /// or the remote host it names), and the price offering against this
    /// database's table (refused first when unknown).
    pub fn plan(&self, req: &SweepRequest, host: &Host) -> AppResult<SweepPlan> {
        let mut plan = plan_request(req, host)?;
        if let Some(r) = self.check_price(req.price.as_deref())? {
            plan.rejected.insert(0, r);
        }
        let costs = self.cost_notes(&plan, req.price.as_deref())?;
        plan.notes.extend(costs);
        Ok(plan)
    }

    /// What the plan's cost per epoch will mean at `price` (a GPU offering
    /// on CPU runs, text models without an epoch), said before it runs.
    pub fn cost_notes(&self, plan: &SweepPlan, price: Option<&str>) -> AppResult<Vec<String>> {
        let row = match price {
            Some(p) => self.store.price(p)?,
            None => None,
        };
        Ok(costing::cost_notes(plan, row.as_ref()))
    }

    /// `None` when there is no price or the table has the offering; else
    /// why not, naming the table's offerings.
    pub fn check_price(&self, price: Option<&str>) -> AppResult<Option<Rejected>> {
        Ok(check_price(&self.store, price)?)
    }

    /// Creates the sweep before its batch search (`search_batches`), so that
    /// the probes are stored under it as they end.
    pub(crate) fn create_sweep(&self, plan: &SweepPlan, command: &str) -> AppResult<i64> {
        plan.check_installed()?;
        Ok(self
            .store
            .create_sweep(command, plan.configs.len() as u32, plan.repeats)?)
    }

    /// Queues the plan's runs in `sweep` (made by `create_sweep`).
    pub(crate) fn queue_into(
        &self,
        sweep: i64,
        plan: &SweepPlan,
        price: Option<&str>,
    ) -> AppResult<(i64, Vec<Job>)> {
        plan.check_installed()?;
        Ok(queue_into(&self.store, sweep, plan, price)?)
    }

    /// Stores the plan's runs as queued (a sweep, repeats interleaved) and
    /// returns them in the order they are to run.
    pub fn queue(
        &self,
        plan: &SweepPlan,
        price: Option<&str>,
        command: &str,
    ) -> AppResult<(i64, Vec<Job>)> {
        plan.check_installed()?;
        Ok(queue_sweep(&self.store, plan, price, command)?)
    }
}

#[cfg(test)]
mod tests;

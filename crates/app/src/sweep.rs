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
use crate::remote::RemoteTarget;
use crate::workspace::Workspace;

use trainbench_runner::envs;
use trainbench_runner::WorkerCommand;

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
    pub target_accuracy: Option<f64>,
    /// A held-out loss to reach (time-to-loss).
    #[serde(default)]
    pub target_loss: Option<f64>,
    /// Evaluate every this many steps (default: each epoch and at the end).
    #[serde(default)]
    pub eval_every_steps: Option<i64>,
    pub stop_at_target: bool,
    pub window_steps: Option<i64>,
    pub threads: Option<i64>,
    pub lr: Option<f64>,
    pub repeats: i64,
    /// A price-table offering for cost per epoch.
    pub price: Option<String>,
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
            target_accuracy: None,
            target_loss: None,
            eval_every_steps: None,
            stop_at_target: true,
            window_steps: None,
            threads: None,
            lr: None,
            repeats: 1,
            price: None,
            profile: false,
            batch_max: false,
            batch_cap: None,
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

/// A combination that cannot run, and why (the field, the value, what is allowed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Rejected {
    /// The combination, or `all` for a setting every combination shares.
    pub label: String,
    pub field: String,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct SweepPlan {
    pub configs: Vec<PlannedConfig>,
    pub rejected: Vec<Rejected>,
    pub repeats: u32,
    /// The request's resident-memory limit, for every run and probe.
    pub memory_limit_bytes: Option<u64>,
}

impl SweepPlan {
    /// Runs the sweep would queue.
    pub fn runs(&self) -> usize {
        self.configs.len() * self.repeats as usize
    }
}

fn reject(label: &str, field: &str, message: String) -> Rejected {
    Rejected {
        label: label.into(),
        field: field.into(),
        message,
    }
}

/// `tch`, `pytorch`, `pytorch@NAME` … → (framework, environment name, worker).
pub fn resolve_framework(
    given: &str,
) -> Result<(Framework, Option<String>, WorkerCommand), Rejected> {
    let (framework, env) = match given.split_once('@') {
        Some((f, e)) => (f, Some(e.to_owned())),
        None => (given, None),
    };
    let framework = Framework::parse(framework).map_err(|e| {
        reject(
            given,
            "framework",
            format!("{e} (optionally FRAMEWORK@ENVIRONMENT)"),
        )
    })?;
    if framework == Framework::Tch {
        if env.is_some() {
            return Err(reject(
                given,
                "framework",
                format!("framework = {given} is not allowed: expected tch without an environment (it links libtorch)"),
            ));
        }
        return Ok((Framework::Tch, None, WorkerCommand::tch()));
    }
    match envs::resolve(framework, env.as_deref()) {
        Ok(e) => Ok((framework, env, envs::worker_command(&e))),
        Err(e) => {
            let field = match &e {
                envs::EnvError::Bad { field, .. } => (*field).to_string(),
                _ => "framework".into(),
            };
            Err(reject(given, &field, e.to_string()))
        }
    }
}

/// `synthetic`, `mnist`, `text`, `cifar10:DIR`, `text:FILE`, `folder:DIR` →
/// (source, path).
pub fn parse_data(s: &str) -> Result<(String, Option<String>), Rejected> {
    match s {
        "synthetic" | "mnist" | "text" => Ok((s.to_owned(), None)),
        other => match other.split_once(':') {
            Some((source @ ("cifar10" | "text" | "folder"), path)) if !path.is_empty() => {
                Ok((source.to_owned(), Some(path.to_owned())))
            }
            _ => Err(reject(
                "all",
                "data",
                format!("data = {other} is not allowed: expected synthetic, mnist, cifar10:DIR, text, text:FILE or folder:DIR"),
            )),
        },
    }
}

/// The class folders of an image folder, by the rule the Python workers
/// apply (`workers/python/trainbench_worker/images.py`): the non-hidden
/// sub-folders of `DIR/train` when it exists, else of `DIR`, sorted.
pub fn folder_classes(dir: &std::path::Path) -> Result<Vec<String>, String> {
    let train = dir.join("train");
    let root = if train.is_dir() {
        train
    } else {
        dir.to_path_buf()
    };
    let entries =
        std::fs::read_dir(&root).map_err(|e| format!("{} cannot be read: {e}", root.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    if names.len() < 2 {
        return Err(format!(
            "{} holds {} class folder(s); expected at least 2 (one folder of images per class)",
            root.display(),
            names.len()
        ));
    }
    Ok(names)
}

/// Checks every combination of `req` on this machine. Settings shared by all
/// combinations that are wrong are reported once, with the label `all`.
pub fn plan_sweep(req: &SweepRequest, machine: Machine, gpus_present: bool) -> SweepPlan {
    plan_sweep_on(req, machine, gpus_present, None)
}

/// [`plan_sweep`] for a machine: this one (`remote` = `None`), or a remote
/// host as its last check found it — its frameworks and environments, its
/// GPUs and cores; data paths are then paths on the host, checked there by
/// the worker.
pub fn plan_sweep_on(
    req: &SweepRequest,
    machine: Machine,
    gpus_present: bool,
    remote: Option<&RemoteTarget>,
) -> SweepPlan {
    let mut rejected = Vec::new();
    if let (None, Some(n)) = (remote, req.nodes.filter(|&n| n != 1)) {
        rejected.push(reject(
            "all",
            "nodes",
            format!("nodes = {n} is not allowed on this machine: expected 1 (several nodes run on a Slurm host: `trainbench run --host NAME --nodes {n}`)"),
        ));
    }
    if let (Some(r), true) = (remote, req.batch_max) {
        rejected.push(reject(
            "all",
            "batch_size",
            format!(
                "batch_size = max is not allowed on host {}: the batch search runs on this machine only so far; expected whole numbers",
                r.host.name
            ),
        ));
    }
    let repeats = match u32::try_from(req.repeats) {
        Ok(r) if r >= 1 => r,
        _ => {
            rejected.push(reject(
                "all",
                "repeats",
                format!(
                    "repeats = {} is not allowed: expected a whole number ≥ 1",
                    req.repeats
                ),
            ));
            1
        }
    };
    for (field, empty) in [
        ("model", req.model.is_empty()),
        ("framework", req.framework.is_empty()),
        ("precision", req.precision.is_empty()),
        ("compile", req.compile.is_empty()),
        ("devices", req.devices.is_empty()),
        ("batch_size", req.batch_size.is_empty() && !req.batch_max),
    ] {
        if empty {
            rejected.push(reject(
                "all",
                field,
                format!("{field} is empty: expected at least one value"),
            ));
        }
    }
    match (req.steps, req.epochs) {
        (Some(_), Some(_)) => rejected.push(reject(
            "all",
            "steps",
            "give either steps or epochs, not both".into(),
        )),
        (None, None) => rejected.push(reject("all", "steps", "give steps or epochs".into())),
        _ => {}
    }
    if req.batch_max && !req.batch_size.is_empty() {
        rejected.push(reject(
            "all",
            "batch_size",
            "batch_size = max is not allowed with other batch sizes: expected max alone, or whole numbers".into(),
        ));
    }
    if req.batch_cap == Some(0) {
        rejected.push(reject(
            "all",
            "batch_cap",
            "batch_cap = 0 is not allowed: expected a whole number ≥ 1".into(),
        ));
    }
    if req.memory_limit_bytes == Some(0) {
        rejected.push(reject(
            "all",
            "memory_limit",
            "memory_limit = 0 is not allowed: expected a size such as 8G or 512MiB".into(),
        ));
    }
    let mut folder_class_count = None;
    let data = match parse_data(&req.data) {
        Ok((data, path)) if remote.is_some() => {
            if data == "folder" && req.num_classes.is_none() {
                rejected.push(reject(
                    "all",
                    "num_classes",
                    "num_classes = (missing) is not allowed with data = folder on a remote host: expected the number of class folders (the worker there checks it)".into(),
                ));
            }
            Some((data, path))
        }
        Ok((data, path)) => {
            match (data.as_str(), &path) {
                ("cifar10", Some(p)) if !std::path::Path::new(p).is_dir() => rejected.push(reject(
                    "all",
                    "data",
                    format!("data = cifar10:{p} is not allowed: expected an existing directory with CIFAR-10's binary batches"),
                )),
                ("text", Some(p)) if !std::path::Path::new(p).is_file() => rejected.push(reject(
                    "all",
                    "data",
                    format!("data = text:{p} is not allowed: expected an existing file (its bytes are the tokens)"),
                )),
                ("folder", Some(p)) => match folder_classes(std::path::Path::new(p)) {
                    Err(why) => rejected.push(reject(
                        "all",
                        "data",
                        format!("data = folder:{p} is not allowed: {why}; expected an image folder (train/<class>/ and val/<class>/, or <class>/)"),
                    )),
                    Ok(classes) => {
                        let count = classes.len() as i64;
                        match req.num_classes {
                            Some(n) if n != count => rejected.push(reject(
                                "all",
                                "num_classes",
                                format!("num_classes = {n} is not allowed: {p} has {count} class folders; expected {count} or no value"),
                            )),
                            _ => folder_class_count = Some(count),
                        }
                    }
                },
                _ => {}
            }
            Some((data, path))
        }
        Err(r) => {
            rejected.push(r);
            None
        }
    };
    if !rejected.is_empty() {
        return SweepPlan {
            configs: Vec::new(),
            rejected,
            repeats,
            memory_limit_bytes: req.memory_limit_bytes,
        };
    }
    let device = req.device.clone().unwrap_or_else(|| {
        if gpus_present {
            "cuda:0".into()
        } else {
            "cpu".into()
        }
    });
    if req.batch_max && device == "cpu" && req.memory_limit_bytes.is_none() {
        rejected.push(reject(
            "all",
            "memory_limit",
            "batch_size = max on the CPU needs a memory limit: give memory_limit (--memory-limit 8G), the resident memory a probe may use".into(),
        ));
        return SweepPlan {
            configs: Vec::new(),
            rejected,
            repeats,
            memory_limit_bytes: req.memory_limit_bytes,
        };
    }
    let search = req.batch_max.then(|| BatchSearch {
        cap: req.batch_cap.unwrap_or(DEFAULT_CAP),
        memory_limit_bytes: req.memory_limit_bytes,
    });
    // A search plans each configuration once, at batch 1 (the first probe).
    let batches: Vec<i64> = if req.batch_max {
        vec![1]
    } else {
        req.batch_size.clone()
    };
    let mut configs = Vec::new();
    for given in &req.framework {
        let resolved = match remote {
            None => resolve_framework(given),
            Some(r) => r
                .host
                .resolve(given)
                .map_err(|message| reject(given, "framework", message)),
        };
        let (framework, env, worker) = match resolved {
            Ok(x) => x,
            Err(r) => {
                rejected.push(r);
                continue;
            }
        };
        for model in &req.model {
            for precision in &req.precision {
                for compile in &req.compile {
                    for devices in &req.devices {
                        for batch in &batches {
                            let compiled = if compile == "off" {
                                String::new()
                            } else {
                                format!(" compile={compile}")
                            };
                            let b = if search.is_some() {
                                "max".to_owned()
                            } else {
                                batch.to_string()
                            };
                            let place = remote
                                .map(|r| format!(" on {}", r.host.name))
                                .unwrap_or_default();
                            let spread = match req.nodes {
                                Some(n) if n > 1 => format!(" ×{n} nodes"),
                                _ => String::new(),
                            };
                            let label = format!(
                                "{given} {model} {precision}{compiled} ×{devices}{spread} b{b}{place}"
                            );
                            let mut raw = RawSpec::new(model, *batch);
                            raw.precision.clone_from(precision);
                            raw.compile.clone_from(compile);
                            raw.device.clone_from(&device);
                            raw.devices = *devices;
                            raw.nodes = req.nodes;
                            if let Some(p) = req.parallel.as_ref().filter(|_| *devices > 1) {
                                raw.parallel.clone_from(p);
                            }
                            raw.steps = req.steps;
                            raw.epochs = req.epochs;
                            if let Some((data, path)) = &data {
                                raw.data.clone_from(data);
                                raw.data_path.clone_from(path);
                            }
                            raw.num_classes = req.num_classes.or(folder_class_count);
                            raw.loader_workers = req.loader_workers;
                            raw.seq_len = req.seq_len;
                            if let Some(t) = req.target_accuracy {
                                raw.target_accuracy = Some(t);
                                raw.stop_at_target = req.stop_at_target;
                            }
                            raw.eval_every_steps = req.eval_every_steps;
                            if let Some(t) = req.target_loss {
                                raw.target_loss = Some(t);
                                raw.stop_at_target = req.stop_at_target;
                            }
                            if let Some(ws) = req.window_steps {
                                raw.window_steps = ws;
                            }
                            if let Some(lr) = req.lr {
                                raw.lr = lr;
                            }
                            raw.threads = req.threads;
                            raw.profile = req.profile;
                            let checked = CheckedSpec::new(raw).and_then(|c| {
                                check_runnable(&c.spec, framework, &[framework], machine)
                                    .map(|()| c)
                            });
                            match checked {
                                Ok(spec) => configs.push(PlannedConfig {
                                    framework,
                                    env: env.clone(),
                                    spec,
                                    label,
                                    worker: worker.clone(),
                                    batch_search: search,
                                    searched: None,
                                    remote: remote.cloned(),
                                }),
                                Err(e) => rejected.push(Rejected {
                                    label,
                                    field: e.field.clone(),
                                    message: e.to_string(),
                                }),
                            }
                        }
                    }
                }
            }
        }
    }
    SweepPlan {
        configs,
        rejected,
        repeats,
        memory_limit_bytes: req.memory_limit_bytes,
    }
}

/// A run the sweep queued (stored as `queued`), as the run loop takes it.
#[derive(Debug, Clone)]
pub struct Job {
    pub run_id: i64,
    pub spec: CheckedSpec,
    pub label: String,
    /// Index into the plan's configurations.
    pub config: usize,
    pub worker: WorkerCommand,
    /// Resident memory its worker may use (the sweep's `memory_limit`).
    pub memory_limit_bytes: Option<u64>,
    /// The remote host it runs on; `None`: this machine.
    pub remote: Option<RemoteTarget>,
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
    Ok(Some(reject(
        "all",
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
    match &req.host {
        Some(name) => plan_on_host(req, name),
        None => Ok(plan_sweep(req, host.machine(), host.gpu_count() > 0)),
    }
}

/// Checks every combination of `req` on the remote host `name` as its last
/// check found it (`trainbench host check`).
pub fn plan_on_host(req: &SweepRequest, name: &str) -> AppResult<SweepPlan> {
    let h = crate::remote::host(name)?;
    let inv = h.inventory.clone().ok_or_else(|| AppError::BadInput {
        field: "host".into(),
        message: format!("host = {name} has not been checked: run `trainbench host check {name}`"),
    })?;
    // A Slurm host: what one node of its partition has; else the host itself.
    let (machine, nodes) = match &inv.slurm {
        Some(s) => (
            Machine {
                gpus: s.gpus_per_node,
                cpu_cores: s.cpus_per_node,
            },
            Some(s.nodes),
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
            None => Some(format!(
                "nodes = {n} is not allowed on host {name}: several nodes run through Slurm or a host's peers; expected 1 (add a Slurm login host with `trainbench host add NAME ssh://login --slurm`, or one with `--peer ssh://node2`)"
            )),
            Some(have) if i64::from(have) < n => Some(format!(
                "nodes = {n} is not allowed on host {name}: it has {have} node(s){}; expected at most {have}",
                if inv.slurm.is_some() { " in its partition" } else { " (itself and its peers)" }
            )),
            _ => None,
        };
        if let Some(message) = why {
            plan.configs.clear();
            plan.rejected.insert(0, reject("all", "nodes", message));
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
    let mut queued = Vec::new();
    for (c, r) in interleaved_plan(plan.configs.len(), plan.repeats as usize) {
        let cfg = &plan.configs[c];
        let id = store.insert_run(&NewRun {
            sweep_id: Some(sweep),
            repeat_index: r as u32,
            price_offering: price.map(str::to_string),
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
        Ok(plan)
    }

    /// `None` when there is no price or the table has the offering; else
    /// why not, naming the table's offerings.
    pub fn check_price(&self, price: Option<&str>) -> AppResult<Option<Rejected>> {
        Ok(check_price(&self.store, price)?)
    }

    /// Creates the sweep before its batch search (`search_batches`), so that
    /// the probes are stored under it as they end.
    pub(crate) fn create_sweep(&self, plan: &SweepPlan, command: &str) -> AppResult<i64> {
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
        Ok(queue_sweep(&self.store, plan, price, command)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_planned_spec_is_typed_and_the_stored_row_takes_its_values_from_it() {
        let req = SweepRequest {
            model: vec!["resnet_mini".into()],
            precision: vec!["fp32".into(), "amp-bf16".into()],
            batch_size: vec![24],
            steps: Some(7),
            ..SweepRequest::default()
        };
        let cpu = Machine {
            gpus: 0,
            cpu_cores: 2,
        };
        let plan = plan_sweep(&req, cpu, false);
        assert!(plan.rejected.is_empty(), "{:?}", plan.rejected);
        assert_eq!(plan.configs.len(), 2);
        let spec = &plan.configs[1].spec.spec;
        assert_eq!(spec.batch_size, 24);
        assert_eq!(spec.precision, trainbench_core::Precision::AmpBf16);
        assert_eq!(spec.length, trainbench_core::spec::Length::Steps(7));

        let store = Store::open_in_memory().expect("an in-memory store");
        let (_, jobs) = queue_sweep(&store, &plan, None, "test").expect("queued");
        for job in &jobs {
            let row = store.run_row(job.run_id).expect("stored");
            let spec = &plan.configs[job.config].spec.spec;
            assert_eq!(row.batch_size, 24, "not a default");
            assert_eq!(row.precision, spec.precision);
            assert_eq!(row.framework, Framework::Tch);
            assert_eq!(row.device, spec.device);
            assert_eq!(
                row.config_key,
                trainbench_core::spec::ConfigKeys::of(Framework::Tch, None, spec).config
            );
            // What the libtorch worker reads validates to the same spec.
            let reread = trainbench_core::RunSpec::from_json(&job.spec.raw.to_json())
                .expect("the stored spec validates");
            assert_eq!(reread.batch_size, 24);
            assert_eq!(reread.precision, spec.precision);
        }
    }
}

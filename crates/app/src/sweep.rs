//! A sweep: the cross product of the values chosen for each setting, checked
//! before anything runs, then queued (configurations × repeats, interleaved).
//! The CLI's flags and the desktop wizard both fill a [`SweepRequest`], so
//! both give the same verdict on every combination.

use serde::{Deserialize, Serialize};
use serde_json::json;
use trainbench_core::spec::{check_runnable, interleaved_plan, Machine, RunSpec, FRAMEWORKS};
use trainbench_store::{NewRun, Store, StoreError};

use crate::error::AppResult;
use crate::host::Host;
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
    pub parallel: Option<String>,
    pub batch_size: Vec<i64>,
    /// `cpu` or `cuda:N`; the first GPU when there is one, else the CPU.
    pub device: Option<String>,
    pub steps: Option<i64>,
    pub epochs: Option<i64>,
    /// `synthetic`, `mnist` or `cifar10:DIR`.
    pub data: String,
    pub num_classes: Option<i64>,
    pub target_accuracy: Option<f64>,
    pub stop_at_target: bool,
    pub window_steps: Option<i64>,
    pub threads: Option<i64>,
    pub lr: Option<f64>,
    pub repeats: i64,
    /// A price-table offering for cost per epoch.
    pub price: Option<String>,
}

impl Default for SweepRequest {
    fn default() -> Self {
        SweepRequest {
            model: vec!["resnet_mini".into()],
            framework: vec!["tch".into()],
            precision: vec!["fp32".into()],
            compile: vec!["off".into()],
            devices: vec![1],
            parallel: None,
            batch_size: vec![64],
            device: None,
            steps: Some(100),
            epochs: None,
            data: "synthetic".into(),
            num_classes: None,
            target_accuracy: None,
            stop_at_target: true,
            window_steps: None,
            threads: None,
            lr: None,
            repeats: 1,
            price: None,
        }
    }
}

/// One configuration that can run.
#[derive(Debug, Clone)]
pub struct PlannedConfig {
    pub framework: String,
    /// A registered environment (`framework@name`); `None` for the framework's own.
    pub env: Option<String>,
    pub spec: serde_json::Map<String, serde_json::Value>,
    pub label: String,
    pub worker: WorkerCommand,
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
pub fn resolve_framework(given: &str) -> Result<(String, Option<String>, WorkerCommand), Rejected> {
    let (framework, env) = match given.split_once('@') {
        Some((f, e)) => (f, Some(e.to_owned())),
        None => (given, None),
    };
    if framework == "tch" {
        if env.is_some() {
            return Err(reject(
                given,
                "framework",
                format!("framework = {given} is not allowed: expected tch without an environment (it links libtorch)"),
            ));
        }
        return Ok(("tch".into(), None, WorkerCommand::tch()));
    }
    if !FRAMEWORKS.contains(&framework) {
        return Err(reject(
            given,
            "framework",
            format!(
                "framework = {framework} is not allowed: expected one of {} (optionally FRAMEWORK@ENVIRONMENT)",
                FRAMEWORKS.join(", ")
            ),
        ));
    }
    match envs::resolve(framework, env.as_deref()) {
        Ok(e) => Ok((framework.to_owned(), env, envs::worker_command(&e))),
        Err(e) => {
            let field = match &e {
                envs::EnvError::Bad { field, .. } => (*field).to_string(),
                _ => "framework".into(),
            };
            Err(reject(given, &field, e.to_string()))
        }
    }
}

/// `synthetic`, `mnist`, `cifar10:DIR` → (source, path).
pub fn parse_data(s: &str) -> Result<(String, Option<String>), Rejected> {
    match s {
        "synthetic" | "mnist" => Ok((s.to_owned(), None)),
        other => match other.strip_prefix("cifar10:") {
            Some(dir) if !dir.is_empty() => Ok(("cifar10".into(), Some(dir.to_owned()))),
            _ => Err(reject(
                "all",
                "data",
                format!("data = {other} is not allowed: expected synthetic, mnist or cifar10:DIR"),
            )),
        },
    }
}

/// Checks every combination of `req` on this machine. Settings shared by all
/// combinations that are wrong are reported once, with the label `all`.
pub fn plan_sweep(req: &SweepRequest, machine: Machine, gpus_present: bool) -> SweepPlan {
    let mut rejected = Vec::new();
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
        ("batch_size", req.batch_size.is_empty()),
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
    let data = match parse_data(&req.data) {
        Ok((data, path)) => {
            if let Some(p) = &path {
                if !std::path::Path::new(p).is_dir() {
                    rejected.push(reject(
                        "all",
                        "data",
                        format!("data = cifar10:{p} is not allowed: expected an existing directory with CIFAR-10's binary batches"),
                    ));
                }
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
        };
    }
    let device = req.device.clone().unwrap_or_else(|| {
        if gpus_present {
            "cuda:0".into()
        } else {
            "cpu".into()
        }
    });
    let mut configs = Vec::new();
    for given in &req.framework {
        let (framework, env, worker) = match resolve_framework(given) {
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
                        for batch in &req.batch_size {
                            let compiled = if compile == "off" {
                                String::new()
                            } else {
                                format!(" compile={compile}")
                            };
                            let label = format!(
                                "{given} {model} {precision}{compiled} ×{devices} b{batch}"
                            );
                            let mut spec = serde_json::Map::new();
                            spec.insert("model".into(), json!(model));
                            spec.insert("precision".into(), json!(precision));
                            spec.insert("compile".into(), json!(compile));
                            spec.insert("device".into(), json!(device));
                            spec.insert("devices".into(), json!(devices));
                            if let Some(p) = req.parallel.as_ref().filter(|_| *devices > 1) {
                                spec.insert("parallel".into(), json!(p));
                            }
                            spec.insert("batch_size".into(), json!(batch));
                            if let Some(s) = req.steps {
                                spec.insert("steps".into(), json!(s));
                            }
                            if let Some(e) = req.epochs {
                                spec.insert("epochs".into(), json!(e));
                            }
                            if let Some((data, path)) = &data {
                                spec.insert("data".into(), json!(data));
                                if let Some(p) = path {
                                    spec.insert("data_path".into(), json!(p));
                                }
                            }
                            if let Some(n) = req.num_classes {
                                spec.insert("num_classes".into(), json!(n));
                            }
                            if let Some(t) = req.target_accuracy {
                                spec.insert("target_accuracy".into(), json!(t));
                                if req.stop_at_target {
                                    spec.insert("stop_at_target".into(), json!(true));
                                }
                            }
                            if let Some(ws) = req.window_steps {
                                spec.insert("window_steps".into(), json!(ws));
                            }
                            if let Some(lr) = req.lr {
                                spec.insert("lr".into(), json!(lr));
                            }
                            if let Some(t) = req.threads {
                                spec.insert("threads".into(), json!(t));
                            }
                            let checked = RunSpec::from_json(
                                &serde_json::Value::Object(spec.clone()).to_string(),
                            )
                            .and_then(|parsed| {
                                check_runnable(&parsed, &framework, &[framework.as_str()], machine)
                            });
                            match checked {
                                Ok(()) => configs.push(PlannedConfig {
                                    framework: framework.clone(),
                                    env: env.clone(),
                                    spec,
                                    label,
                                    worker: worker.clone(),
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
    }
}

/// A run the sweep queued (stored as `queued`), as the run loop takes it.
#[derive(Debug, Clone)]
pub struct Job {
    pub run_id: i64,
    pub spec_json: String,
    pub label: String,
    /// Index into the plan's configurations.
    pub config: usize,
    pub worker: WorkerCommand,
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

/// Stores the sweep and its runs (status `queued`), repeats interleaved.
pub(crate) fn queue_sweep(
    store: &Store,
    plan: &SweepPlan,
    price: Option<&str>,
    command: &str,
) -> Result<(i64, Vec<Job>), StoreError> {
    let sweep = store.create_sweep(command, plan.configs.len() as u32, plan.repeats)?;
    let mut queued = Vec::new();
    for (c, r) in interleaved_plan(plan.configs.len(), plan.repeats as usize) {
        let cfg = &plan.configs[c];
        let spec_json = serde_json::Value::Object(cfg.spec.clone()).to_string();
        let key = json!({"framework": cfg.framework, "environment": cfg.env, "spec": cfg.spec})
            .to_string();
        let text = |k: &str| cfg.spec[k].as_str().unwrap_or_default().to_owned();
        let id = store.insert_run(&NewRun {
            sweep_id: Some(sweep),
            config_key: key,
            repeat_index: r as u32,
            framework: cfg.framework.clone(),
            model: text("model"),
            precision: text("precision"),
            device: text("device"),
            devices: cfg.spec["devices"].as_u64().unwrap_or(1) as u32,
            batch_size: cfg.spec["batch_size"].as_u64().unwrap_or(0),
            data: text("data"),
            spec_json: spec_json.clone(),
            price_offering: price.map(str::to_string),
        })?;
        queued.push(Job {
            run_id: id,
            spec_json,
            label: cfg.label.clone(),
            config: c,
            worker: cfg.worker.clone(),
        });
    }
    Ok((sweep, queued))
}

impl Workspace {
    /// Checks every combination of `req` on this machine, and the price
    /// offering against this database's table (refused first when unknown).
    pub fn plan(&self, req: &SweepRequest, host: &Host) -> AppResult<SweepPlan> {
        let mut plan = plan_sweep(req, host.machine(), host.gpu_count() > 0);
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

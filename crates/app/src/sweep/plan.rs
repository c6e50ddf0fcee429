//! Checking a sweep before anything runs: each framework resolved, each
//! combination built into a spec and checked against the machine (this one or
//! a remote host), what cannot run named with its field and value.

use super::combination::{check_env, combinations};
use super::*;

/// `tch`, `pytorch`, `pytorch@NAME`, `jax==0.7.2` … → (framework,
/// environment name, worker). A release (`FRAMEWORK==VERSION`) runs in its
/// own environment: one not installed yet resolves to the worker it will
/// have, and the plan lists it to install before anything is queued
/// ([`missing_releases`], `SweepPlan::to_install`).
pub fn resolve_framework(
    given: &str,
) -> Result<(Framework, Option<String>, WorkerCommand), Rejected> {
    match trainbench_core::versions::parse_pin(given) {
        Err(e) => return Err(Rejected::combination(given, "framework", e.to_string())),
        Ok(Some(pin)) => {
            if envs::pinned::env_for(pin).ready {
                envs::pinned::touch(pin);
            }
            return Ok((
                pin.framework,
                Some(pin.to_string()),
                envs::pinned::worker_command(pin),
            ));
        }
        Ok(None) => {}
    }
    let (framework, env) = match given.split_once('@') {
        Some((f, e)) => (f, Some(e.to_owned())),
        None => (given, None),
    };
    let framework = Framework::parse(framework).map_err(|e| {
        Rejected::combination(
            given,
            "framework",
            format!("{e} (optionally FRAMEWORK@ENVIRONMENT)"),
        )
    })?;
    if framework == Framework::Tch {
        if env.is_some() {
            return Err(Rejected::combination(
                given,
                "framework",
                format!("framework = {given} is not allowed: expected tch without an environment (it links libtorch)"),
            ));
        }
        let tch = WorkerCommand::tch();
        if let Some(problem) = crate::frameworks::tch_libtorch_problem(&tch) {
            return Err(Rejected::combination(
                given,
                "framework",
                format!("framework = tch is not available on this machine: {problem}"),
            ));
        }
        return Ok((Framework::Tch, None, tch));
    }
    match envs::resolve(framework, env.as_deref()) {
        Ok(e) => Ok((framework, env, envs::worker_command(&e))),
        Err(e) => {
            let field = match &e {
                envs::EnvError::Bad { field, .. } => (*field).to_string(),
                _ => "framework".into(),
            };
            Err(Rejected::combination(given, &field, e.to_string()))
        }
    }
}

/// The releases named (`FRAMEWORK==VERSION`) whose environment is not
/// installed yet, each once, in the order named; a bad or unsupported
/// release is an error naming the field.
pub fn missing_releases(
    frameworks: &[String],
) -> Result<Vec<trainbench_core::versions::Pin>, trainbench_core::SpecError> {
    let mut out = Vec::new();
    for given in frameworks {
        if let Some(pin) = trainbench_core::versions::parse_pin(given)? {
            if !envs::pinned::env_for(pin).ready && !out.contains(&pin) {
                out.push(pin);
            }
        }
    }
    Ok(out)
}

/// Every release named (`FRAMEWORK==VERSION`), valid ones only.
pub fn named_releases(frameworks: &[String]) -> Vec<trainbench_core::versions::Pin> {
    frameworks
        .iter()
        .filter_map(|f| trainbench_core::versions::parse_pin(f).ok().flatten())
        .collect()
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
            _ => Err(Rejected::shared("data",
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
/// combinations that are wrong are reported once, as shared (no label).
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
    let repeats = check_shared(req, remote, &mut rejected);
    let (data, folder_class_count) = check_data(req, remote, &mut rejected);
    let alternatives = check_env(req, &mut rejected);
    let shape = super::model_file::apply_input_shape(req, &mut rejected);
    if let (Some(name), true) = (&req.model_name, req.model.len() > 1) {
        rejected.push(Rejected::shared(
            "model_name",
            format!(
                "model_name = {name} is not allowed with {} models: expected one model (the name labels it)",
                req.model.len()
            ),
        ));
    }
    let mut files = super::model_file::ModelFiles::read(
        req,
        remote.map(|r| r.host.name.as_str()),
        &mut rejected,
    );
    let host = remote.map(|r| r.host.name.as_str());
    super::script::read_scripts(req, host, &mut files, &mut rejected);
    let arguments = super::script::argument_alternatives(req, &mut rejected);
    if !rejected.is_empty() {
        return refused(req, rejected, repeats);
    }
    let device = req.device.clone().unwrap_or_else(|| {
        if gpus_present {
            "cuda:0".into()
        } else {
            "cpu".into()
        }
    });
    if req.batch_max && device == "cpu" && req.memory_limit_bytes.is_none() {
        rejected.push(Rejected::shared("memory_limit",
            "batch_size = max on the CPU needs a memory limit: give memory_limit (--memory-limit 8G), the resident memory a probe may use".into(),
        ));
        return refused(req, rejected, repeats);
    }
    let search = req.batch_max.then(|| BatchSearch {
        cap: req.batch_cap.unwrap_or(DEFAULT_CAP),
        from: req.batch_from.unwrap_or(1),
        memory_limit_bytes: req.memory_limit_bytes,
    });
    // A search plans each configuration once, at its first probe's batch.
    let batches: Vec<i64> = if req.batch_max {
        vec![i64::from(req.batch_from.unwrap_or(1))]
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
                .map_err(|message| Rejected::combination(given, "framework", message)),
        };
        let (framework, env, worker) = match resolved {
            Ok(x) => x,
            Err(r) => {
                rejected.push(r);
                continue;
            }
        };
        for c in combinations(req, given, &batches, &alternatives, &arguments) {
            let label = c.label(req, search.is_some(), remote);
            let mut raw = c.raw_spec(req, &device, data.as_ref(), folder_class_count);
            super::model_file::set_input(&mut raw, shape, req.vocab_size);
            files.apply(&mut raw);
            let checked = CheckedSpec::new(raw).and_then(|c| {
                check_runnable(&c.spec, framework, &[framework], machine).map(|()| c)
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
                Err(e) => rejected.push(Rejected::combination(label, &e.field, e.to_string())),
            }
        }
    }
    // Library models the worker's environment does not have: refused now,
    // with the closest names (on this machine; a remote host's libraries
    // answer when its worker starts).
    if remote.is_none() {
        super::library::refuse_unknown(&mut configs, &mut rejected);
    }
    // Releases named and not installed: made before anything is queued
    // (on this machine only; a remote host resolves its own environments).
    let to_install = if remote.is_none() {
        missing_releases(&req.framework).unwrap_or_default()
    } else {
        Vec::new()
    };
    SweepPlan {
        configs,
        rejected,
        repeats,
        memory_limit_bytes: req.memory_limit_bytes,
        epoch_samples: epoch_samples(req),
        notes: to_install.iter().map(install_note).collect(),
        to_install,
        model_files: files,
    }
}

/// A plan that queues nothing: what was refused, and why.
fn refused(req: &SweepRequest, rejected: Vec<Rejected>, repeats: u32) -> SweepPlan {
    SweepPlan {
        configs: Vec::new(),
        rejected,
        repeats,
        memory_limit_bytes: req.memory_limit_bytes,
        epoch_samples: epoch_samples(req),
        notes: Vec::new(),
        to_install: Vec::new(),
        model_files: Default::default(),
    }
}

/// What the plan says of a release it will install first.
fn install_note(pin: &trainbench_core::versions::Pin) -> String {
    format!("{pin} is not installed here: its environment is made from PyPI first (the CPU or CUDA build as this machine has; under 1 GB of disk for a JAX release, several GB for PyTorch with CUDA; kept for later runs under the releases' disk budget)")
}

/// The epoch size asked for cost per epoch, when a valid one was.
fn epoch_samples(req: &SweepRequest) -> Option<u64> {
    req.epoch_size
        .and_then(|n| u64::try_from(n).ok())
        .filter(|&n| n > 0)
}

/// The settings every combination shares, checked: what is refused is
/// pushed to `rejected`; the repeats (1 when refused).
fn check_shared(
    req: &SweepRequest,
    remote: Option<&RemoteTarget>,
    rejected: &mut Vec<Rejected>,
) -> u32 {
    if let (None, Some(n)) = (remote, req.nodes.filter(|&n| n != 1)) {
        rejected.push(Rejected::shared("nodes",
            format!("nodes = {n} is not allowed on this machine: expected 1 (several nodes run on a Slurm host, a host with peers or a Ray cluster: `trainbench run --host NAME --nodes {n}`)"),
        ));
    }
    if let (Some(r), true) = (remote, req.batch_max) {
        rejected.push(Rejected::shared("batch_size",
            format!(
                "batch_size = max is not allowed on host {}: the batch search runs on this machine only so far; expected whole numbers",
                r.host.name
            ),
        ));
    }
    let repeats = match u32::try_from(req.repeats) {
        Ok(r) if r >= 1 => r,
        _ => {
            rejected.push(Rejected::shared(
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
            rejected.push(Rejected::shared(
                field,
                format!("{field} is empty: expected at least one value"),
            ));
        }
    }
    match (req.steps, req.epochs) {
        (Some(_), Some(_)) => rejected.push(Rejected::shared(
            "steps",
            "give either steps or epochs, not both".into(),
        )),
        // A training script may run as long as it runs.
        (None, None)
            if req
                .model
                .iter()
                .all(|m| m.starts_with(trainbench_core::models::script::PREFIX)) => {}
        (None, None) => rejected.push(Rejected::shared("steps", "give steps or epochs".into())),
        _ => {}
    }
    if req.batch_max && !req.batch_size.is_empty() {
        rejected.push(Rejected::shared("batch_size",
            "batch_size = max is not allowed with other batch sizes: expected max alone, or whole numbers".into(),
        ));
    }
    if req.batch_from == Some(0) {
        rejected.push(Rejected::shared(
            "batch_from",
            "batch_from = 0 is not allowed: expected a whole number ≥ 1".into(),
        ));
    }
    if req.batch_from.is_some() && !req.batch_max {
        rejected.push(Rejected::shared(
            "batch_from",
            "batch_from is only allowed with batch_size = max (the first batch the search tries)"
                .into(),
        ));
    }
    if req.batch_cap == Some(0) {
        rejected.push(Rejected::shared(
            "batch_cap",
            "batch_cap = 0 is not allowed: expected a whole number ≥ 1".into(),
        ));
    }
    if let Some(n) = req.epoch_size.filter(|&n| n < 1) {
        rejected.push(Rejected::shared(
            "epoch_size",
            format!("epoch_size = {n} is not allowed: expected a whole number of samples ≥ 1 (e.g. 1281167, ImageNet-1k's training split)"),
        ));
    }
    if req.memory_limit_bytes == Some(0) {
        rejected.push(Rejected::shared(
            "memory_limit",
            "memory_limit = 0 is not allowed: expected a size such as 8G or 512MiB".into(),
        ));
    }
    repeats
}

/// The data source and its folder, checked on this machine (a remote host's
/// worker checks its own); an image folder's class count.
fn check_data(
    req: &SweepRequest,
    remote: Option<&RemoteTarget>,
    rejected: &mut Vec<Rejected>,
) -> (Option<(String, Option<String>)>, Option<i64>) {
    let mut folder_class_count = None;
    let data = match parse_data(&req.data) {
        Ok((data, path)) if remote.is_some() => {
            if data == "folder" && req.num_classes.is_none() {
                rejected.push(Rejected::shared("num_classes",
                    "num_classes = (missing) is not allowed with data = folder on a remote host: expected the number of class folders (the worker there checks it)".into(),
                ));
            }
            Some((data, path))
        }
        Ok((data, path)) => {
            match (data.as_str(), &path) {
                ("cifar10", Some(p)) if !std::path::Path::new(p).is_dir() => rejected.push(Rejected::shared("data",
                    format!("data = cifar10:{p} is not allowed: expected an existing directory with CIFAR-10's binary batches"),
                )),
                ("text", Some(p)) if !std::path::Path::new(p).is_file() => rejected.push(Rejected::shared("data",
                    format!("data = text:{p} is not allowed: expected an existing file (its bytes are the tokens)"),
                )),
                ("folder", Some(p)) => match folder_classes(std::path::Path::new(p)) {
                    Err(why) => rejected.push(Rejected::shared("data",
                        format!("data = folder:{p} is not allowed: {why}; expected an image folder (train/<class>/ and val/<class>/, or <class>/)"),
                    )),
                    Ok(classes) => {
                        let count = classes.len() as i64;
                        match req.num_classes {
                            Some(n) if n != count => rejected.push(Rejected::shared("num_classes",
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
    (data, folder_class_count)
}

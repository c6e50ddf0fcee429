//! One combination of a sweep's values (model, precision, compile, devices,
//! batch, threads, cuDNN benchmark, environment variables): its label as a
//! person reads it and its spec with the request's shared settings.

use super::*;
use trainbench_core::compare::{cudnn_benchmark_words, threads_words};
use trainbench_core::spec::env::{self, WorkerEnv};

/// The `env` sweep's alternatives, each checked (`spec::env`): one with
/// nothing set when none are given.
pub(super) fn check_env(req: &SweepRequest, rejected: &mut Vec<Rejected>) -> Vec<WorkerEnv> {
    if req.env.is_empty() {
        return vec![WorkerEnv::new()];
    }
    let mut out: Vec<WorkerEnv> = Vec::new();
    for text in &req.env {
        match env::parse_alternative(text) {
            Ok(e) if out.contains(&e) => rejected.push(Rejected::shared(
                "env",
                format!("env = {text} is given twice: expected each alternative once"),
            )),
            Ok(e) => out.push(e),
            Err(e) => rejected.push(Rejected::shared("env", e.to_string())),
        }
    }
    out
}

/// One combination of the sweep's values.
pub(super) struct Combination<'a> {
    given: &'a str,
    model: &'a str,
    precision: &'a str,
    compile: &'a str,
    devices: i64,
    batch: i64,
    threads: Option<i64>,
    cudnn_benchmark: Option<bool>,
    settings: &'a WorkerEnv,
    /// A training script's arguments (empty for other models).
    args: &'a [String],
}

/// Each value given, or one `None` (the worker's default) when none is.
fn each_or_none<T: Copy>(given: &[T]) -> Vec<Option<T>> {
    if given.is_empty() {
        vec![None]
    } else {
        given.iter().copied().map(Some).collect()
    }
}

/// Every combination of `req`'s values for the framework `given`, in the
/// order a person reads the sweep (model, precision, compile, devices,
/// batch, threads, cuDNN benchmark, then the environment variables'
/// alternatives).
pub(super) fn combinations<'a>(
    req: &'a SweepRequest,
    given: &'a str,
    batches: &'a [i64],
    alternatives: &'a [WorkerEnv],
    arguments: &'a [Vec<String>],
) -> Vec<Combination<'a>> {
    let threads = each_or_none(&req.threads);
    let benchmark = each_or_none(&req.cudnn_benchmark);
    // The settings' alternatives: threads × cuDNN benchmark × variables.
    let settings: Vec<(Option<i64>, Option<bool>, &WorkerEnv)> = threads
        .iter()
        .flat_map(|&t| benchmark.iter().map(move |&b| (t, b)))
        .flat_map(|(t, b)| alternatives.iter().map(move |a| (t, b, a)))
        .collect();
    let mut out = Vec::new();
    for model in &req.model {
        for precision in &req.precision {
            for compile in &req.compile {
                for &devices in &req.devices {
                    for &batch in batches {
                        for &(threads, cudnn_benchmark, settings) in &settings {
                            for args in arguments {
                                out.push(Combination {
                                    given,
                                    model,
                                    precision,
                                    compile,
                                    devices,
                                    batch,
                                    threads,
                                    cudnn_benchmark,
                                    settings,
                                    args,
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

impl Combination<'_> {
    /// How the combination is named (`pytorch vit_tiny amp-bf16 ×1 b64`).
    pub(super) fn label(
        &self,
        req: &SweepRequest,
        searched: bool,
        remote: Option<&RemoteTarget>,
    ) -> String {
        let compiled = if self.compile == "off" {
            String::new()
        } else {
            format!(" compile={}", self.compile)
        };
        let b = if searched {
            "max".to_owned()
        } else {
            self.batch.to_string()
        };
        let place = remote
            .map(|r| format!(" on {}", r.host.name))
            .unwrap_or_default();
        let spread = match req.nodes {
            Some(n) if n > 1 => format!(" ×{n} nodes"),
            _ => String::new(),
        };
        let px = req
            .image_size
            .map(|s| format!(" {s}px"))
            .unwrap_or_default();
        let threads = self
            .threads
            .map(|t| format!(" {}", threads_words(t)))
            .unwrap_or_default();
        let benchmark = self
            .cudnn_benchmark
            .map(|on| format!(" {}", cudnn_benchmark_words(on)))
            .unwrap_or_default()
            + &req
                .loader_workers
                .map(|w| format!(" {w} loader worker{}", if w == 1 { "" } else { "s" }))
                .unwrap_or_default();
        let settings = if self.settings.is_empty() {
            String::new()
        } else {
            format!(" {}", env::label(self.settings))
        };
        if let Some(script) = self
            .model
            .strip_prefix(trainbench_core::models::script::PREFIX)
        {
            let name = script.rsplit('/').next().unwrap_or(script);
            let args = super::script::args_label(self.args);
            return format!("{} {name}{args}{threads}{settings}{place}", self.given);
        }
        format!(
            "{} {}{px} {}{compiled} ×{}{spread} b{b}{threads}{benchmark}{settings}{place}",
            self.given, self.model, self.precision, self.devices
        )
    }

    /// The raw spec of the combination with the request's shared settings.
    pub(super) fn raw_spec(
        &self,
        req: &SweepRequest,
        device: &str,
        data: Option<&(String, Option<String>)>,
        folder_class_count: Option<i64>,
    ) -> RawSpec {
        let mut raw = RawSpec::new(self.model, self.batch);
        self.precision.clone_into(&mut raw.precision);
        self.compile.clone_into(&mut raw.compile);
        raw.device = device.to_owned();
        raw.devices = self.devices;
        raw.nodes = req.nodes;
        if let Some(p) = req.parallel.as_ref().filter(|_| self.devices > 1) {
            raw.parallel.clone_from(p);
        }
        raw.steps = req.steps;
        raw.epochs = req.epochs;
        if let Some((data, path)) = data {
            raw.data.clone_from(data);
            raw.data_path.clone_from(path);
        }
        raw.num_classes = req.num_classes.or(folder_class_count);
        raw.loader_workers = req.loader_workers;
        raw.seq_len = req.seq_len;
        raw.image_size = req.image_size;
        raw.model_name.clone_from(&req.model_name);
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
        raw.threads = self.threads;
        raw.env = self.settings.clone();
        raw.cudnn_benchmark = self.cudnn_benchmark;
        raw.profile = req.profile;
        raw.script_args = self.args.to_vec();
        raw
    }
}

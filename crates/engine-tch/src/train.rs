//! The training loop: set-up, timed windows between device synchronisations,
//! periodic evaluation, memory peaks, and the protocol events that report them.

use tch::nn::{self, ModuleT, OptimizerConfig};
use tch::{Device, Kind, Reduction, Tensor};
use trainbench_core::models::ModelConfig;
use trainbench_core::protocol::{
    DeviceInfo, Event, OperatorProfile, OtherOps, PhaseSeries, StepPhase, StepTimings,
    PROTOCOL_VERSION,
};
use trainbench_core::spec::{self, DataSource, Length, Precision, ProfileRule, RunSpec};

use crate::clock::{monotonic_ns, peak_rss_bytes, since_process_start_s};
use crate::data::{self, Batches, Dataset};
use crate::error::WorkerError;
use crate::models::{self, InitMode};
use crate::profile;
use crate::shim::{self, AutocastDtype};

/// Receives the worker's events (stdout JSON lines, or the human report).
pub trait Sink {
    fn emit(&mut self, event: &Event);
}

/// libtorch version and CUDA variant, read from the wheel at build time.
pub const LIBTORCH_VERSION: &str = env!("TRAINBENCH_LIBTORCH_VERSION");
pub const LIBTORCH_CUDA: &str = env!("TRAINBENCH_LIBTORCH_CUDA");

const ADAMW_BETAS: (f64, f64) = (0.9, 0.999);
const ADAMW_EPS: f64 = 1e-8;
/// Evaluation batch size cap: evaluation is not timed, but must fit in memory.
const EVAL_BATCH: i64 = 512;

fn cpu_name() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("model name"))?;
    Some(line.split_once(':')?.1.trim().to_owned())
}

/// Threads for libtorch's intra-op pool: the spec's, else `OMP_NUM_THREADS`,
/// else every core.
pub fn thread_count(spec: &RunSpec) -> u32 {
    spec.threads
        .or_else(|| {
            std::env::var("OMP_NUM_THREADS")
                .ok()
                .and_then(|v| v.parse().ok())
        })
        .or_else(|| {
            std::thread::available_parallelism()
                .ok()
                .and_then(|n| u32::try_from(n.get()).ok())
        })
        .unwrap_or(1)
        .max(1)
}

fn resolve_device(spec: &RunSpec) -> Result<Device, WorkerError> {
    if spec.devices > 1 {
        return Err(WorkerError::unsupported(
            "devices",
            format!(
                "devices = {}: the libtorch worker trains on one device per process; for several devices use framework pytorch (DDP through torchrun), tensorflow (MirroredStrategy) or jax (sharded data parallelism)",
                spec.devices
            ),
        ));
    }
    match spec.device {
        spec::Device::Cpu => Ok(Device::Cpu),
        spec::Device::Cuda(i) => {
            let visible = if tch::Cuda::is_available() {
                tch::Cuda::device_count()
            } else {
                0
            };
            if i64::from(i) >= visible {
                return Err(WorkerError::unsupported(
                    "device",
                    format!("device = cuda:{i}: libtorch sees {visible} CUDA device(s) on this machine; use cpu or an index below {visible}"),
                ));
            }
            Ok(Device::Cuda(i as usize))
        }
    }
}

/// Checks the precision against the device and switches it on. Returns what it
/// means here, in words, and autocast's dtype if autocast is used.
fn apply_precision(
    precision: Precision,
    device: Device,
) -> Result<(String, Option<AutocastDtype>), WorkerError> {
    let cuda = device.is_cuda();
    let refuse = |why: &str| {
        Err(WorkerError::unsupported(
            "precision",
            format!("precision = {precision}: {why}"),
        ))
    };
    match precision {
        Precision::Fp32 => {
            if cuda {
                shim::set_tf32(false)?;
                Ok((
                    "fp32 weights and math; TF32 off for cuBLAS and cuDNN".into(),
                    None,
                ))
            } else {
                Ok(("fp32 weights and math".into(), None))
            }
        }
        Precision::Tf32 => {
            if !cuda {
                return refuse(
                    "TF32 is a CUDA tensor-core mode; the CPU has none (use fp32 or amp-bf16)",
                );
            }
            if !shim::cuda_bf16_native() {
                return refuse(
                    "this GPU has no TF32 tensor cores (they need compute capability 8.0 or newer)",
                );
            }
            shim::set_tf32(true)?;
            Ok((
                "fp32 weights; TF32 matmuls and convolutions (cuBLAS and cuDNN)".into(),
                None,
            ))
        }
        Precision::AmpBf16 => {
            if cuda && !shim::cuda_bf16_native() {
                return refuse("this GPU has no native bfloat16 (compute capability 8.0 or newer); use amp-fp16");
            }
            if cuda {
                shim::set_tf32(false)?;
            }
            Ok((
                "autocast to bfloat16 (fp32 master weights, no loss scaling)".into(),
                Some(AutocastDtype::BFloat16),
            ))
        }
        Precision::AmpFp16 => {
            if !cuda {
                return refuse("float16 autocast with loss scaling is a CUDA mode in this worker (on the CPU use amp-bf16)");
            }
            shim::set_tf32(false)?;
            Ok((
                "autocast to float16 with dynamic loss scaling (initial scale 65536, growth ×2 every 2000 finite steps, backoff ×0.5)".into(),
                Some(AutocastDtype::Float16),
            ))
        }
    }
}

/// Dynamic loss scaling as torch.amp.GradScaler does it.
#[derive(Debug)]
pub struct LossScaler {
    scale: Tensor,
    growth_tracker: Tensor,
    found_inf: Tensor,
}

impl LossScaler {
    pub fn new(device: Device) -> Self {
        LossScaler {
            scale: Tensor::from_slice(&[65536.0f32]).to_device(device),
            growth_tracker: Tensor::zeros([1], (Kind::Int, device)),
            found_inf: Tensor::zeros([1], (Kind::Float, device)),
        }
    }

    /// The current loss scale (reported in `done`: proof the scaler ran).
    pub fn scale(&self) -> Result<f64, WorkerError> {
        Ok(f64::try_from(&self.scale)?)
    }

    /// Backward of the scaled loss.
    pub fn backward(&self, loss: &Tensor) -> Result<(), WorkerError> {
        (loss * &self.scale).f_backward()?;
        Ok(())
    }

    /// Unscale the gradients, step unless one is not finite, then update the
    /// scale. Returns whether the optimizer stepped.
    pub fn unscale_step(
        &mut self,
        opt: &mut nn::Optimizer,
        params: &[Tensor],
    ) -> Result<bool, WorkerError> {
        let inv = self.scale.f_reciprocal()?;
        let _ = self.found_inf.f_zero_()?;
        for p in params {
            let mut g = p.grad();
            if g.defined() {
                let bad = g
                    .f_isfinite()?
                    .f_logical_not()?
                    .f_any()?
                    .f_to_kind(Kind::Float)?;
                self.found_inf = self.found_inf.f_maximum(&bad.f_reshape([1])?)?;
                let _ = g.f_mul_(&inv)?;
            }
        }
        let skip = f64::try_from(&self.found_inf)? > 0.0;
        if !skip {
            opt.step();
        }
        let _ = self.scale.f_internal_amp_update_scale_(
            &self.growth_tracker,
            &self.found_inf,
            2.0,
            0.5,
            2000,
        )?;
        Ok(!skip)
    }

    /// Backward of the scaled loss, then [`LossScaler::unscale_step`].
    #[cfg(test)]
    pub fn backward_step(
        &mut self,
        loss: &Tensor,
        opt: &mut nn::Optimizer,
        params: &[Tensor],
    ) -> Result<bool, WorkerError> {
        self.backward(loss)?;
        self.unscale_step(opt, params)
    }
}

/// Whether the model's head is one logit under a sigmoid (binary
/// cross-entropy, the fraud model's), not softmax classes.
fn binary_head(cfg: &ModelConfig) -> bool {
    matches!(cfg, ModelConfig::Encoder(e) if e.num_classes == 1)
}

/// Cross-entropy over the last axis (any leading axes: a decoder's
/// positions), or binary cross-entropy on one logit.
fn classification_loss(
    cfg: &ModelConfig,
    logits: &Tensor,
    y: &Tensor,
    reduction: Reduction,
) -> Result<Tensor, WorkerError> {
    if binary_head(cfg) {
        return Ok(logits
            .f_squeeze_dim(-1)?
            .f_binary_cross_entropy_with_logits(
                &y.f_to_kind(Kind::Float)?,
                None::<Tensor>,
                None::<Tensor>,
                reduction,
            )?);
    }
    let v = *logits.size().last().unwrap_or(&1);
    Ok(logits.f_reshape([-1, v])?.f_cross_entropy_loss(
        &y.f_reshape([-1])?,
        None::<Tensor>,
        reduction,
        -100,
        0.0,
    )?)
}

/// The model's inputs and targets from a batch: a decoder's sequence of
/// `seq_len + 1` tokens gives its first `seq_len` as inputs and, one on, the
/// next tokens as targets; other models take `x` and `y` as they are.
fn inputs_and_targets(
    cfg: &ModelConfig,
    x: &Tensor,
    y: &Tensor,
) -> Result<(Tensor, Tensor), WorkerError> {
    Ok(match cfg {
        ModelConfig::Decoder(c) => (x.f_narrow(1, 0, c.seq_len)?, x.f_narrow(1, 1, c.seq_len)?),
        _ => (x.shallow_clone(), y.shallow_clone()),
    })
}

/// The predicted classes (one logit: positive above 0).
fn predicted(cfg: &ModelConfig, logits: &Tensor) -> Result<Tensor, WorkerError> {
    if binary_head(cfg) {
        return Ok(logits
            .f_squeeze_dim(-1)?
            .f_gt(0.0)?
            .f_to_kind(Kind::Int64)?);
    }
    Ok(logits.f_argmax(-1, false)?)
}

struct Trainer<'a> {
    spec: &'a RunSpec,
    device: Device,
    autocast: Option<AutocastDtype>,
    net: Box<dyn ModuleT>,
    opt: nn::Optimizer,
    params: Vec<Tensor>,
    scaler: Option<LossScaler>,
    data: Dataset,
    /// Under the operator profiler: annotate the optimizer update.
    profiling: bool,
}

impl Trainer<'_> {
    fn sync(&self) {
        if let Device::Cuda(i) = self.device {
            tch::Cuda::synchronize(i as i64);
        }
    }

    fn autocast(&self, on: bool) -> Result<(), WorkerError> {
        if let Some(dt) = self.autocast {
            shim::set_autocast(self.device, on, dt)?;
        }
        Ok(())
    }

    /// Forward pass and loss under the run's autocast.
    /// A decoder's targets are its own next tokens (causal LM loss, the mean
    /// over every position).
    fn forward_loss(&self, x: &Tensor, y: &Tensor) -> Result<Tensor, WorkerError> {
        self.autocast(true)?;
        let cfg = &self.spec.model_config;
        let (x, y) = inputs_and_targets(cfg, x, y)?;
        let logits = self.net.forward_t(&x, true).f_to_kind(Kind::Float)?;
        let loss = classification_loss(cfg, &logits, &y, Reduction::Mean)?;
        self.autocast(false)?;
        Ok(loss)
    }

    /// Gradients of the (scaled, under amp-fp16) loss.
    fn backward(&mut self, loss: &Tensor) -> Result<(), WorkerError> {
        self.opt.zero_grad();
        match &self.scaler {
            None => loss.f_backward()?,
            Some(s) => s.backward(loss)?,
        }
        Ok(())
    }

    /// The optimizer update (unscaled and skipped on overflow under amp-fp16).
    fn update(&mut self) -> Result<(), WorkerError> {
        let _scope = self
            .profiling
            .then(|| shim::Scope::enter(profile::OPTIMIZER_SCOPE));
        match &mut self.scaler {
            None => self.opt.step(),
            Some(s) => {
                s.unscale_step(&mut self.opt, &self.params)?;
            }
        }
        Ok(())
    }

    /// One optimizer step; returns the (detached, unsynchronised) loss.
    fn step(&mut self, x: &Tensor, y: &Tensor) -> Result<Tensor, WorkerError> {
        let loss = self.forward_loss(x, y)?;
        self.backward(&loss)?;
        self.update()?;
        Ok(loss.detach())
    }

    /// Seconds since `mark` after a device synchronisation; moves `mark` on.
    fn lap(&self, mark: &mut u64) -> f64 {
        self.sync();
        let now = monotonic_ns();
        let s = now.saturating_sub(*mark) as f64 / 1e9;
        *mark = now;
        s
    }

    /// The step breakdown (protocol `breakdown`): `steps` whole steps and
    /// `steps` split steps, alternating, after the timed part.
    fn breakdown(&mut self, batches: &mut Batches, steps: u64) -> Result<StepTimings, WorkerError> {
        let mut whole = Vec::new();
        let mut parts: [(StepPhase, Vec<f64>); 4] = [
            (StepPhase::Data, Vec::new()),
            (StepPhase::Forward, Vec::new()),
            (StepPhase::Backward, Vec::new()),
            (StepPhase::Optimizer, Vec::new()),
        ];
        for _ in 0..steps {
            self.sync();
            let mut mark = monotonic_ns();
            let (x, y) = batches.next(&self.data);
            let _ = self.step(&x, &y)?;
            whole.push(self.lap(&mut mark));

            let (x, y) = batches.next(&self.data);
            parts[0].1.push(self.lap(&mut mark));
            let loss = self.forward_loss(&x, &y)?;
            parts[1].1.push(self.lap(&mut mark));
            self.backward(&loss)?;
            parts[2].1.push(self.lap(&mut mark));
            self.update()?;
            parts[3].1.push(self.lap(&mut mark));
        }
        Ok(StepTimings {
            whole_step_s: whole,
            phases: parts
                .into_iter()
                .map(|(phase, seconds)| PhaseSeries { phase, seconds })
                .collect(),
            fused: None,
            communication: None,
        })
    }

    /// The operator profile (protocol `profile`): one step outside the
    /// profiler (its start-up is not the model's), then `steps` steps under
    /// libtorch's Kineto profiler inside a span annotation, the trace reduced
    /// by [`profile::reduce_trace`]. A profiler that fails gives a profile
    /// marked not measured; a training error is an error.
    fn profile(
        &mut self,
        batches: &mut Batches,
        steps: u64,
    ) -> Result<OperatorProfile, WorkerError> {
        let (x, y) = batches.next(&self.data);
        let _ = self.step(&x, &y)?;
        self.sync();
        let tool = format!(
            "libtorch profiler (Kineto, libtorch {})",
            env!("TRAINBENCH_LIBTORCH_VERSION")
        );
        let not_measured = |why: String| OperatorProfile {
            tool: tool.clone(),
            not_measured: Some(why),
            steps: 0,
            span_s: 0.0,
            timeline: None,
            what: String::new(),
            ops: Vec::new(),
            other_ops: OtherOps::default(),
            categories: Vec::new(),
            busy_s: 0.0,
            idle_s: 0.0,
        };
        if let Err(e) = shim::profiler_start(self.device.is_cuda()) {
            return Ok(not_measured(format!("the profiler failed: {e}")));
        }
        self.profiling = true;
        let trained = (|| {
            let _span = shim::Scope::enter(profile::SPAN_SCOPE);
            for _ in 0..steps {
                let (x, y) = batches.next(&self.data);
                let _ = self.step(&x, &y)?;
            }
            self.sync();
            Ok::<(), WorkerError>(())
        })();
        self.profiling = false;
        let path = std::env::temp_dir().join(format!(
            "trainbench-tch-profile-{}-{}.json",
            std::process::id(),
            monotonic_ns()
        ));
        let stopped = shim::profiler_stop(&path);
        trained?;
        let reduced = stopped
            .map_err(|e| e.to_string())
            .and_then(|()| std::fs::read(&path).map_err(|e| format!("cannot read the trace: {e}")))
            .and_then(|bytes| {
                serde_json::from_slice::<serde_json::Value>(&bytes)
                    .map_err(|e| format!("the trace is not JSON: {e}"))
            })
            .and_then(|trace| profile::reduce_trace(&trace, steps, tool.clone()));
        let _ = std::fs::remove_file(&path);
        Ok(reduced.unwrap_or_else(|why| not_measured(format!("the profiler failed: {why}"))))
    }

    /// Accuracy and mean loss on the held-out split.
    fn evaluate(&self) -> Result<Option<(f64, f64, u64)>, WorkerError> {
        let Some((ex, ey)) = &self.data.eval else {
            return Ok(None);
        };
        let n = ey.size()[0];
        // A decoder is scored on every next-token prediction of a sequence.
        let decoder = match &self.spec.model_config {
            ModelConfig::Decoder(c) => Some(c.seq_len),
            _ => None,
        };
        let chunk = match decoder {
            Some(t) => (data::EVAL_BATCH_TOKENS / t).max(1),
            None => (self.spec.batch_size as i64).clamp(1, EVAL_BATCH),
        };
        let predictions = n * decoder.unwrap_or(1);
        self.autocast(true)?;
        let result = tch::no_grad(|| -> Result<(f64, f64), WorkerError> {
            let mut correct = Tensor::zeros([], (Kind::Int64, self.device));
            let mut loss_sum = Tensor::zeros([], (Kind::Float, self.device));
            let mut start = 0;
            while start < n {
                let len = chunk.min(n - start);
                let (x, y) = inputs_and_targets(
                    &self.spec.model_config,
                    &ex.f_narrow(0, start, len)?,
                    &ey.f_narrow(0, start, len)?,
                )?;
                let logits = self.net.forward_t(&x, false).f_to_kind(Kind::Float)?;
                loss_sum +=
                    classification_loss(&self.spec.model_config, &logits, &y, Reduction::Sum)?;
                correct += predicted(&self.spec.model_config, &logits)?
                    .f_eq_tensor(&y)?
                    .f_sum(Kind::Int64)?;
                start += len;
            }
            Ok((
                f64::try_from(&correct)? / predictions as f64,
                f64::try_from(&loss_sum)? / predictions as f64,
            ))
        });
        self.autocast(false)?;
        let (acc, loss) = result?;
        Ok(Some((acc, loss, n as u64)))
    }

    /// Emits the peaks that can be read; one that cannot is left out (the
    /// studio then shows it as not measured) rather than failing a finished run.
    /// The run's peak memory: the CUDA allocator's and the process's RSS.
    fn memory_events(&self) -> Vec<Event> {
        let mut out = Vec::new();
        if let Device::Cuda(i) = self.device {
            match shim::cuda_memory_peaks(i) {
                Ok((allocated, reserved)) => out.push(Event::Memory {
                    device: format!("cuda:{i}"),
                    source: "allocator".into(),
                    peak_bytes: allocated,
                    reserved_peak_bytes: Some(reserved),
                }),
                Err(e) => eprintln!("trainbench-worker-tch: allocator peak not measured: {e}"),
            }
        }
        if let Some(rss) = peak_rss_bytes() {
            out.push(Event::Memory {
                device: "cpu".into(),
                source: "process_rss".into(),
                peak_bytes: rss,
                reserved_peak_bytes: None,
            });
        }
        out
    }
}

fn nan_loss(step: u64, value: f64) -> WorkerError {
    WorkerError {
        class: trainbench_core::ErrorClass::NanLoss,
        field: None,
        message: format!(
            "the training loss became {value} by step {step}; lower lr or use another precision"
        ),
    }
}

/// Trains as `spec` says, reporting through `sink`. The terminal `done` event is
/// emitted here; an `error` is left to the caller.
pub fn run(spec: &RunSpec, sink: &mut dyn Sink) -> Result<(), WorkerError> {
    let device = resolve_device(spec)?;
    let threads = thread_count(spec);
    tch::set_num_threads(threads as i32);
    tch::set_num_interop_threads(1);
    let (precision_text, autocast) = apply_precision(spec.precision, device)?;
    tch::manual_seed(spec.seed as i64);
    if device.is_cuda() {
        // The allocator's peak counts from process start, which is what a run's
        // peak means here: nothing else ran in this process before.
        tch::Cuda::manual_seed_all(spec.seed);
    }

    let data = data::load(spec, device)?;
    let vs = nn::VarStore::new(device);
    let net = models::build(&spec.model_config, &vs, InitMode::Reference);
    let param_count = models::trainable_params(&vs);
    let analytical = spec.model_config.param_count();
    if param_count != analytical {
        return Err(WorkerError::internal(format!(
            "model {} has {param_count} trainable parameters but the catalogue says {analytical}: the two definitions disagree",
            spec.model
        )));
    }
    let mut batches = Batches::new(&data, spec.batch_size, spec.data == DataSource::Synthetic);
    let steps_per_epoch = batches.steps_per_epoch();
    let total_steps = match spec.length {
        Length::Steps(s) => s,
        Length::Epochs(e) => e * steps_per_epoch,
    };
    let warmup = spec
        .warmup_steps
        .unwrap_or_else(|| spec::default_warmup(total_steps));
    let opt = nn::AdamW {
        beta1: ADAMW_BETAS.0,
        beta2: ADAMW_BETAS.1,
        wd: spec.weight_decay,
        eps: ADAMW_EPS,
        amsgrad: false,
    }
    .build(&vs, spec.lr)?;
    let params = vs.trainable_variables();
    let scaler = (spec.precision == Precision::AmpFp16).then(|| LossScaler::new(device));
    let has_eval = data.eval.is_some();
    let info = data.info.clone();
    let mut t = Trainer {
        spec,
        device,
        autocast,
        net,
        opt,
        params,
        scaler,
        data,
        profiling: false,
    };

    let mut devices_visible = vec![DeviceInfo {
        id: "cpu".into(),
        name: cpu_name(),
    }];
    if tch::Cuda::is_available() {
        for i in 0..tch::Cuda::device_count() {
            devices_visible.push(DeviceInfo {
                id: format!("cuda:{i}"),
                name: None,
            });
        }
    }
    let device_info = match device {
        Device::Cuda(i) => DeviceInfo {
            id: format!("cuda:{i}"),
            name: None,
        },
        _ => DeviceInfo {
            id: "cpu".into(),
            name: cpu_name(),
        },
    };
    let mut libraries = vec![("tch".to_owned(), "0.26.0".to_owned())];
    if !LIBTORCH_CUDA.is_empty() {
        libraries.push(("cuda (libtorch build)".to_owned(), LIBTORCH_CUDA.to_owned()));
    }
    if device.is_cuda() {
        libraries.push((
            "cudnn available".to_owned(),
            tch::Cuda::cudnn_is_available().to_string(),
        ));
    }
    let compute_kind = match autocast {
        Some(AutocastDtype::BFloat16) => Kind::BFloat16,
        Some(AutocastDtype::Float16) => Kind::Half,
        None => Kind::Float,
    };
    let execution = match models::sdpa_choice(&spec.model_config, device, compute_kind) {
        Some(attention) => format!("eager (libtorch through tch); {attention}"),
        None => "eager (libtorch through tch)".to_owned(),
    };
    let train_start_ns = monotonic_ns();
    sink.emit(&Event::Hello {
        protocol: PROTOCOL_VERSION,
        worker: "tch".into(),
        framework: "libtorch".into(),
        framework_version: LIBTORCH_VERSION.into(),
        libraries,
        devices_visible,
        device: device_info,
        model: spec.model.clone(),
        param_count,
        flops_per_sample: spec.model_config.flops_per_sample(),
        precision: spec.precision.as_str().into(),
        precision_in_effect: precision_text,
        execution: Some(execution),
        world_size: Some(1),
        batch_size: spec.batch_size,
        total_steps,
        threads,
        data: info,
        train_start_ns,
        t_ns: train_start_ns,
    });

    let eval_due = |step: u64| {
        has_eval
            && (step == total_steps
                || match spec.eval_every_steps {
                    Some(e) => step.is_multiple_of(e),
                    None => step.is_multiple_of(steps_per_epoch),
                })
    };
    let mut window_start = 0u64;
    let mut window_first = 2u64;
    let mut window_steps = 0u64;
    let mut window_loss = Tensor::zeros([], (Kind::Float, device));
    let mut window_index = 0u64;
    let mut lr = spec.lr;
    let mut reason = "completed";
    let mut step = 0u64;
    while step < total_steps {
        step += 1;
        lr = spec::learning_rate(spec.lr, step, warmup, total_steps);
        t.opt.set_lr(lr);
        let (x, y) = batches.next(&t.data);
        let loss = t.step(&x, &y)?;
        if step == 1 {
            t.sync();
            let now = monotonic_ns();
            let first_loss = f64::try_from(&loss)?;
            if !first_loss.is_finite() {
                return Err(nan_loss(step, first_loss));
            }
            sink.emit(&Event::FirstStep {
                since_process_start_s: since_process_start_s(),
                since_train_start_s: (now - train_start_ns) as f64 / 1e9,
                compile_s: None,
                t_ns: now,
            });
        } else {
            window_loss += loss;
            window_steps += 1;
        }
        let evaluate = eval_due(step);
        let mut restart = step == 1;
        if window_steps > 0
            && (window_steps == spec.window_steps || evaluate || step == total_steps)
        {
            t.sync();
            let end = monotonic_ns();
            let loss_mean = f64::try_from(&window_loss)? / window_steps as f64;
            if !loss_mean.is_finite() {
                return Err(nan_loss(step, loss_mean));
            }
            sink.emit(&Event::Window {
                index: window_index,
                first_step: window_first,
                steps: window_steps,
                samples: window_steps * spec.batch_size,
                start_ns: window_start,
                end_ns: end,
                loss_mean,
                lr,
            });
            window_index += 1;
            window_steps = 0;
            window_first = step + 1;
            window_loss = Tensor::zeros([], (Kind::Float, device));
            restart = true;
        }
        if evaluate {
            if let Some((accuracy, loss, samples)) = t.evaluate()? {
                if !loss.is_finite() {
                    return Err(nan_loss(step, loss));
                }
                let now = monotonic_ns();
                sink.emit(&Event::Eval {
                    step,
                    epoch: step as f64 / steps_per_epoch as f64,
                    elapsed_s: (now - train_start_ns) as f64 / 1e9,
                    accuracy,
                    loss,
                    samples,
                    t_ns: now,
                });
                if spec.stop_at_target
                    && (spec
                        .target_accuracy
                        .is_some_and(|target| accuracy >= target)
                        || spec.target_loss.is_some_and(|target| loss <= target))
                {
                    reason = "target_reached";
                    break;
                }
            }
            restart = true;
        }
        if restart {
            window_start = monotonic_ns();
        }
    }
    let _ = lr;
    // Peak memory and the loss scale as training left them: read before the
    // breakdown's and the profile's extra steps (the profiler's buffers would
    // raise the process's peak; extra loss-scaler updates move the scale).
    let memory = t.memory_events();
    let loss_scale = t.scaler.as_ref().map(LossScaler::scale).transpose()?;
    if step > 1 {
        let timings = t.breakdown(&mut batches, spec::breakdown_steps(step))?;
        sink.emit(&Event::Breakdown(timings));
        if spec.profile {
            let p = t.profile(&mut batches, ProfileRule::DEFAULT.steps)?;
            sink.emit(&Event::Profile(p));
        }
    }
    for m in &memory {
        sink.emit(m);
    }
    sink.emit(&Event::Done {
        steps: step,
        samples: step * spec.batch_size,
        reason: reason.into(),
        loss_scale,
        compiles: None,
        t_ns: monotonic_ns(),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_scaler_unscales_steps_and_backs_off_on_overflow() {
        let vs = nn::VarStore::new(Device::Cpu);
        let w = vs.root().var("w", &[3], nn::Init::Const(1.0));
        let mut opt = nn::Sgd::default().build(&vs, 0.1).unwrap();
        let params = vs.trainable_variables();
        let mut scaler = LossScaler::new(Device::Cpu);

        opt.zero_grad();
        let loss = (&w * 2.0).sum(Kind::Float);
        assert!(scaler.backward_step(&loss, &mut opt, &params).unwrap());
        // The gradient reached the optimizer unscaled: 1 - 0.1 × 2 = 0.8.
        let after: Vec<f32> = Vec::try_from(&w).unwrap();
        assert!(after.iter().all(|x| (x - 0.8).abs() < 1e-6), "{after:?}");
        assert_eq!(scaler.scale().unwrap(), 65536.0);

        opt.zero_grad();
        let loss = (&w * f64::INFINITY).sum(Kind::Float);
        assert!(!scaler.backward_step(&loss, &mut opt, &params).unwrap());
        let skipped: Vec<f32> = Vec::try_from(&w).unwrap();
        assert_eq!(
            after, skipped,
            "a step with a non-finite gradient is skipped"
        );
        assert_eq!(scaler.scale().unwrap(), 32768.0);
    }

    #[test]
    fn the_shim_switches_cpu_autocast_to_bfloat16() {
        let a = Tensor::ones([4, 4], (Kind::Float, Device::Cpu));
        shim::set_autocast(Device::Cpu, true, AutocastDtype::BFloat16).unwrap();
        assert!(shim::autocast_enabled(Device::Cpu));
        let inside = a.matmul(&a).kind();
        shim::set_autocast(Device::Cpu, false, AutocastDtype::BFloat16).unwrap();
        assert!(!shim::autocast_enabled(Device::Cpu));
        let outside = a.matmul(&a).kind();
        assert_eq!((inside, outside), (Kind::BFloat16, Kind::Float));
    }
}

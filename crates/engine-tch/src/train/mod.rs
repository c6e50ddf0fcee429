//! The training loop: set-up, timed windows between device synchronisations,
//! periodic evaluation, memory peaks, and the protocol events that report them.

use tch::nn::{self, ModuleT, OptimizerConfig};
use tch::{Device, Kind, Reduction, Tensor};
use trainbench_core::models::{ModelConfig, TorchScriptCapture};
use trainbench_core::protocol::{
    Event, OperatorProfile, OtherOps, PhaseSeries, StepPhase, StepTimings,
};
use trainbench_core::spec::{self, DataSource, Length, Precision, RunSpec};

use crate::clock::{monotonic_ns, peak_rss_bytes, since_process_start_s};
use crate::data::{self, Batches, Dataset};
use crate::error::WorkerError;
use crate::models::{self, InitMode};
use crate::profile;
use crate::shim::{self, AutocastDtype};

mod loss;
mod optim;
mod precision;
mod report;
mod trainer;

use loss::{classification_loss, inputs_and_targets, predicted};
use optim::Optimizer;
use precision::apply_precision;
pub use precision::LossScaler;
use report::{finish, hello, Counts};
use trainer::Trainer;

/// Receives the worker's events (stdout JSON lines, or the human report).
pub trait Sink {
    fn emit(&mut self, event: &Event);
}

/// libtorch version and CUDA variant, read from the wheel at build time.
pub const LIBTORCH_VERSION: &str = env!("TRAINBENCH_LIBTORCH_VERSION");
pub const LIBTORCH_CUDA: &str = env!("TRAINBENCH_LIBTORCH_CUDA");
/// The tch release this worker was built with (its workspace's Cargo.lock).
pub const TCH_VERSION: &str = env!("TRAINBENCH_TCH_VERSION");

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
            let loaded = crate::shim::load_cuda();
            let visible = if tch::Cuda::is_available() {
                tch::Cuda::device_count()
            } else {
                0
            };
            if i64::from(i) >= visible {
                let why = match loaded {
                    Ok(()) => "libtorch's CUDA library loaded".to_owned(),
                    Err(e) => format!("libtorch's CUDA library did not load: {}", e.0),
                };
                return Err(WorkerError::unsupported(
                    "device",
                    format!("device = cuda:{i}: libtorch sees {visible} CUDA device(s) on this machine ({why}); use cpu or an index below {visible}"),
                ));
            }
            Ok(Device::Cuda(i as usize))
        }
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
/// The steps the run trains: given, or its epochs' worth.
fn total_steps(spec: &RunSpec, steps_per_epoch: u64) -> Result<u64, WorkerError> {
    match spec.length {
        Length::Steps(s) => Ok(s),
        Length::Epochs(e) => Ok(e * steps_per_epoch),
        // Only a training script runs as long as it runs; this worker runs none.
        Length::ScriptDecides => Err(crate::models::not_built_here(&spec.model_config)),
    }
}

/// `capture`: a file model's TorchScript capture, which the studio made
/// when the run started (`--capture FILE`).
pub fn run(
    spec: &RunSpec,
    capture: Option<&TorchScriptCapture>,
    sink: &mut dyn Sink,
) -> Result<(), WorkerError> {
    let device = resolve_device(spec)?;
    let threads = thread_count(spec);
    tch::set_num_threads(threads as i32);
    tch::set_num_interop_threads(1);
    let (precision_text, autocast) = apply_precision(spec.precision, device)?;
    seed(spec, device);

    let data = data::load(spec, device)?;
    let vs = nn::VarStore::new(device);
    let (net, param_count) = build_net(spec, capture, &vs)?;
    let channels_last = channels_last_on(spec, device);
    if device.is_cuda() {
        // cuDNN's benchmark mode: the run's choice, else on for a CNN.
        tch::Cuda::cudnn_set_benchmark(spec.cudnn_benchmark.unwrap_or(channels_last));
    }
    if channels_last {
        // A CNN on CUDA as the PyTorch worker runs it: weights (and, each
        // step, inputs) in channels-last order.
        for mut v in vs.variables().into_values() {
            shim::channels_last_(&mut v)
                .map_err(|e| WorkerError::from(e).during("channels-last weights"))?;
        }
    }
    let mut batches = Batches::new(&data, spec.batch_size, spec.data == DataSource::Synthetic);
    let steps_per_epoch = batches.steps_per_epoch();
    let total_steps = total_steps(spec, steps_per_epoch)?;
    let warmup = spec
        .warmup_steps
        .unwrap_or_else(|| spec::default_warmup(total_steps));
    let opt = Optimizer::adamw(spec, &vs, optim::fused_on(device))?;
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
        channels_last,
    };

    let train_start_ns = monotonic_ns();
    sink.emit(&hello(
        spec,
        device,
        autocast,
        precision_text,
        Counts {
            param_count,
            total_steps,
            threads,
            capture,
        },
        info,
        train_start_ns,
    ));

    let eval_due = |step: u64| {
        has_eval
            && (step == total_steps
                || match spec.eval_every_steps {
                    Some(e) => step.is_multiple_of(e),
                    None => step.is_multiple_of(steps_per_epoch),
                })
    };
    let mut window = Window::new(device);
    let mut reason = "completed";
    let mut step = 0u64;
    while step < total_steps {
        step += 1;
        let lr = spec::learning_rate(spec.lr, step, warmup, total_steps);
        t.opt.set_lr(lr);
        let (x, y) = batches.next(&t.data);
        let loss = t.step(&x, &y)?;
        if step == 1 {
            first_step(&t, &loss, train_start_ns, sink)?;
        } else {
            window.add(loss);
        }
        let evaluate = eval_due(step);
        let mut restart = step == 1;
        if window.steps > 0
            && (window.steps == spec.window_steps || evaluate || step == total_steps)
        {
            window.close(&t, step, lr, sink)?;
            restart = true;
        }
        if evaluate {
            let at = Progress {
                step,
                steps_per_epoch,
                train_start_ns,
            };
            if evaluate_and_report(&mut t, at, sink)? {
                reason = "target_reached";
                break;
            }
            restart = true;
        }
        if restart {
            window.start_ns = monotonic_ns();
        }
    }
    finish(&mut t, &mut batches, step, reason, sink)
}

/// The run's seed, on the CPU and the GPUs.
fn seed(spec: &RunSpec, device: Device) {
    tch::manual_seed(spec.seed as i64);
    if device.is_cuda() {
        // The allocator's peak counts from process start, which is what a run's
        // peak means here: nothing else ran in this process before.
        tch::Cuda::manual_seed_all(spec.seed);
    }
}

/// Step 1, synchronised: its loss checked and `first_step` (compilation
/// and set-up included) reported.
fn first_step(
    t: &Trainer<'_>,
    loss: &Tensor,
    train_start_ns: u64,
    sink: &mut dyn Sink,
) -> Result<(), WorkerError> {
    t.sync()?;
    let now = monotonic_ns();
    let first_loss = f64::try_from(loss)?;
    if !first_loss.is_finite() {
        return Err(nan_loss(1, first_loss));
    }
    sink.emit(&Event::FirstStep {
        since_process_start_s: since_process_start_s(),
        since_train_start_s: (now - train_start_ns) as f64 / 1e9,
        compile_s: None,
        t_ns: now,
    });
    Ok(())
}

/// The timed window being filled: its losses stay on the device until it
/// closes, so timing does not synchronise every step.
struct Window {
    start_ns: u64,
    first_step: u64,
    steps: u64,
    loss: Tensor,
    index: u64,
    device: Device,
}

impl Window {
    fn new(device: Device) -> Window {
        Window {
            start_ns: 0,
            first_step: 2,
            steps: 0,
            loss: Tensor::zeros([], (Kind::Float, device)),
            index: 0,
            device,
        }
    }

    fn add(&mut self, loss: Tensor) {
        self.loss += loss;
        self.steps += 1;
    }

    /// Closes the window after a device synchronisation: its mean loss
    /// checked and the `window` event sent; the next one starts after `step`.
    fn close(
        &mut self,
        t: &Trainer<'_>,
        step: u64,
        lr: f64,
        sink: &mut dyn Sink,
    ) -> Result<(), WorkerError> {
        t.sync()?;
        let end = monotonic_ns();
        let loss_mean = f64::try_from(&self.loss)? / self.steps as f64;
        if !loss_mean.is_finite() {
            return Err(nan_loss(step, loss_mean));
        }
        sink.emit(&Event::Window {
            index: self.index,
            first_step: self.first_step,
            steps: self.steps,
            samples: self.steps * t.spec.batch_size,
            start_ns: self.start_ns,
            end_ns: end,
            loss_mean,
            lr: Some(lr),
        });
        self.index += 1;
        self.steps = 0;
        self.first_step = step + 1;
        self.loss = Tensor::zeros([], (Kind::Float, self.device));
        Ok(())
    }
}

/// The network under `vs` (a file model: its TorchScript capture loaded)
/// and its trainable parameters, checked.
fn build_net(
    spec: &RunSpec,
    capture: Option<&TorchScriptCapture>,
    vs: &nn::VarStore,
) -> Result<(Box<dyn ModuleT>, u64), WorkerError> {
    let net: Box<dyn ModuleT> = match (&spec.model_config, capture) {
        (ModelConfig::File(_), Some(c)) => Box::new(models::Scripted::load(c, &spec.model, vs)?),
        _ => models::build(&spec.model_config, vs, InitMode::Reference)?,
    };
    Ok((net, checked_param_count(spec, capture, vs)?))
}

/// The trainable parameters, which must be the catalogue's count (a file
/// model's: the count of the PyTorch module it was captured from).
fn checked_param_count(
    spec: &RunSpec,
    capture: Option<&TorchScriptCapture>,
    vs: &nn::VarStore,
) -> Result<u64, WorkerError> {
    let param_count = models::trainable_params(vs);
    if let (ModelConfig::File(_), Some(c)) = (&spec.model_config, capture) {
        if param_count != c.param_count {
            return Err(WorkerError::internal(format!(
                "model {}: its TorchScript capture ({}) has {param_count} trainable parameters in libtorch but the PyTorch module it was captured from has {}",
                spec.model, c.method, c.param_count
            )));
        }
        return Ok(param_count);
    }
    let analytical = spec.model_config.param_count();
    if param_count != analytical {
        return Err(WorkerError::internal(format!(
            "model {} has {param_count} trainable parameters but the catalogue says {analytical}: the two definitions disagree",
            spec.model
        )));
    }
    Ok(param_count)
}

/// The optimizer's implementation, in the run's execution record.
fn optimizer_text(device: Device) -> &'static str {
    optim::describe(device)
}

/// Whether a CNN trains channels-last with cuDNN's benchmark mode: on CUDA,
/// as the PyTorch worker does.
fn channels_last_on(spec: &RunSpec, device: Device) -> bool {
    device.is_cuda() && matches!(spec.model_config, ModelConfig::Resnet(_))
}

/// Where training is, for an evaluation's event.
#[derive(Clone, Copy)]
struct Progress {
    step: u64,
    steps_per_epoch: u64,
    train_start_ns: u64,
}

/// An evaluation and its `eval` event; whether the run's target is reached
/// and training should stop there.
fn evaluate_and_report(
    t: &mut Trainer<'_>,
    at: Progress,
    sink: &mut dyn Sink,
) -> Result<bool, WorkerError> {
    let Some((accuracy, loss, samples)) = t.evaluate()? else {
        return Ok(false);
    };
    if !loss.is_finite() {
        return Err(nan_loss(at.step, loss));
    }
    let now = monotonic_ns();
    sink.emit(&Event::Eval {
        step: at.step,
        epoch: at.step as f64 / at.steps_per_epoch as f64,
        elapsed_s: (now - at.train_start_ns) as f64 / 1e9,
        accuracy,
        loss: Some(loss),
        samples,
        t_ns: now,
    });
    if t.spec.stop_at_target
        && (t
            .spec
            .target_accuracy
            .is_some_and(|target| accuracy >= target)
            || t.spec.target_loss.is_some_and(|target| loss <= target))
    {
        return Ok(true);
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_scaler_unscales_steps_and_backs_off_on_overflow() {
        let vs = nn::VarStore::new(Device::Cpu);
        let w = vs.root().var("w", &[3], nn::Init::Const(1.0));
        let mut opt = Optimizer::Libtorch(nn::Sgd::default().build(&vs, 0.1).unwrap());
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
    fn the_shim_puts_a_weight_channels_last_and_it_stays_the_parameter() {
        let vs = nn::VarStore::new(Device::Cpu);
        let mut w = vs.root().var("w", &[2, 3, 4, 5], nn::Init::Const(1.0));
        assert_eq!(w.stride(), [60, 20, 5, 1]);
        shim::channels_last_(&mut w).unwrap();
        // [N, C, H, W] with C innermost: strides H·W·C, 1, W·C, C.
        assert_eq!(w.stride(), [60, 1, 15, 3]);
        let stored = &vs.trainable_variables()[0];
        assert_eq!(
            stored.stride(),
            [60, 1, 15, 3],
            "the VarStore's tensor changed too"
        );
        assert!(stored.requires_grad());
        let mut b = Tensor::ones([3], (Kind::Float, Device::Cpu));
        shim::channels_last_(&mut b).unwrap();
        assert_eq!(b.stride(), [1], "other ranks are left");
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

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

mod loss;
mod precision;
mod trainer;

use loss::{classification_loss, inputs_and_targets, predicted};
use precision::apply_precision;
pub use precision::LossScaler;
use trainer::Trainer;

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

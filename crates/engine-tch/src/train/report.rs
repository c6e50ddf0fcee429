//! What the worker says of a run: the `hello` that opens it (devices,
//! libraries, precision and execution in effect) and, after the timed
//! windows, the memory peaks, the step breakdown and profile, and `done`.

use tch::{Device, Kind};
use trainbench_core::models::TorchScriptCapture;
use trainbench_core::protocol::{DataInfo, DeviceInfo, Event, PROTOCOL_VERSION};
use trainbench_core::spec::{self, ProfileRule, RunSpec};

use super::{cpu_name, LossScaler, Sink, Trainer, LIBTORCH_CUDA, LIBTORCH_VERSION, TCH_VERSION};
use crate::clock::monotonic_ns;
use crate::data::Batches;
use crate::error::WorkerError;
use crate::models;
use crate::shim::AutocastDtype;

/// The counts `hello` reports.
pub(super) struct Counts<'a> {
    pub param_count: u64,
    pub total_steps: u64,
    pub threads: u32,
    /// A file model's TorchScript capture: its FLOPs and how it was made.
    pub capture: Option<&'a TorchScriptCapture>,
}

/// The `hello` event: what trains, on what, how.
pub(super) fn hello(
    spec: &RunSpec,
    device: Device,
    autocast: Option<AutocastDtype>,
    precision_text: String,
    counts: Counts<'_>,
    info: DataInfo,
    train_start_ns: u64,
) -> Event {
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
    let mut libraries = vec![("tch".to_owned(), TCH_VERSION.to_owned())];
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
    let mut execution = match (
        counts.capture,
        models::sdpa_choice(&spec.model_config, device, compute_kind),
    ) {
        (Some(c), _) => format!(
            "TorchScript module ({}, captured in the studio's PyTorch environment) through tch",
            c.method
        ),
        (None, Some(attention)) => format!("eager (libtorch through tch); {attention}"),
        (None, None) => "eager (libtorch through tch)".to_owned(),
    };
    let channels_last = super::channels_last_on(spec, device);
    if channels_last {
        execution.push_str("; channels-last");
    }
    if device.is_cuda() {
        let on = spec.cudnn_benchmark.unwrap_or(channels_last);
        execution.push_str(if on {
            "; cuDNN benchmark mode on"
        } else {
            "; cuDNN benchmark mode off"
        });
    }
    execution.push_str("; ");
    execution.push_str(super::optimizer_text(device));
    Event::Hello {
        protocol: PROTOCOL_VERSION,
        worker: "tch".into(),
        framework: "libtorch".into(),
        framework_version: LIBTORCH_VERSION.into(),
        libraries,
        devices_visible,
        device: device_info,
        model: spec.model.clone(),
        param_count: Some(counts.param_count),
        flops_per_sample: match counts.capture {
            Some(c) => c.flops_per_sample,
            None => Some(spec.model_config.flops_per_sample()),
        },
        flops_method: counts.capture.and_then(|c| c.flops_method.clone()),
        precision: spec.precision.as_str().into(),
        precision_in_effect: precision_text,
        execution: Some(execution),
        world_size: Some(1),
        batch_size: spec.batch_size,
        total_steps: counts.total_steps,
        threads: counts.threads,
        settings_env: settings_env(),
        data: info,
        // A decoder's tokens are the spec's (the catalogue's decoders).
        tokens_per_sample: None,
        train_start_ns,
        t_ns: train_start_ns,
    }
}

/// The environment variables of the frameworks' own families in this
/// process (the run's, or inherited), by name.
fn settings_env() -> Vec<(String, String)> {
    // `vars_os`: `vars` panics on a variable that is not UTF-8.
    let mut found: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .filter(|(k, _)| trainbench_core::spec::env::is_setting(k))
        .collect();
    found.sort();
    found
}

/// After the timed windows: the memory peaks and loss scale as training
/// left them, the step breakdown and (asked for) the operator profile, then
/// `done`.
pub(super) fn finish(
    t: &mut Trainer<'_>,
    batches: &mut Batches,
    step: u64,
    reason: &str,
    sink: &mut dyn Sink,
) -> Result<(), WorkerError> {
    // Peak memory and the loss scale as training left them: read before the
    // breakdown's and the profile's extra steps (the profiler's buffers would
    // raise the process's peak; extra loss-scaler updates move the scale).
    let memory = t.memory_events();
    let loss_scale = t.scaler.as_ref().map(LossScaler::scale).transpose()?;
    if step > 1 {
        let timings = t.breakdown(batches, spec::breakdown_steps(step))?;
        sink.emit(&Event::Breakdown(timings));
        if t.spec.profile {
            let p = t.profile(batches, ProfileRule::DEFAULT.steps)?;
            sink.emit(&Event::Profile(p));
        }
    }
    for m in &memory {
        sink.emit(m);
    }
    sink.emit(&Event::Done {
        steps: step,
        samples: step * t.spec.batch_size,
        reason: reason.into(),
        loss_scale,
        compiles: None,
        t_ns: monotonic_ns(),
    });
    Ok(())
}

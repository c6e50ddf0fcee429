//! Whether a valid spec can run with a framework on this machine.

use super::options::{Compile, DataSource, Device, Parallel, Precision};
use super::run::RunSpec;
use crate::error::SpecError;
use crate::framework::Framework;
use crate::models::ModelConfig;

/// What the machine offers, as the probe saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    pub gpus: u32,
    pub cpu_cores: u32,
}

/// A library model is built by its library's framework (`timm:`, `hf:` by
/// PyTorch, `keras:` by TensorFlow); a file model runs in any Python worker
/// and in the libtorch worker (captured with TorchScript when the run
/// starts), a training script in any Python worker.
fn library_framework(spec: &RunSpec, framework: Framework) -> Result<(), SpecError> {
    match &spec.model_config {
        ModelConfig::Library(l) if framework != l.model.library.framework() => {
            let builds = l.model.library.framework();
            Err(SpecError::new(
                "framework",
                framework,
                &format!(
                    "{builds} for the library model {} (the {builds} worker builds {} models)",
                    spec.model, l.model.library
                ),
            ))
        }
        ModelConfig::Library(_) if spec.parallel == Parallel::Fsdp => Err(SpecError::new(
            "parallel",
            "fsdp",
            &format!("ddp for the library model {} (FSDP shards the catalogue's blocks)", spec.model),
        )),
        ModelConfig::File(f)
            if framework == Framework::Jax
                && matches!(spec.precision, Precision::AmpBf16 | Precision::AmpFp16) =>
        {
            Err(SpecError::new(
                "precision",
                spec.precision.as_str(),
                &format!(
                    "fp32 or tf32 for the Flax file model {} (a Flax module computes in the dtype it sets itself)",
                    f.model.short()
                ),
            ))
        }
        ModelConfig::Script(c) if framework == Framework::Tch => Err(SpecError::new(
            "framework",
            framework,
            &format!(
                "pytorch, tensorflow or jax for the training script {} (it runs in that framework's Python environment)",
                c.script.short()
            ),
        )),
        ModelConfig::File(f) if spec.parallel == Parallel::Fsdp => Err(SpecError::new(
            "parallel",
            "fsdp",
            &format!("ddp for the file model {} (FSDP shards the catalogue's blocks)", f.model.short()),
        )),
        _ => Ok(()),
    }
}

/// Checks, before anything starts, that `spec` can run on `framework` here:
/// the framework is installed, the device and device count exist,
/// and the precision is one the device can do.
pub fn check_runnable(
    spec: &RunSpec,
    framework: Framework,
    installed: &[Framework],
    machine: Machine,
) -> Result<(), SpecError> {
    if !installed.contains(&framework) {
        return Err(SpecError::new(
            "framework",
            framework,
            &format!(
                "an installed framework ({}); {framework} is not installed here",
                Framework::list(installed)
            ),
        ));
    }
    library_framework(spec, framework)?;
    if spec.cudnn_benchmark.is_some() && !matches!(framework, Framework::Pytorch | Framework::Tch) {
        return Err(SpecError::new(
            "cudnn_benchmark",
            framework,
            "pytorch or tch (torch.backends.cudnn.benchmark); TensorFlow and JAX choose cuDNN's algorithms themselves",
        ));
    }
    match spec.device {
        Device::Cuda(i) if i >= machine.gpus => {
            return Err(SpecError::new(
                "device",
                spec.device,
                &format!(
                    "cpu, or a GPU index below {} (this machine has {} NVIDIA GPU(s))",
                    machine.gpus, machine.gpus
                ),
            ))
        }
        Device::Cuda(i) if i + spec.devices > machine.gpus => {
            return Err(SpecError::new(
                "devices",
                spec.devices,
                &format!(
                    "at most {} GPU(s) from cuda:{i} on this machine",
                    machine.gpus - i
                ),
            ))
        }
        Device::Cpu if spec.devices > machine.cpu_cores => {
            return Err(SpecError::new(
                "devices",
                spec.devices,
                &format!("at most {} CPU processes (one per core)", machine.cpu_cores),
            ))
        }
        _ => {}
    }
    if !Compile::allowed_for(framework).contains(&spec.compile) {
        let names: Vec<&str> = Compile::allowed_for(framework)
            .iter()
            .map(|c| c.as_str())
            .collect();
        let why = match framework {
            Framework::Jax => " (JAX always compiles the step with jax.jit)",
            Framework::Tch => {
                " (the libtorch worker runs eagerly; torch.compile is framework pytorch)"
            }
            _ => "",
        };
        return Err(SpecError::new(
            "compile",
            spec.compile,
            &format!("{} for framework {framework}{why}", names.join(" or ")),
        ));
    }
    if spec.parallel == Parallel::Fsdp && framework != Framework::Pytorch {
        return Err(SpecError::new(
            "parallel",
            "fsdp",
            &format!("ddp for framework {framework} (FSDP is PyTorch's)"),
        ));
    }
    if spec.nodes > 1 && framework == Framework::Tch {
        return Err(SpecError::new(
            "nodes",
            spec.nodes,
            "1 for framework tch (several nodes run PyTorch through torchrun, JAX through jax.distributed and TensorFlow through MultiWorkerMirroredStrategy under Slurm)",
        ));
    }
    if framework == Framework::Tch && spec.devices > 1 {
        return Err(SpecError::new(
            "devices",
            spec.devices,
            "1 for framework tch (one device per process); pytorch, tensorflow and jax run several",
        ));
    }
    if framework == Framework::Tch && spec.data == DataSource::Folder {
        return Err(SpecError::new(
            "data",
            "folder",
            "synthetic, mnist, cifar10 or text for framework tch (the libtorch worker has no image-folder loader; pytorch, tensorflow and jax decode folders with their own loaders)",
        ));
    }
    if spec.device == Device::Cpu && matches!(spec.precision, Precision::Tf32 | Precision::AmpFp16)
    {
        return Err(SpecError::new(
            "precision",
            spec.precision,
            "fp32 or amp-bf16 on the CPU (tf32 and amp-fp16 need an NVIDIA GPU)",
        ));
    }
    Ok(())
}

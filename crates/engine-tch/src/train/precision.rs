//! The run's precision on the device (fp32, TF32, autocast bf16/fp16) and
//! the fp16 loss scaler.

use super::*;

/// cuBLAS's and cuDNN's TF32 switch, an error naming it.
fn tf32(on: bool) -> Result<(), WorkerError> {
    shim::set_tf32(on).map_err(|e| WorkerError::from(e).during("the TF32 switch (shim)"))
}

/// Checks the precision against the device and switches it on. Returns what it
/// means here, in words, and autocast's dtype if autocast is used.
pub(super) fn apply_precision(
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
                tf32(false)?;
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
            tf32(true)?;
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
                tf32(false)?;
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
            tf32(false)?;
            Ok((
                "autocast to float16 with dynamic loss scaling (initial scale 65536, growth ×2 every 2000 finite steps, backoff ×0.5)".into(),
                Some(AutocastDtype::Float16),
            ))
        }
    }
}

/// What a loss-scaling error says failed.
const SCALING: &str = "loss scaling (amp-fp16, dynamic)";

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
        loss.f_mul(&self.scale)
            .and_then(|l| l.f_backward())
            .map_err(|e| WorkerError::from(e).during(SCALING))
    }

    /// Unscale the gradients, step unless one is not finite, then update the
    /// scale. Returns whether the optimizer stepped.
    pub fn unscale_step(
        &mut self,
        opt: &mut Optimizer,
        params: &[Tensor],
    ) -> Result<bool, WorkerError> {
        self.try_unscale_step(opt, params)
            .map_err(|e| e.during(SCALING))
    }

    fn try_unscale_step(
        &mut self,
        opt: &mut Optimizer,
        params: &[Tensor],
    ) -> Result<bool, WorkerError> {
        let mut inv = self.scale.f_reciprocal()?;
        let _ = self.found_inf.f_zero_()?;
        // One fused unscale per dtype, as GradScaler groups them (under
        // autocast every gradient is fp32: one group).
        let mut groups: Vec<(Kind, Vec<Tensor>)> = Vec::new();
        for g in params.iter().map(Tensor::grad).filter(Tensor::defined) {
            let kind = g.kind();
            match groups.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, list)) => list.push(g),
                None => groups.push((kind, vec![g])),
            }
        }
        for (_, grads) in &mut groups {
            shim::amp_unscale(grads, &mut self.found_inf, &mut inv)?;
        }
        let skip = f64::try_from(&self.found_inf)? > 0.0;
        if !skip {
            opt.step()?;
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
        opt: &mut Optimizer,
        params: &[Tensor],
    ) -> Result<bool, WorkerError> {
        self.backward(loss)?;
        self.unscale_step(opt, params)
    }
}

//! The optimizer: AdamW with the studio's settings, as libtorch's C++
//! `torch::optim::AdamW` runs it (one parameter at a time: on the CPU, as
//! the PyTorch worker's default there), or on a CUDA device fused into one
//! call for every parameter (`_fused_adamw_`, what the PyTorch worker's
//! `fused=True` runs there), gradients set to none between steps.

use super::*;

/// AdamW, per parameter or fused.
pub enum Optimizer {
    Libtorch(nn::Optimizer),
    Fused(Fused),
}

/// The fused AdamW's state: the parameters, their two moments and the
/// shared step counter.
pub struct Fused {
    params: Vec<Tensor>,
    exp_avg: Vec<Tensor>,
    exp_avg_sq: Vec<Tensor>,
    step: Tensor,
    h: shim::AdamW,
}

/// Whether the worker fuses AdamW on `device` (the PyTorch worker's rule).
pub fn fused_on(device: Device) -> bool {
    device.is_cuda()
}

/// The optimizer's implementation, in the run's execution record.
pub fn describe(device: Device) -> &'static str {
    if fused_on(device) {
        "AdamW fused (one _fused_adamw_ call for every parameter, as PyTorch's fused=True)"
    } else {
        "AdamW (libtorch's torch::optim::AdamW, one parameter at a time)"
    }
}

impl Optimizer {
    /// AdamW over `vs`'s trainable variables with the studio's settings.
    pub fn adamw(spec: &RunSpec, vs: &nn::VarStore, fused: bool) -> Result<Self, WorkerError> {
        if !fused {
            return Ok(Optimizer::Libtorch(
                nn::AdamW {
                    beta1: ADAMW_BETAS.0,
                    beta2: ADAMW_BETAS.1,
                    wd: spec.weight_decay,
                    eps: ADAMW_EPS,
                    amsgrad: false,
                }
                .build(vs, spec.lr)?,
            ));
        }
        let params = vs.trainable_variables();
        let zeros = |p: &Tensor| p.f_zeros_like();
        Ok(Optimizer::Fused(Fused {
            exp_avg: params.iter().map(zeros).collect::<Result<_, _>>()?,
            exp_avg_sq: params.iter().map(zeros).collect::<Result<_, _>>()?,
            step: Tensor::f_zeros([], (Kind::Float, vs.device()))?,
            params,
            h: shim::AdamW {
                lr: spec.lr,
                betas: ADAMW_BETAS,
                weight_decay: spec.weight_decay,
                eps: ADAMW_EPS,
            },
        }))
    }

    pub fn zero_grad(&mut self) {
        match self {
            Optimizer::Libtorch(o) => o.zero_grad(),
            Optimizer::Fused(f) => shim::grads_to_none(&mut f.params),
        }
    }

    pub fn step(&mut self) -> Result<(), WorkerError> {
        match self {
            Optimizer::Libtorch(o) => {
                o.step();
                Ok(())
            }
            Optimizer::Fused(f) => shim::fused_adamw(
                &mut f.params,
                &mut f.exp_avg,
                &mut f.exp_avg_sq,
                &mut f.step,
                f.h,
            )
            .map_err(|e| WorkerError::from(e).during("the fused AdamW update")),
        }
    }

    pub fn set_lr(&mut self, lr: f64) {
        match self {
            Optimizer::Libtorch(o) => o.set_lr(lr),
            Optimizer::Fused(f) => f.h.lr = lr,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three steps of a small CNN from the same start, once per
    /// implementation (the fused kernel runs on the CPU too): the weights
    /// end the same within float32 rounding.
    fn trained(fused: bool) -> Vec<Tensor> {
        let spec = RunSpec::from_json(
            r#"{"model": "resnet_mini", "batch_size": 4, "steps": 3, "lr": 0.01, "weight_decay": 0.05}"#,
        )
        .unwrap();
        tch::manual_seed(7);
        let vs = nn::VarStore::new(Device::Cpu);
        let net = models::build(&spec.model_config, &vs, InitMode::Reference).unwrap();
        let mut opt = Optimizer::adamw(&spec, &vs, fused).unwrap();
        let x = Tensor::randn([4, 3, 32, 32], (Kind::Float, Device::Cpu));
        for _ in 0..3 {
            opt.zero_grad();
            let loss = net.forward_t(&x, true).square().mean(Kind::Float);
            loss.backward();
            opt.step().unwrap();
        }
        vs.trainable_variables()
    }

    #[test]
    fn fused_adamw_matches_libtorchs_per_parameter_adamw() {
        let (a, b) = (trained(false), trained(true));
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            let diff = f64::try_from((x - y).abs().max()).unwrap();
            assert!(diff < 1e-5, "weights differ by {diff}");
        }
        // And they moved: the updates ran.
        let c = {
            tch::manual_seed(7);
            let spec =
                RunSpec::from_json(r#"{"model": "resnet_mini", "batch_size": 4, "steps": 3}"#)
                    .unwrap();
            let vs = nn::VarStore::new(Device::Cpu);
            let _ = models::build(&spec.model_config, &vs, InitMode::Reference).unwrap();
            vs.trainable_variables()
        };
        let moved = a
            .iter()
            .zip(&c)
            .map(|(x, y)| f64::try_from((x - y).abs().max()).unwrap())
            .fold(0.0, f64::max);
        assert!(moved > 1e-4, "nothing trained ({moved})");
    }
}

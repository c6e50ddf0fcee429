//! The training state of one run and its step, evaluation and profile.

use super::*;

pub(super) struct Trainer<'a> {
    pub(super) spec: &'a RunSpec,
    pub(super) device: Device,
    pub(super) autocast: Option<AutocastDtype>,
    pub(super) net: Box<dyn ModuleT>,
    pub(super) opt: Optimizer,
    pub(super) params: Vec<Tensor>,
    pub(super) scaler: Option<LossScaler>,
    pub(super) data: Dataset,
    /// Under the operator profiler: annotate the optimizer update.
    pub(super) profiling: bool,
    /// Inputs go channels-last (a CNN on CUDA, its weights already are).
    pub(super) channels_last: bool,
}

impl Trainer<'_> {
    /// Waits for the device's queued work (the end of every timed window).
    pub(super) fn sync(&self) -> Result<(), WorkerError> {
        if let Device::Cuda(i) = self.device {
            crate::error::caught(&format!("device synchronisation on cuda:{i}"), || {
                tch::Cuda::synchronize(i as i64)
            })?;
        }
        Ok(())
    }

    pub(super) fn autocast(&self, on: bool) -> Result<(), WorkerError> {
        if let Some(dt) = self.autocast {
            shim::set_autocast(self.device, on, dt).map_err(|e| {
                WorkerError::from(e).during(&format!(
                    "the autocast shim ({dt:?} on {})",
                    if self.device.is_cuda() {
                        "CUDA"
                    } else {
                        "the CPU"
                    }
                ))
            })?;
        }
        Ok(())
    }

    /// Forward pass and loss under the run's autocast.
    /// A decoder's targets are its own next tokens (causal LM loss, the mean
    /// over every position).
    pub(super) fn forward_loss(&self, x: &Tensor, y: &Tensor) -> Result<Tensor, WorkerError> {
        self.autocast(true)?;
        let cfg = &self.spec.model_config;
        let (mut x, y) = inputs_and_targets(cfg, x, y)?;
        if self.channels_last {
            shim::channels_last_(&mut x)
                .map_err(|e| WorkerError::from(e).during("channels-last inputs"))?;
        }
        let logits = self.net.forward_t(&x, true).f_to_kind(Kind::Float)?;
        let loss = classification_loss(cfg, &logits, &y, Reduction::Mean)?;
        self.autocast(false)?;
        Ok(loss)
    }

    /// Gradients of the (scaled, under amp-fp16) loss.
    pub(super) fn backward(&mut self, loss: &Tensor) -> Result<(), WorkerError> {
        self.opt.zero_grad();
        match &self.scaler {
            None => loss.f_backward()?,
            Some(s) => s.backward(loss)?,
        }
        Ok(())
    }

    /// The optimizer update (unscaled and skipped on overflow under amp-fp16).
    pub(super) fn update(&mut self) -> Result<(), WorkerError> {
        let _scope = self
            .profiling
            .then(|| shim::Scope::enter(profile::OPTIMIZER_SCOPE));
        match &mut self.scaler {
            None => self.opt.step()?,
            Some(s) => {
                s.unscale_step(&mut self.opt, &self.params)?;
            }
        }
        Ok(())
    }

    /// One optimizer step; returns the (detached, unsynchronised) loss.
    pub(super) fn step(&mut self, x: &Tensor, y: &Tensor) -> Result<Tensor, WorkerError> {
        let loss = self.forward_loss(x, y)?;
        self.backward(&loss)?;
        self.update()?;
        Ok(loss.detach())
    }

    /// Seconds since `mark` after a device synchronisation; moves `mark` on.
    pub(super) fn lap(&self, mark: &mut u64) -> Result<f64, WorkerError> {
        self.sync()?;
        let now = monotonic_ns();
        let s = now.saturating_sub(*mark) as f64 / 1e9;
        *mark = now;
        Ok(s)
    }

    /// The step breakdown (protocol `breakdown`): `steps` whole steps and
    /// `steps` split steps, alternating, after the timed part.
    pub(super) fn breakdown(
        &mut self,
        batches: &mut Batches,
        steps: u64,
    ) -> Result<StepTimings, WorkerError> {
        let mut whole = Vec::new();
        let mut parts: [(StepPhase, Vec<f64>); 4] = [
            (StepPhase::Data, Vec::new()),
            (StepPhase::Forward, Vec::new()),
            (StepPhase::Backward, Vec::new()),
            (StepPhase::Optimizer, Vec::new()),
        ];
        for _ in 0..steps {
            self.sync()?;
            let mut mark = monotonic_ns();
            let (x, y) = batches.next(&self.data);
            let _ = self.step(&x, &y)?;
            whole.push(self.lap(&mut mark)?);

            let (x, y) = batches.next(&self.data);
            parts[0].1.push(self.lap(&mut mark)?);
            let loss = self.forward_loss(&x, &y)?;
            parts[1].1.push(self.lap(&mut mark)?);
            self.backward(&loss)?;
            parts[2].1.push(self.lap(&mut mark)?);
            self.update()?;
            parts[3].1.push(self.lap(&mut mark)?);
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
    pub(super) fn profile(
        &mut self,
        batches: &mut Batches,
        steps: u64,
    ) -> Result<OperatorProfile, WorkerError> {
        let (x, y) = batches.next(&self.data);
        let _ = self.step(&x, &y)?;
        self.sync()?;
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
            self.sync()?;
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
    pub(super) fn evaluate(&self) -> Result<Option<(f64, f64, u64)>, WorkerError> {
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
    pub(super) fn memory_events(&self) -> Vec<Event> {
        let mut out = Vec::new();
        if let Device::Cuda(i) = self.device {
            match shim::cuda_memory_peaks(i) {
                Ok((allocated, reserved)) => out.push(Event::Memory {
                    device: format!("cuda:{i}"),
                    source: "allocator".into(),
                    peak_bytes: allocated,
                    reserved_peak_bytes: Some(reserved),
                }),
                Err(e) => eprintln!(
                    "trainbench-worker-tch: reading the CUDA caching allocator's peak failed (memory not measured): {e}"
                ),
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

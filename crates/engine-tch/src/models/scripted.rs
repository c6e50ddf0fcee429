//! A model from a person's file, captured with TorchScript by the studio
//! (`torch.jit.script`, else `torch.jit.trace`) in its PyTorch environment
//! and loaded here with tch's trainable module: its parameters join the
//! VarStore (so AdamW trains them and they are counted from it, a shared
//! one once), and its
//! training or evaluation mode follows the worker's.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use tch::{nn, Tensor, TrainableCModule};
use trainbench_core::models::TorchScriptCapture;

use crate::error::WorkerError;

/// The loaded module and the mode it is in (`None`: as saved).
#[derive(Debug)]
pub struct Scripted {
    module: Mutex<(TrainableCModule, Option<bool>)>,
}

impl Scripted {
    /// Loads the capture's module onto the VarStore's device, its parameters
    /// added to the VarStore.
    pub fn load(
        capture: &TorchScriptCapture,
        model: &str,
        vs: &nn::VarStore,
    ) -> Result<Scripted, WorkerError> {
        let module = TrainableCModule::load(&capture.path, vs.root()).map_err(|e| {
            WorkerError::bad_config(
                "model",
                format!(
                    "model = {model}: libtorch could not load its TorchScript capture ({}, {}): {e}",
                    capture.method, capture.path
                ),
            )
        })?;
        // A parameter shared by two modules (tied weights) is listed by
        // TorchScript under each name; PyTorch counts and trains it once,
        // and so does the VarStore.
        if let Ok(mut held) = vs.variables_.lock() {
            let mut seen = HashSet::new();
            held.trainable_variables
                .retain(|v| seen.insert((v.tensor.data_ptr() as usize, v.tensor.size())));
        }
        Ok(Scripted {
            module: Mutex::new((module, None)),
        })
    }
}

impl nn::ModuleT for Scripted {
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        let mut held = self.module.lock().unwrap_or_else(PoisonError::into_inner);
        let (module, mode) = &mut *held;
        if *mode != Some(train) {
            if train {
                module.set_train();
            } else {
                module.set_eval();
            }
            *mode = Some(train);
        }
        // As tch's own layers do: a libtorch error panics, and the worker's
        // guard turns the panic into the run's error.
        match module.forward_ts(&[xs]) {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        }
    }
}

//! Safe wrappers over `shim/trainbench_shim.cpp` (per-device autocast, TF32,
//! bf16 capability, CUDA allocator peaks, the Kineto profiler and its
//! user-scope annotations): libtorch calls tch does not expose.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

use tch::{Device, Tensor};

extern "C" {
    fn tb_autocast_set(
        device: c_int,
        enabled: c_int,
        dtype: c_int,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    #[cfg(test)]
    fn tb_autocast_enabled(device: c_int) -> c_int;
    fn tb_set_tf32(enabled: c_int, err: *mut c_char, len: usize) -> c_int;
    fn tb_cuda_bf16_native() -> c_int;
    fn tb_load_cuda(err: *mut c_char, len: usize) -> c_int;
    fn tb_cuda_memory_peaks(
        device: c_int,
        allocated: *mut u64,
        reserved: *mut u64,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    fn tb_amp_unscale(
        grads: *mut *mut c_void,
        n: usize,
        found_inf: *mut c_void,
        inv_scale: *mut c_void,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    #[allow(clippy::too_many_arguments)]
    fn tb_fused_adamw(
        params: *mut *mut c_void,
        exp_avgs: *mut *mut c_void,
        exp_avg_sqs: *mut *mut c_void,
        n: usize,
        step: *mut c_void,
        lr: f64,
        beta1: f64,
        beta2: f64,
        weight_decay: f64,
        eps: f64,
        err: *mut c_char,
        len: usize,
    ) -> c_int;
    fn tb_grads_to_none(params: *mut *mut c_void, n: usize);
    fn tb_channels_last_(tensor: *mut c_void, err: *mut c_char, len: usize) -> c_int;
    fn tb_profiler_start(cuda: c_int, err: *mut c_char, len: usize) -> c_int;
    fn tb_profiler_stop(path: *const c_char, err: *mut c_char, len: usize) -> c_int;
    fn tb_scope_enter(name: *const c_char) -> *mut c_void;
    fn tb_scope_exit(scope: *mut c_void);
}

/// A libtorch error message carried out of the shim.
#[derive(Debug, thiserror::Error)]
#[error("libtorch: {0}")]
pub struct ShimError(pub String);

fn call(f: impl FnOnce(*mut c_char, usize) -> c_int) -> Result<(), ShimError> {
    let mut buf = [0 as c_char; 1024];
    let rc = f(buf.as_mut_ptr(), buf.len());
    if rc == 0 {
        Ok(())
    } else {
        // SAFETY: the shim NUL-terminates within the buffer (strncpy + final NUL).
        let msg = unsafe { CStr::from_ptr(buf.as_ptr()) };
        Err(ShimError(msg.to_string_lossy().into_owned()))
    }
}

fn device_code(device: Device) -> c_int {
    if device.is_cuda() {
        1
    } else {
        0
    }
}

/// Autocast's lower precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutocastDtype {
    BFloat16,
    Float16,
}

/// Switches autocast for `device` on (with `dtype`) or off. Switching off also
/// clears autocast's cast cache, as leaving a Python `autocast` block does.
pub fn set_autocast(device: Device, enabled: bool, dtype: AutocastDtype) -> Result<(), ShimError> {
    let dt = match dtype {
        AutocastDtype::BFloat16 => 0,
        AutocastDtype::Float16 => 1,
    };
    // SAFETY: plain values in, error buffer valid for its length.
    call(|e, l| unsafe { tb_autocast_set(device_code(device), c_int::from(enabled), dt, e, l) })
}

#[cfg(test)]
pub fn autocast_enabled(device: Device) -> bool {
    // SAFETY: plain value in, plain value out.
    unsafe { tb_autocast_enabled(device_code(device)) == 1 }
}

pub fn set_tf32(enabled: bool) -> Result<(), ShimError> {
    // SAFETY: plain value in, error buffer valid for its length.
    call(|e, l| unsafe { tb_set_tf32(c_int::from(enabled), e, l) })
}

/// Loads libtorch's CUDA library (`libtorch_cuda.so`), once per process:
/// the linker leaves it out of the worker (nothing in it is called by name),
/// and without it libtorch sees no CUDA device. Called only for a CUDA run,
/// before anything asks libtorch about CUDA; the error says whether the
/// library did not load (the loader's reason) or loaded too late.
pub fn load_cuda() -> Result<(), ShimError> {
    static LOADED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    LOADED
        .get_or_init(|| {
            // SAFETY: error buffer valid for its length; dlopen is thread-safe.
            call(|e, l| unsafe { tb_load_cuda(e, l) }).map_err(|e| e.0)
        })
        .clone()
        .map_err(ShimError)
}

/// Whether the current CUDA device has native bf16 (compute capability ≥ 8.0).
pub fn cuda_bf16_native() -> bool {
    // SAFETY: no arguments; returns 0 without CUDA.
    unsafe { tb_cuda_bf16_native() == 1 }
}

/// (allocated peak, reserved peak) of the CUDA caching allocator, in bytes.
pub fn cuda_memory_peaks(index: usize) -> Result<(u64, u64), ShimError> {
    let (mut allocated, mut reserved) = (0u64, 0u64);
    let idx = c_int::try_from(index).map_err(|_| ShimError(format!("device index {index}")))?;
    // SAFETY: the out-pointers are valid u64s on this stack frame.
    call(|e, l| unsafe { tb_cuda_memory_peaks(idx, &mut allocated, &mut reserved, e, l) })?;
    Ok((allocated, reserved))
}

/// Multiplies every gradient in `grads` by `inv_scale` in place and sets
/// `found_inf` to 1 where one is not finite: GradScaler's fused unscale.
/// The gradients share one device and dtype; `found_inf` and `inv_scale`
/// are one-element float tensors on that device.
pub fn amp_unscale(
    grads: &mut [Tensor],
    found_inf: &mut Tensor,
    inv_scale: &mut Tensor,
) -> Result<(), ShimError> {
    let mut ptrs = handles(grads);
    let (f, s) = (found_inf.as_mut_ptr().cast(), inv_scale.as_mut_ptr().cast());
    // SAFETY: each pointer is a live tch tensor handle (a `torch::Tensor*`)
    // borrowed mutably for the call; the shim only reads the handles and
    // writes through the tensors they hold.
    call(|e, l| unsafe { tb_amp_unscale(ptrs.as_mut_ptr(), ptrs.len(), f, s, e, l) })
}

/// Raw tch handles (`torch::Tensor*`) of `tensors`, borrowed for a call.
fn handles(tensors: &mut [Tensor]) -> Vec<*mut c_void> {
    tensors.iter_mut().map(|t| t.as_mut_ptr().cast()).collect()
}

/// AdamW's hyper-parameters for [`fused_adamw`].
#[derive(Debug, Clone, Copy)]
pub struct AdamW {
    pub lr: f64,
    pub betas: (f64, f64),
    pub weight_decay: f64,
    pub eps: f64,
}

/// One fused AdamW update of every parameter with a gradient (PyTorch's
/// `fused=True`): `step` is advanced first; the moments are updated in
/// place. The three lists are of equal length, one entry per parameter.
pub fn fused_adamw(
    params: &mut [Tensor],
    exp_avgs: &mut [Tensor],
    exp_avg_sqs: &mut [Tensor],
    step: &mut Tensor,
    h: AdamW,
) -> Result<(), ShimError> {
    if exp_avgs.len() != params.len() || exp_avg_sqs.len() != params.len() {
        return Err(ShimError(
            "fused AdamW: one moment of each kind per parameter".into(),
        ));
    }
    let (mut p, mut m, mut v) = (handles(params), handles(exp_avgs), handles(exp_avg_sqs));
    let s = step.as_mut_ptr().cast();
    // SAFETY: every pointer is a live tch tensor handle borrowed mutably for
    // the call, the three lists of equal length `p.len()`.
    call(|e, l| unsafe {
        tb_fused_adamw(
            p.as_mut_ptr(),
            m.as_mut_ptr(),
            v.as_mut_ptr(),
            p.len(),
            s,
            h.lr,
            h.betas.0,
            h.betas.1,
            h.weight_decay,
            h.eps,
            e,
            l,
        )
    })
}

/// Sets every parameter's gradient to none (PyTorch's `zero_grad()`).
pub fn grads_to_none(params: &mut [Tensor]) {
    let mut p = handles(params);
    // SAFETY: live tch tensor handles borrowed mutably for the call.
    unsafe { tb_grads_to_none(p.as_mut_ptr(), p.len()) }
}

/// A 4-D tensor's data in channels-last order, in place (other ranks unchanged).
pub fn channels_last_(t: &mut Tensor) -> Result<(), ShimError> {
    let p = t.as_mut_ptr().cast();
    // SAFETY: a live tch tensor handle borrowed mutably for the call.
    call(|e, l| unsafe { tb_channels_last_(p, e, l) })
}

/// Starts libtorch's Kineto profiler on the calling thread: CPU operators,
/// plus CUDA kernels and runtime calls when `cuda`.
pub fn profiler_start(cuda: bool) -> Result<(), ShimError> {
    // SAFETY: plain value in, error buffer valid for its length.
    call(|e, l| unsafe { tb_profiler_start(c_int::from(cuda), e, l) })
}

/// Stops the profiler and writes its Chrome trace to `path`.
pub fn profiler_stop(path: &Path) -> Result<(), ShimError> {
    let p = CString::new(path.to_string_lossy().into_owned())
        .map_err(|_| ShimError(format!("trace path {} holds a NUL byte", path.display())))?;
    // SAFETY: `p` is a NUL-terminated string alive for the call.
    call(|e, l| unsafe { tb_profiler_stop(p.as_ptr(), e, l) })
}

/// A user-scope annotation in the profiler's trace (what
/// `torch.profiler.record_function` makes), ended when dropped.
pub struct Scope(*mut c_void);

impl Scope {
    pub fn enter(name: &CStr) -> Scope {
        // SAFETY: `name` is NUL-terminated; the shim copies it.
        Scope(unsafe { tb_scope_enter(name.as_ptr()) })
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        // SAFETY: the pointer came from tb_scope_enter (or is null, which the
        // shim ignores) and is ended once.
        unsafe { tb_scope_exit(self.0) }
    }
}

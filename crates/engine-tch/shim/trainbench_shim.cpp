// A small C ABI over the libtorch calls that tch does not expose:
// per-device autocast (CPU and CUDA, bf16 or fp16), TF32 switches, a bf16
// capability check, the CUDA caching allocator's peak statistics, and
// libtorch's Kineto profiler (the one torch.profiler drives) with user-scope
// annotations around the profiled steps and the optimizer update.
// Every entry point catches C++ exceptions and copies the message out, so a
// libtorch error never unwinds through Rust.
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_fused_adamw.h>
#include <c10/core/GradMode.h>
#include <ATen/record_function.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <torch/csrc/profiler/orchestration/observer.h>
#include <torch/headeronly/version.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

// torch/csrc/autograd/profiler_kineto.h includes Kineto's <ActivityType.h>,
// which the torch wheel does not ship, so the four entry points used here are
// declared as libtorch_cpu exports them (the link fails if one is wrong).
// ProfilerResult stays opaque: only its out-of-line members are called, and
// it is destroyed through its own destructor and unsized delete.
namespace torch::autograd::profiler {
struct ProfilerResult {
  ~ProfilerResult();
  void save(const std::string& path);
};
// libtorch 2.13 added an activity filter to prepareProfiler; 2.11 (the
// worker built for the GPU machines' PyTorch, crates/engine-tch-2.11) has
// the two-argument form.
#if TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 13
#define TB_PROFILER_FILTER 0
void prepareProfiler(const torch::profiler::impl::ProfilerConfig& config,
                     const std::set<torch::profiler::impl::ActivityType>& activities);
#else
#define TB_PROFILER_FILTER 1
using ActivityFilter = std::unordered_map<torch::profiler::impl::ActivityType,
                                          std::unordered_set<std::string>>;
void prepareProfiler(const torch::profiler::impl::ProfilerConfig& config,
                     const std::set<torch::profiler::impl::ActivityType>& activities,
                     const ActivityFilter& activity_filter);
#endif
void enableProfiler(const torch::profiler::impl::ProfilerConfig& config,
                    const std::set<torch::profiler::impl::ActivityType>& activities,
                    const std::unordered_set<at::RecordScope>& scopes);
std::unique_ptr<ProfilerResult> disableProfiler();
}  // namespace torch::autograd::profiler

namespace {
void copy_error(const char* what, char* err, size_t err_len) {
  if (err == nullptr || err_len == 0) return;
  std::strncpy(err, what, err_len - 1);
  err[err_len - 1] = '\0';
}
c10::DeviceType device_type(int code) {
  return code == 1 ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
}
}  // namespace

extern "C" {

// device: 0 CPU, 1 CUDA; dtype: 0 bfloat16, 1 float16. Returns 0 on success.
int tb_autocast_set(int device, int enabled, int dtype, char* err, size_t err_len) {
  try {
    auto t = device_type(device);
    at::autocast::set_autocast_dtype(t, dtype == 1 ? at::kHalf : at::kBFloat16);
    at::autocast::set_autocast_enabled(t, enabled != 0);
    if (enabled == 0) at::autocast::clear_cache();
    return 0;
  } catch (const std::exception& e) {
    copy_error(e.what(), err, err_len);
    return 1;
  }
}

int tb_autocast_enabled(int device) {
  try {
    return at::autocast::is_autocast_enabled(device_type(device)) ? 1 : 0;
  } catch (...) {
    return -1;
  }
}

// TF32 for cuBLAS matmuls and cuDNN convolutions.
int tb_set_tf32(int enabled, char* err, size_t err_len) {
  try {
    at::globalContext().setAllowTF32CuBLAS(enabled != 0);
    at::globalContext().setAllowTF32CuDNN(enabled != 0);
    return 0;
  } catch (const std::exception& e) {
    copy_error(e.what(), err, err_len);
    return 1;
  }
}

// Loads libtorch's CUDA half, libtorch_cuda.so (from LD_LIBRARY_PATH or the
// worker's RUNPATH). The worker calls nothing in it, so the linker leaves it
// out of the binary and libtorch sees no CUDA device until it is loaded; it
// is loaded only for a CUDA run (it adds about 230 MiB to the process).
// Returns 0 when libtorch's CUDA hooks are the real ones afterwards; 1 when
// the library does not load (err: the loader's reason); 2 when it loaded but
// libtorch had already settled on its CPU-only hooks (asked for before).
int tb_load_cuda(char* err, size_t err_len) {
  if (dlopen("libtorch_cuda.so", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char* why = dlerror();
    copy_error(why != nullptr ? why : "libtorch_cuda.so: not found", err, err_len);
    return 1;
  }
  try {
    if (at::detail::getCUDAHooks().isBuilt()) return 0;
    copy_error("libtorch_cuda.so loaded, but libtorch had already chosen its CPU-only CUDA hooks (something asked for CUDA before the load)", err, err_len);
    return 2;
  } catch (const std::exception& e) {
    copy_error(e.what(), err, err_len);
    return 2;
  }
}

// 1 when the CUDA device natively supports bf16 (compute capability 8.0+, the
// same test torch uses for bf16 cuDNN convolutions), 0 otherwise.
int tb_cuda_bf16_native() {
  try {
    return at::detail::getCUDAHooks().supportsBFloat16ConvolutionWithCuDNNv8() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

// GradScaler's unscale: every gradient multiplied by inv_scale and found_inf
// set to 1 if any is not finite, in one fused call per list (PyTorch's
// `_amp_foreach_non_finite_check_and_unscale_`, what torch.amp.GradScaler
// calls) instead of several kernels per parameter. `grads` are tch tensors:
// tch's C handle is a `torch::Tensor*` (libtch's torch_api.h). All must share
// one device and dtype (the caller groups them).
int tb_amp_unscale(void** grads, size_t n, void* found_inf, void* inv_scale, char* err,
                   size_t err_len) {
  try {
    std::vector<at::Tensor> list;
    list.reserve(n);
    for (size_t i = 0; i < n; ++i) list.push_back(*static_cast<at::Tensor*>(grads[i]));
    at::_amp_foreach_non_finite_check_and_unscale_(list, *static_cast<at::Tensor*>(found_inf),
                                                   *static_cast<at::Tensor*>(inv_scale));
    return 0;
  } catch (const std::exception& e) {
    copy_error(e.what(), err, err_len);
    return 1;
  }
}

// AdamW as PyTorch's `fused=True` runs it: one `_fused_adamw_` call updates
// every parameter that has a gradient (decoupled weight decay, no amsgrad),
// after the shared step counter is advanced. `params`, `exp_avgs` and
// `exp_avg_sqs` are tch tensor handles, one of each per parameter;
// `step` is a one-element float tensor on the parameters' device.
int tb_fused_adamw(void** params, void** exp_avgs, void** exp_avg_sqs, size_t n, void* step,
                   double lr, double beta1, double beta2, double weight_decay, double eps,
                   char* err, size_t err_len) {
  try {
    c10::NoGradGuard no_grad;
    at::Tensor& steps = *static_cast<at::Tensor*>(step);
    steps.add_(1);
    std::vector<at::Tensor> p, g, m, v, s;
    for (size_t i = 0; i < n; ++i) {
      const at::Tensor& param = *static_cast<at::Tensor*>(params[i]);
      const at::Tensor& grad = param.grad();
      if (!grad.defined()) continue;
      p.push_back(param);
      g.push_back(grad);
      m.push_back(*static_cast<at::Tensor*>(exp_avgs[i]));
      v.push_back(*static_cast<at::Tensor*>(exp_avg_sqs[i]));
      s.push_back(steps);
    }
    if (p.empty()) return 0;
    at::_fused_adamw_(p, g, m, v, {}, s, lr, beta1, beta2, weight_decay, eps,
                      /*amsgrad=*/false, /*maximize=*/false);
    return 0;
  } catch (const std::exception& e) {
    copy_error(e.what(), err, err_len);
    return 1;
  }
}

// Every parameter's gradient set to none (`zero_grad(set_to_none=True)`,
// PyTorch's default): no kernel, the next backward allocates them.
void tb_grads_to_none(void** params, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    static_cast<at::Tensor*>(params[i])->mutable_grad().reset();
  }
}

// A 4-D tensor's data in channels-last order, in place (`set_data`, so the
// tensor stays the same parameter): what `model.to(memory_format=
// torch.channels_last)` does to a CNN's weights. Other ranks are left.
int tb_channels_last_(void* tensor, char* err, size_t err_len) {
  try {
    at::Tensor& t = *static_cast<at::Tensor*>(tensor);
    if (t.dim() == 4) {
      c10::NoGradGuard no_grad;
      t.set_data(t.contiguous(at::MemoryFormat::ChannelsLast));
    }
    return 0;
  } catch (const std::exception& e) {
    copy_error(e.what(), err, err_len);
    return 1;
  }
}

int tb_cuda_memory_peaks(int device, uint64_t* allocated_peak, uint64_t* reserved_peak,
                         char* err, size_t err_len) {
  try {
    auto* alloc = c10::getDeviceAllocator(c10::DeviceType::CUDA);
    auto stats = alloc->getDeviceStats(static_cast<c10::DeviceIndex>(device));
    const auto agg = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    *allocated_peak = static_cast<uint64_t>(stats.allocated_bytes[agg].peak);
    *reserved_peak = static_cast<uint64_t>(stats.reserved_bytes[agg].peak);
    return 0;
  } catch (const std::exception& e) {
    copy_error(e.what(), err, err_len);
    return 1;
  }
}

// Starts libtorch's Kineto profiler on this thread (CPU operators, and CUDA
// kernels and runtime calls when cuda != 0), as torch.profiler.profile does.
int tb_profiler_start(int cuda, char* err, size_t err_len) {
  try {
    namespace impl = torch::profiler::impl;
    impl::ProfilerConfig config(impl::ProfilerState::KINETO);
    std::set<impl::ActivityType> activities{impl::ActivityType::CPU};
    if (cuda != 0) activities.insert(impl::ActivityType::CUDA);
#if TB_PROFILER_FILTER
    torch::autograd::profiler::prepareProfiler(config, activities, {});
#else
    torch::autograd::profiler::prepareProfiler(config, activities);
#endif
    torch::autograd::profiler::enableProfiler(config, activities, {});
    return 0;
  } catch (const std::exception& e) {
    copy_error(e.what(), err, err_len);
    return 1;
  }
}

// Stops the profiler and writes its trace (Chrome trace-event JSON, what
// torch.profiler's export_chrome_trace writes) to `path`.
int tb_profiler_stop(const char* path, char* err, size_t err_len) {
  torch::autograd::profiler::ProfilerResult* result = nullptr;
  try {
    result = torch::autograd::profiler::disableProfiler().release();
    if (result == nullptr) {
      copy_error("the profiler returned no result", err, err_len);
      return 1;
    }
    result->save(std::string(path));
    result->~ProfilerResult();
    ::operator delete(result);
    return 0;
  } catch (const std::exception& e) {
    if (result != nullptr) {
      result->~ProfilerResult();
      ::operator delete(result);
    }
    copy_error(e.what(), err, err_len);
    return 1;
  }
}

// A user-scope annotation (torch.profiler.record_function): entered here,
// ended by tb_scope_exit. Null when it could not be made.
void* tb_scope_enter(const char* name) {
  try {
    auto* r = new at::RecordFunction(at::RecordScope::USER_SCOPE);
    if (r->isActive()) r->before(std::string_view(name));
    return r;
  } catch (...) {
    return nullptr;
  }
}

void tb_scope_exit(void* scope) {
  if (scope == nullptr) return;
  auto* r = static_cast<at::RecordFunction*>(scope);
  try {
    r->end();
  } catch (...) {
  }
  delete r;
}

}  // extern "C"

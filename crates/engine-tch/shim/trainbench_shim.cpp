// A small C ABI over the libtorch calls that tch does not expose:
// per-device autocast (CPU and CUDA, bf16 or fp16), TF32 switches, a bf16
// capability check and the CUDA caching allocator's peak statistics.
// Every entry point catches C++ exceptions and copies the message out, so a
// libtorch error never unwinds through Rust.
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/CachingDeviceAllocator.h>

#include <cstdint>
#include <cstring>
#include <exception>

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

// 1 when the CUDA device natively supports bf16 (compute capability 8.0+, the
// same test torch uses for bf16 cuDNN convolutions), 0 otherwise.
int tb_cuda_bf16_native() {
  try {
    return at::detail::getCUDAHooks().supportsBFloat16ConvolutionWithCuDNNv8() ? 1 : 0;
  } catch (...) {
    return 0;
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

}  // extern "C"

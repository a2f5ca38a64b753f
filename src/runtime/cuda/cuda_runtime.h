// The CUDA runtime services tessera's device backends share: device
// discovery, tracked device memory, copies and error conversion. This header
// needs no CUDA headers, so host code (tests, verify) can use it; it exists
// only in builds with TESSERA_HAVE_CUDA.
#pragma once

#include <cstddef>
#include <string>

#include "tessera/allocator.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::cuda {

// Minimum compute capability of tessera's kernels (bf16 tensor cores).
inline constexpr int kMinComputeCapability = 80;

// True when `device` exists and is sm_80 or newer; otherwise *why says why
// ("no CUDA device: cudaGetDeviceCount: no CUDA-capable device is detected").
bool device_available(int device, std::string* why);
// "NVIDIA H200 (sm_90, 132 SMs, 141 GiB)"; empty when unavailable.
std::string device_description(int device);

// cudaMalloc / cudaFree behind the tracking allocator's interface.
MemoryResource& device_memory_resource(int device);
// The context's tracked allocator for `device`.
TrackingAllocator& device_allocator(Context& ctx, int device);

Status copy_to_device(void* dst, const void* src, size_t bytes, void* stream);
Status copy_to_host(void* dst, const void* src, size_t bytes, void* stream);
Status synchronize(void* stream);

}  // namespace tessera::cuda

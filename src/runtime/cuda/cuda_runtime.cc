#include "runtime/cuda/cuda_runtime.h"

#include <array>
#include <mutex>

#include "runtime/cuda/cuda_check.h"
#include "runtime/device_memory.h"

namespace tessera::cuda {

namespace {

class DeviceMemoryResource final : public MemoryResource {
 public:
  explicit DeviceMemoryResource(int device) : device_(device) {}
  void* allocate(size_t bytes, size_t /*alignment: cudaMalloc gives 256*/) override {
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return nullptr;
    cudaSetDevice(device_);
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) p = nullptr;
    cudaSetDevice(previous);
    return p;
  }
  void deallocate(void* ptr) override { cudaFree(ptr); }

 private:
  int device_;
};

constexpr int kMaxDevices = 16;

// The CUDA implementation of the staging seam (runtime/device_memory.h).
class CudaDeviceMemory final : public DeviceMemory {
 public:
  bool present(Device device, std::string* why) const override {
    return device_available(device.index, why);
  }
  TrackingAllocator& allocator(Device device, Context& ctx) override {
    return device_allocator(ctx, device.index);
  }
  Status copy_to_device(Device /*device*/, void* dst, const void* src, size_t bytes,
                        Context& ctx) override {
    TESSERA_RETURN_IF_ERROR(cuda::copy_to_device(dst, src, bytes, ctx.device_stream()));
    return synchronize(ctx.device_stream());
  }
  Status copy_to_host(Device /*device*/, void* dst, const void* src, size_t bytes,
                      Context& ctx) override {
    return cuda::copy_to_host(dst, src, bytes, ctx.device_stream());
  }
};

// Registered when this module is linked (every binary with a CUDA backend).
[[maybe_unused]] const bool kRegistered = [] {
  static CudaDeviceMemory memory;
  register_device_memory(DeviceKind::kCuda, &memory);
  return true;
}();

}  // namespace

bool device_available(int device, std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    *why = std::string("no CUDA device: cudaGetDeviceCount: ") + cudaGetErrorString(err);
    return false;
  }
  if (device >= count) {
    *why = "no CUDA device " + std::to_string(device) + " (" + std::to_string(count) + " present)";
    return false;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    *why = "cudaGetDeviceProperties failed for device " + std::to_string(device);
    return false;
  }
  const int cc = prop.major * 10 + prop.minor;
  if (cc < kMinComputeCapability) {
    *why = std::string(prop.name) + " is sm_" + std::to_string(cc) + "; tessera's CUDA kernels need sm_" +
           std::to_string(kMinComputeCapability) + " or newer";
    return false;
  }
  return true;
}

std::string device_description(int device) {
  std::string why;
  if (!device_available(device, &why)) return "";
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, device);
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major * 10 + prop.minor) + ", " +
         std::to_string(prop.multiProcessorCount) + " SMs, " +
         std::to_string(prop.totalGlobalMem >> 30) + " GiB)";
}

MemoryResource& device_memory_resource(int device) {
  static std::once_flag once;
  static std::array<DeviceMemoryResource*, kMaxDevices> resources{};
  std::call_once(once, [] {
    for (int i = 0; i < kMaxDevices; ++i) resources[i] = new DeviceMemoryResource(i);  // process lifetime
  });
  return *resources.at(static_cast<size_t>(device));
}

TrackingAllocator& device_allocator(Context& ctx, int device) {
  return ctx.device_allocator(Device::cuda(device), &device_memory_resource(device));
}

Status copy_to_device(void* dst, const void* src, size_t bytes, void* stream) {
  TESSERA_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
                                               static_cast<cudaStream_t>(stream)));
  return Status::Ok();
}

Status copy_to_host(void* dst, const void* src, size_t bytes, void* stream) {
  TESSERA_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost,
                                               static_cast<cudaStream_t>(stream)));
  return synchronize(stream);
}

Status synchronize(void* stream) {
  TESSERA_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  return Status::Ok();
}

}  // namespace tessera::cuda

// DeviceMemory: the memory operations of one kind of device (allocate through
// the context's tracked allocator, copy to and from host memory, "is this
// device here?"), so host-side tools — the conformance runner, shadow and
// canary runs — can stage tensors onto a backend's device without naming its
// runtime. The CUDA runtime module registers the CUDA implementation (CUDA
// builds); tests install a fake device with ScopedDeviceMemory.
#pragma once

#include <cstddef>
#include <string>

#include "tessera/allocator.h"
#include "tessera/context.h"
#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // True when `device` exists and can be used; otherwise *why says why
  // ("no CUDA device: ...").
  virtual bool present(Device device, std::string* why) const = 0;
  // The tracked allocator of `device`'s memory in `ctx` (budget, owners, leaks).
  virtual TrackingAllocator& allocator(Device device, Context& ctx) = 0;
  // Host -> device and device -> host; both complete before returning.
  virtual Status copy_to_device(Device device, void* dst, const void* src, size_t bytes,
                                Context& ctx) = 0;
  virtual Status copy_to_host(Device device, void* dst, const void* src, size_t bytes,
                              Context& ctx) = 0;
};

// The memory operations for `device`: a ScopedDeviceMemory installed for
// exactly this device first, else the implementation registered for its kind;
// null when this build has none (a CPU-only build asked about cuda:0). Never
// asked about the CPU.
DeviceMemory* device_memory(Device device);

// Registers the implementation for every device of `kind`, for the process
// lifetime (the CUDA runtime module does it at load time).
void register_device_memory(DeviceKind kind, DeviceMemory* memory);

// Test seam: while alive, `device` (one kind and index, e.g. an index no
// machine has) is served by `memory`, so the staging paths run without the
// hardware. Not nested for the same device.
class ScopedDeviceMemory {
 public:
  ScopedDeviceMemory(Device device, DeviceMemory* memory);
  ~ScopedDeviceMemory();
  ScopedDeviceMemory(const ScopedDeviceMemory&) = delete;
  ScopedDeviceMemory& operator=(const ScopedDeviceMemory&) = delete;

 private:
  Device device_;
};

}  // namespace tessera

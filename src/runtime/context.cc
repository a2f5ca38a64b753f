#include "tessera/context.h"

#include <string>

#include "runtime/reuse_memory_resource.h"

namespace tessera {

Context::Context(const ContextOptions& options)
    : budget_(options.memory_budget_bytes),
      host_resource_(options.reuse_memory_bytes > 0
                         ? std::make_unique<ReuseMemoryResource>(host_memory_resource(),
                                                                 options.reuse_memory_bytes)
                         : nullptr),
      allocator_(options.memory_budget_bytes, host_resource_.get()),
      pool_(options.num_threads) {
  profiler_.set_enabled(options.profile);
}

Context::~Context() {
  const auto report = [this](const TrackingAllocator& alloc, const std::string& where) {
    for (const auto& leak : alloc.leaks()) {
      logger_.log(LogLevel::kError, "leak: " + leak.owner + " still holds " +
                                        std::to_string(leak.bytes) + " bytes" + where +
                                        " at context end");
    }
  };
  report(allocator_, "");
  for (const auto& [index, alloc] : device_allocators_) {
    report(*alloc, " of cuda:" + std::to_string(index));
  }
}

TrackingAllocator& Context::device_allocator(Device device, MemoryResource* resource) {
  std::lock_guard<std::mutex> lock(device_mu_);
  auto& slot = device_allocators_[device.index];
  if (!slot) slot = std::make_unique<TrackingAllocator>(budget_, resource);
  return *slot;
}

}  // namespace tessera

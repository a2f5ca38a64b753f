// Context: the services every backend and model stage shares — threads,
// the tracking allocator, the profiler and the logger.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "tessera/allocator.h"
#include "tessera/logging.h"
#include "tessera/profiler.h"
#include "tessera/tensor.h"
#include "tessera/thread_pool.h"

namespace tessera {

struct ContextOptions {
  int num_threads = 0;                        // 0: one per hardware thread
  std::optional<size_t> memory_budget_bytes;  // unset: unlimited
  bool profile = true;
  // Bytes of freed large host blocks (1 MiB and up) kept for reuse instead of
  // returned to the system, so per-call workspaces do not come back as fresh
  // zeroed pages each time (runtime/reuse_memory_resource.h). 0: off.
  size_t reuse_memory_bytes = 0;
};

class Context {
 public:
  explicit Context(const ContextOptions& options = {});
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  // Logs one error line per owner that still holds memory (the leak report).
  ~Context();

  ThreadPool& pool() { return pool_; }
  const ThreadPool& pool() const { return pool_; }
  TrackingAllocator& allocator() { return allocator_; }
  const TrackingAllocator& allocator() const { return allocator_; }
  Profiler& profiler() { return profiler_; }
  Logger& logger() { return logger_; }

  // Tracked allocator for the memory of `device` (cuda:N), created on first
  // use over `resource` (which must outlive the context). Same accounting,
  // budget and leak report as host memory; the CUDA runtime module supplies
  // the resource, so this header needs no CUDA.
  TrackingAllocator& device_allocator(Device device, MemoryResource* resource);
  // The stream device backends enqueue on (a cudaStream_t); null: default.
  void* device_stream() const { return device_stream_; }
  void set_device_stream(void* stream) { device_stream_ = stream; }

 private:
  std::optional<size_t> budget_;
  std::mutex device_mu_;
  std::map<int, std::unique_ptr<TrackingAllocator>> device_allocators_;
  void* device_stream_ = nullptr;
  std::unique_ptr<MemoryResource> host_resource_;  // before allocator_: outlives it
  TrackingAllocator allocator_;
  ThreadPool pool_;
  Profiler profiler_;
  Logger logger_;
};

}  // namespace tessera

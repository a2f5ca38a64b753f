// Context: the services every backend and model stage shares — threads,
// the tracking allocator, the profiler and the logger.
#pragma once

#include <cstddef>
#include <optional>

#include "tessera/allocator.h"
#include "tessera/logging.h"
#include "tessera/profiler.h"
#include "tessera/thread_pool.h"

namespace tessera {

struct ContextOptions {
  int num_threads = 0;                        // 0: one per hardware thread
  std::optional<size_t> memory_budget_bytes;  // unset: unlimited
  bool profile = true;
};

class Context {
 public:
  explicit Context(const ContextOptions& options = {});
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  // Logs one error line per owner that still holds memory (the leak report).
  ~Context();

  ThreadPool& pool() { return pool_; }
  TrackingAllocator& allocator() { return allocator_; }
  const TrackingAllocator& allocator() const { return allocator_; }
  Profiler& profiler() { return profiler_; }
  Logger& logger() { return logger_; }

 private:
  TrackingAllocator allocator_;
  ThreadPool pool_;
  Profiler profiler_;
  Logger logger_;
};

}  // namespace tessera

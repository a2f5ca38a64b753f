#include "tessera/context.h"

#include <string>

namespace tessera {

Context::Context(const ContextOptions& options)
    : allocator_(options.memory_budget_bytes), pool_(options.num_threads) {
  profiler_.set_enabled(options.profile);
}

Context::~Context() {
  for (const auto& leak : allocator_.leaks()) {
    logger_.log(LogLevel::kError, "leak: " + leak.owner + " still holds " +
                                      std::to_string(leak.bytes) + " bytes at context end");
  }
}

}  // namespace tessera

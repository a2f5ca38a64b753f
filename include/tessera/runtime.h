// Runtime: what every tessera program sets up once — the registry of
// built-in attention backends, one Context (threads, tracked memory,
// profiler, logger), one Dispatcher under a policy, and the tuned decision
// table `tessera tune` wrote for this machine. The CLI is a client of it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "tessera/context.h"
#include "tessera/dispatcher.h"
#include "tessera/registry.h"
#include "tessera/status.h"

namespace tessera {

// "0.1.0": the version of the installed library (CMake's PROJECT_VERSION).
const char* library_version();

struct RuntimeOptions {
  // Policy text (see Policy in dispatcher.h); "": $TESSERA_ATTENTION, else auto.
  std::string attention;
  // 0: one per hardware thread; at most ThreadPool::max_threads(). Threads
  // the system cannot start make create() fail (ResourceExhausted).
  int threads = 0;
  size_t memory_budget_bytes = 0;  // 0: unlimited
  // Freed large host blocks kept for reuse (ContextOptions::reuse_memory_bytes).
  size_t memory_reuse_bytes = size_t{192} << 20;
  // Tuned table: a path, "none", or "": $TESSERA_TUNING, else the default
  // path when present. A table that cannot be used is logged and skipped.
  // Without one, auto follows the ranking shipped for this CPU kind.
  std::string tuning;
};

class Runtime {
 public:
  // The error names the option and the value ("attention: unknown backend ...").
  static Status create(const RuntimeOptions& options, std::unique_ptr<Runtime>* out);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Context& context();
  Registry& registry();
  Dispatcher& dispatcher();
  const Policy& policy() const;
  // The tuned table in use ("" when none) and, without one, why and what
  // auto uses instead: the shipped default ranking measured for this CPU
  // kind (docs/OBSERVABILITY.md), else the priority order.
  const std::string& tuning_path() const;
  const std::string& tuning_note() const;
  // What `tessera --trace FILE` and `--metrics FILE` write, for this runtime:
  // the Chrome trace JSON of the spans its profiler keeps (opens in Perfetto
  // and chrome://tracing), and the Prometheus text of its profiler, tracked
  // memory and dispatcher.
  std::string chrome_trace() const;
  std::string metrics_text();

 private:
  struct Impl;
  explicit Runtime(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera

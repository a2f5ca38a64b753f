// The xla backend's process-wide state for one plugin path: the loaded
// plugin, its client and the executables compiled for it, cached per program
// signature. Set up on first use (the plugin is large and its client starts
// threads), never torn down.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tessera/context.h"
#include "xla/pjrt_client.h"
#include "xla/stablehlo_program.h"

namespace tessera::xla {

struct CacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;  // compiles, failed ones included
  size_t entries = 0;
};

class XlaRuntime {
 public:
  // The runtime for `plugin_path` (empty: discovered, see plugin_discovery.h).
  // Always returns a runtime; status() says whether it is usable.
  static XlaRuntime& for_plugin(const std::string& plugin_path);

  const Status& status() const { return status_; }
  const std::string& plugin_path() const { return plugin_path_; }
  // "xla-cpu-pjrt.so (cpu, PJRT C API 0.81)", for `tessera backends`.
  std::string describe() const;
  PjrtClient& client() const { return *client_; }

  // The executable for `key`, compiled on a miss (span "xla.compile").
  Status executable(const ProgramKey& key, Context& ctx, std::shared_ptr<PjrtExecutable>* out);
  CacheStats cache_stats() const;

 private:
  explicit XlaRuntime(const std::string& requested_path);

  std::string plugin_path_;
  Status status_;
  PjrtClient* client_ = nullptr;
  mutable std::mutex mu_;  // the cache; held while compiling so a key compiles once
  std::unordered_map<ProgramKey, std::shared_ptr<PjrtExecutable>, ProgramKeyHash> cache_;
  CacheStats stats_;
};

}  // namespace tessera::xla

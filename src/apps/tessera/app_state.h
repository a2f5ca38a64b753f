// AppState: what every CLI command shares — the registry of built-in
// backends, one Context and one Dispatcher built from the global options.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "observe_options.h"
#include "tessera/tessera.h"

namespace tessera::cli {

struct GlobalOptions {
  std::string attention;      // policy text; empty: TESSERA_ATTENTION, else auto
  int threads = 0;            // 0: one per hardware thread
  std::string memory_budget;  // "512M", "2G", bytes; empty: unlimited
  std::string memory_reuse = "192M";  // ContextOptions::reuse_memory_bytes; "0": off
};

class AppState {
 public:
  GlobalOptions options;
  ObserveOptions observe;  // --trace, --profile, --metrics, --shadow, --canary, --tuning

  // Builds the registry, context and dispatcher once (later calls are no-ops).
  Status init();
  Registry& registry() { return registry_; }
  Context& context() { return *context_; }
  Dispatcher& dispatcher() { return *dispatcher_; }
  const Policy& policy() const { return policy_; }
  const ObserveState& observe_state() const { return observe_state_; }
  // At exit: writes the trace / metrics / profile the flags asked for.
  Status finish();

 private:
  bool initialized_ = false;
  Registry registry_;
  Policy policy_;
  std::unique_ptr<Context> context_;
  std::unique_ptr<Dispatcher> dispatcher_;
  ObserveState observe_state_;
};

// "512M" -> 536870912; accepts K/M/G (binary) suffixes and plain bytes.
Status parse_byte_size(const std::string& text, const char* field, size_t* out);

// Prints "tessera: <message>" to stderr and returns exit code `code`.
int fail(const Status& status, int code = 2);

}  // namespace tessera::cli

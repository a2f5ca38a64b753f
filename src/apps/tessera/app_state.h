// AppState: what every CLI command shares — a tessera::Runtime (the
// registry of built-in backends, one Context, one Dispatcher, the tuned
// table) built from the global options, and the observability flags.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "observe_options.h"
#include "tessera/runtime.h"
#include "tessera/tessera.h"

namespace tessera::cli {

struct GlobalOptions {
  std::string attention;              // policy text; empty: TESSERA_ATTENTION, else auto
  int threads = 0;                    // 0: one per hardware thread
  std::string memory_budget;          // "512M", "2G", bytes; empty: unlimited
  std::string memory_reuse = "192M";  // ContextOptions::reuse_memory_bytes; "0": off
};

class AppState {
 public:
  GlobalOptions options;
  ObserveOptions observe;  // --trace, --profile, --metrics, --shadow, --canary, --tuning

  // Builds the runtime once (later calls are no-ops).
  Status init();
  Runtime& runtime() { return *runtime_; }
  Registry& registry() { return runtime_->registry(); }
  Context& context() { return runtime_->context(); }
  Dispatcher& dispatcher() { return runtime_->dispatcher(); }
  const Policy& policy() const { return runtime_->policy(); }
  const ObserveState& observe_state() const { return observe_state_; }
  // At exit: writes the trace / metrics / profile the flags asked for.
  Status finish();

 private:
  std::unique_ptr<Runtime> runtime_;
  ObserveState observe_state_;
};

// "512M" -> 536870912; accepts K/M/G (binary) suffixes and plain bytes.
Status parse_byte_size(const std::string& text, const char* field, size_t* out);

// Prints "tessera: <message>" to stderr and returns exit code `code`.
// "--max-tokens" for the library's option "max_tokens".
std::string flag_of_option(const std::string& option);

int fail(const Status& status, int code = 2);

}  // namespace tessera::cli

#include "app_state.h"

#include <cstdio>

namespace tessera::cli {

Status parse_byte_size(const std::string& text, const char* field, size_t* out) {
  size_t pos = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &pos);
  } catch (const std::exception&) {
    return invalid_argument(std::string(field) + " = '" + text +
                            "' is not a size (examples: 1048576, 512K, 64M, 2G)");
  }
  const std::string suffix = text.substr(pos);
  unsigned long long mult = 1;
  if (suffix == "K" || suffix == "KiB") {
    mult = 1ull << 10;
  } else if (suffix == "M" || suffix == "MiB") {
    mult = 1ull << 20;
  } else if (suffix == "G" || suffix == "GiB") {
    mult = 1ull << 30;
  } else if (!suffix.empty() && suffix != "B") {
    return invalid_argument(std::string(field) + " = '" + text + "': unknown unit '" + suffix +
                            "' (use K, M or G)");
  }
  *out = static_cast<size_t>(value * mult);
  return Status::Ok();
}

Status AppState::init() {
  if (initialized_) return Status::Ok();
  ContextOptions ctx_options;
  ctx_options.num_threads = options.threads;
  if (!options.memory_budget.empty()) {
    size_t budget = 0;
    TESSERA_RETURN_IF_ERROR(parse_byte_size(options.memory_budget, "--memory-budget", &budget));
    ctx_options.memory_budget_bytes = budget;
  }
  TESSERA_RETURN_IF_ERROR(
      parse_byte_size(options.memory_reuse, "--memory-reuse", &ctx_options.reuse_memory_bytes));
  if (options.attention.empty()) {
    TESSERA_RETURN_IF_ERROR(policy_from_environment(Policy{}, &policy_));
  } else {
    Status s = parse_policy(options.attention, &policy_);
    if (!s.ok()) return invalid_argument("--attention: " + s.message());
  }
  register_builtin_backends(registry_);
  context_ = std::make_unique<Context>(ctx_options);
  dispatcher_ = std::make_unique<Dispatcher>(registry_, policy_);
  initialized_ = true;
  return configure_observability(observe, *context_, *dispatcher_, &observe_state_);
}

Status AppState::finish() {
  if (!initialized_) return Status::Ok();
  return finish_observability(observe, observe_state_, *context_, *dispatcher_);
}

int fail(const Status& status, int code) {
  std::fprintf(stderr, "tessera: %s\n", status.to_string().c_str());
  return code;
}

}  // namespace tessera::cli

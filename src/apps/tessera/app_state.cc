#include "app_state.h"

#include <algorithm>
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
  if (runtime_ != nullptr) return Status::Ok();
  RuntimeOptions rt;
  rt.threads = options.threads;
  rt.attention = options.attention;
  rt.tuning = observe.tuning;
  if (!options.memory_budget.empty()) {
    TESSERA_RETURN_IF_ERROR(
        parse_byte_size(options.memory_budget, "--memory-budget", &rt.memory_budget_bytes));
  }
  TESSERA_RETURN_IF_ERROR(
      parse_byte_size(options.memory_reuse, "--memory-reuse", &rt.memory_reuse_bytes));
  TESSERA_RETURN_IF_ERROR(Runtime::create(rt, &runtime_));
  observe_state_.tuning_path = runtime_->tuning_path();
  observe_state_.tuning_note = runtime_->tuning_note();
  return configure_observability(observe, context(), dispatcher(), &observe_state_);
}

Status AppState::finish() {
  if (runtime_ == nullptr) return Status::Ok();
  return finish_observability(observe, observe_state_, context(), dispatcher());
}

std::string flag_of_option(const std::string& option) {
  std::string flag = "--" + option;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

int fail(const Status& status, int code) {
  // The library names the option by its own name (max_tokens); the user
  // typed the flag (--max-tokens).
  const std::string message = status.option().empty()
                                  ? status.to_string()
                                  : std::string(status_code_name(status.code())) + ": " +
                                        status.message_naming(flag_of_option(status.option()));
  std::fprintf(stderr, "tessera: %s\n", message.c_str());
  return code;
}

}  // namespace tessera::cli

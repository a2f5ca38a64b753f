#include "pipeline/windowing.h"

#include <algorithm>
#include <string>

namespace tessera::pipeline {

namespace {
constexpr int kSpecialTokens = 2;  // [CLS] and [SEP]
}  // namespace

Status check_window_options(const WindowOptions& options) {
  if (options.max_tokens < kSpecialTokens + 1) {
    return invalid_argument("--max-tokens = " + std::to_string(options.max_tokens) +
                            ": must be at least 3 ([CLS], one token, [SEP])");
  }
  const int content = options.max_tokens - kSpecialTokens;
  if (options.stride < 0 || options.stride >= content) {
    return invalid_argument("--stride = " + std::to_string(options.stride) + ": must be in [0, " +
                            std::to_string(content) + ") (window of --max-tokens " +
                            std::to_string(options.max_tokens) + " minus [CLS] and [SEP])");
  }
  return Status::Ok();
}

std::vector<Window> plan_windows(int64_t num_tokens, const WindowOptions& options) {
  const int64_t content = options.max_tokens - kSpecialTokens;
  const int64_t step = content - options.stride;  // > 0 for valid options
  std::vector<Window> windows;
  for (int64_t begin = 0; num_tokens > 0; begin += step) {
    const int64_t end = std::min(begin + content, num_tokens);
    windows.push_back({begin, end});
    if (end == num_tokens) break;
  }
  return windows;
}

}  // namespace tessera::pipeline

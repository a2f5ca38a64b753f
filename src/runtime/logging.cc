#include "tessera/logging.h"

#include <cstdio>

namespace tessera {

namespace {
const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}
}  // namespace

Logger::Logger() {
  sink_ = [](LogLevel level, std::string_view message) {
    std::fprintf(stderr, "tessera %s: %.*s\n", level_name(level), static_cast<int>(message.size()),
                 message.data());
  };
}

void Logger::set_sink(Sink sink) {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = std::move(sink);
}

void Logger::set_min_level(LogLevel level) {
  std::lock_guard<std::mutex> lock(mu_);
  min_level_ = level;
}

void Logger::log(LogLevel level, std::string_view message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (level < min_level_ || !sink_) return;
  sink_(level, message);
}

}  // namespace tessera

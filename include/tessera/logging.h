// A minimal leveled logger with a replaceable sink (tests capture messages).
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace tessera {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

class Logger {
 public:
  using Sink = std::function<void(LogLevel, std::string_view)>;
  Logger();  // writes warnings and errors to stderr
  void set_sink(Sink sink);
  void set_min_level(LogLevel level);
  void log(LogLevel level, std::string_view message);

 private:
  std::mutex mu_;
  Sink sink_;
  LogLevel min_level_ = LogLevel::kWarning;
};

}  // namespace tessera

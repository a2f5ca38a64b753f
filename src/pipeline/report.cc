#include "pipeline/report.h"

#include <algorithm>

namespace tessera::pipeline {

namespace {

constexpr int kBarWidth = 24;
constexpr double kNsPerSecond = 1e9;
constexpr double kMiB = 1024.0 * 1024.0;

double seconds(int64_t ns) { return static_cast<double>(ns) / kNsPerSecond; }

double per_second(int64_t count, int64_t ns) {
  return ns > 0 ? static_cast<double>(count) / seconds(ns) : 0.0;
}

std::string printf_string(const char* format, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

}  // namespace

void ProgressBar::update(const PipelineStats& stats, uint64_t bytes_read, uint64_t bytes_total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < kRedrawInterval) return;
  last_ = now;
  std::string bar;
  if (bytes_total > 0) {
    const double done = std::min(1.0, static_cast<double>(bytes_read) / bytes_total);
    const int filled = static_cast<int>(done * kBarWidth);
    bar = "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "] " +
          printf_string("%3d%%  ", static_cast<int>(done * 100));
  }
  // stats.elapsed_ns is set only at the end; the bar measures from its creation.
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - start_).count();
  std::fprintf(out_, "\r%s%lld docs  %lld chunks  %.1f docs/s  %.0f tokens/s\x1b[K", bar.c_str(),
               static_cast<long long>(stats.documents), static_cast<long long>(stats.chunks),
               per_second(stats.documents, ns), per_second(stats.tokens, ns));
  std::fflush(out_);
  drawn_ = true;
}

void ProgressBar::clear() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(out_, "\r\x1b[K");
  std::fflush(out_);
  drawn_ = false;
}

std::string format_summary(const PipelineStats& stats, size_t peak_tracked_bytes) {
  std::string s = printf_string(
      "embedded %lld documents (%lld skipped): %lld chunks, %lld tokens in %.2f s "
      "(%.1f docs/s, %.0f tokens/s)\n",
      static_cast<long long>(stats.documents), static_cast<long long>(stats.skipped),
      static_cast<long long>(stats.chunks), static_cast<long long>(stats.tokens),
      seconds(stats.elapsed_ns), per_second(stats.documents, stats.elapsed_ns),
      per_second(stats.tokens, stats.elapsed_ns));
  if (stats.attention.empty()) {
    s += "attention: no spans recorded (profiler off, or nothing embedded)\n";
  } else {
    std::string backends;
    for (const auto& [name, use] : stats.attention) {
      backends += (backends.empty() ? "" : ", ") + name +
                  printf_string(" (%lld calls)", static_cast<long long>(use.calls));
    }
    const double share = stats.elapsed_ns > 0 ? 100.0 * stats.attention_ns / stats.elapsed_ns : 0;
    s += printf_string("attention: %s, %.2f s = %.1f%% of the time\n", backends.c_str(),
                       seconds(stats.attention_ns), share);
  }
  s += printf_string("peak tracked memory: %.1f MiB\n", peak_tracked_bytes / kMiB);
  return s;
}

nlohmann::json stats_to_json(const PipelineStats& stats) {
  nlohmann::json attention = nlohmann::json::object();
  for (const auto& [name, use] : stats.attention) {
    attention[name] = {{"calls", use.calls}, {"seconds", seconds(use.ns)}};
  }
  nlohmann::json stages = nlohmann::json::object();
  for (const auto& [name, ns] : stats.stage_ns) stages[name] = seconds(ns);
  return {{"documents", stats.documents},
          {"skipped", stats.skipped},
          {"chunks", stats.chunks},
          {"tokens", stats.tokens},
          {"batches", stats.batches},
          {"rows", stats.rows},
          {"seconds", seconds(stats.elapsed_ns)},
          {"docs_per_second", per_second(stats.documents, stats.elapsed_ns)},
          {"tokens_per_second", per_second(stats.tokens, stats.elapsed_ns)},
          {"attention_seconds", seconds(stats.attention_ns)},
          {"attention", attention},
          {"stage_seconds", stages}};
}

}  // namespace tessera::pipeline

// What `tessera embed` tells a person: a progress line on a terminal and the
// summary at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "pipeline/pipeline.h"

namespace tessera::pipeline {

// Redraws one line ("\r[#####.....]  45%  12 docs ...") at most every
// kRedrawInterval; does nothing when disabled (stderr is not a terminal).
class ProgressBar {
 public:
  ProgressBar(FILE* out, bool enabled)
      : out_(out), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
  void update(const PipelineStats& stats, uint64_t bytes_read, uint64_t bytes_total);
  // Erases the line (before a message or the summary).
  void clear();

 private:
  static constexpr std::chrono::milliseconds kRedrawInterval{100};
  FILE* out_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_{};
  std::chrono::steady_clock::time_point last_{};
};

// The end-of-run summary, several lines, each ending in '\n':
//   documents, skipped, chunks, tokens, time, docs/s, tokens/s
//   attention backend(s) with calls and the share of the time
//   peak tracked memory
std::string format_summary(const PipelineStats& stats, size_t peak_tracked_bytes);
nlohmann::json stats_to_json(const PipelineStats& stats);

}  // namespace tessera::pipeline

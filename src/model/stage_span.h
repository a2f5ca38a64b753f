// A profiler span around one encoder stage ("model.layer3.ffn_in_gemm"),
// recorded when the scope ends.
#pragma once

#include <string>
#include <utility>

#include "tessera/profiler.h"

namespace tessera::model {

class StageSpan {
 public:
  StageSpan(Profiler& profiler, std::string name, std::string shape = {}, double flops = 0)
      : profiler_(profiler), enabled_(profiler.enabled()) {
    if (!enabled_) return;
    span_.name = std::move(name);
    span_.shape = std::move(shape);
    span_.flops = flops;
    span_.start_ns = profiler_.now_ns();
  }
  StageSpan(const StageSpan&) = delete;
  StageSpan& operator=(const StageSpan&) = delete;
  ~StageSpan() {
    if (!enabled_) return;
    span_.duration_ns = profiler_.now_ns() - span_.start_ns;
    profiler_.record(std::move(span_));
  }
  void set_ok(bool ok) { span_.ok = ok; }

 private:
  Profiler& profiler_;
  bool enabled_;
  Span span_;
};

}  // namespace tessera::model

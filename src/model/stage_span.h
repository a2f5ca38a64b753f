// A profiler span around one encoder stage ("model.layer3.ffn_in_gemm"),
// recorded when the scope ends: a ScopedSpan with a shape and FLOPs, so it is
// also an NVTX range of the same name in CUDA builds.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "tessera/profiler.h"

namespace tessera::model {

class StageSpan {
 public:
  StageSpan(Profiler& profiler, std::string_view name, std::string shape = {}, double flops = 0)
      : span_(profiler, name) {
    span_.span().shape = std::move(shape);
    span_.span().flops = flops;
  }
  void set_ok(bool ok) { span_.set_ok(ok); }

 private:
  ScopedSpan span_;
};

}  // namespace tessera::model

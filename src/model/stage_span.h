// A profiler span around one encoder stage ("model.layer3.ffn_in_gemm"),
// recorded when the scope ends: a ScopedSpan with a shape and FLOPs, so it is
// also an NVTX range of the same name in CUDA builds.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "tessera/profiler.h"

namespace tessera::model {

// A span name and the stage its time is merged under (Span::stage): every
// layer's "model.layer3.qkv_gemm" is stage "layer.qkv_gemm", carried as data
// so a summary never parses layer numbers out of names.
struct StageName {
  std::string name;   // "model.layer3.qkv_gemm"
  std::string stage;  // "layer.qkv_gemm"; "" for a stage that is its name
};

class StageSpan {
 public:
  StageSpan(Profiler& profiler, std::string_view name, std::string shape = {}, double flops = 0)
      : span_(profiler, name) {
    span_.span().shape = std::move(shape);
    span_.span().flops = flops;
  }
  StageSpan(Profiler& profiler, const StageName& stage, std::string shape = {}, double flops = 0)
      : StageSpan(profiler, stage.name, std::move(shape), flops) {
    span_.span().stage = stage.stage;
  }
  void set_ok(bool ok) { span_.set_ok(ok); }

 private:
  ScopedSpan span_;
};

}  // namespace tessera::model

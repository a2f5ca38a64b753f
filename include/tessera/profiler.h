// The profiler: one span per attention dispatch (and per model stage), with
// the decision that chose the backend. Exporters live beside it.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tessera {

struct Span {
  std::string name;      // "attention", "model.layer0.qkv_gemm", ...
  std::string backend;   // backend that produced the result ("" for stages)
  std::string decision;  // why that backend (and why not the others)
  std::string shape;     // "B=2,Sq=128,Sk=128,Hq=8,Hkv=8,D=64,dtype=bf16,mask=causal"
  int64_t start_ns = 0;  // since the profiler's epoch
  int64_t duration_ns = 0;
  double flops = 0;
  double bytes = 0;
  size_t workspace_bytes = 0;
  int fallbacks = 0;  // failed backends tried before this one
  bool ok = true;
};

class Profiler {
 public:
  Profiler();
  void set_enabled(bool enabled) { enabled_ = enabled; }
  bool enabled() const { return enabled_; }
  int64_t now_ns() const;
  void record(Span span);
  std::vector<Span> spans() const;
  void clear();

 private:
  bool enabled_ = true;
  std::chrono::steady_clock::time_point epoch_;
  mutable std::mutex mu_;
  std::vector<Span> spans_;
};

}  // namespace tessera

// The profiler: one span per attention dispatch (and per model stage), with
// the decision that chose the backend. It keeps two things:
//   - the latest spans (a bounded ring, for the Chrome trace exporter);
//   - per (span name, backend) aggregates that are never dropped (for the
//     Prometheus exporter and the summary table).
// Exporters live in src/runtime/trace_export.h and src/runtime/metrics.h.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

struct Span {
  std::string name;      // "attention", "model.layer0.qkv_gemm", ...
  std::string stage;     // what per-stage totals merge it under, "" = name ("layer.qkv_gemm")
  std::string backend;   // backend that produced the result ("" for stages)
  std::string path;      // the backend's kernel path for this call ("bf16dot"); "" for one path
  std::string decision;  // why that backend, and why not the others (record_decisions)
  std::string shape;     // "B=2,Sq=128,Sk=128,Hq=8,Hkv=8,D=64,dtype=bf16,mask=causal"
  std::string device;    // "cpu", "cuda:0"; "" when not known
  std::string dtype;     // "f32", "bf16", "f16"; "" for stages without one
  std::string mask;      // "none", "causal", "window(16,0)"; "" for stages
  // Attention sizes (varlen: per-sequence maxima); 0 when not an attention.
  int64_t b = 0, hq = 0, hkv = 0, sq = 0, sk = 0, d = 0, dv = 0;
  int64_t start_ns = 0;  // since the profiler's epoch
  int64_t duration_ns = 0;
  double flops = 0;
  double bytes = 0;
  size_t workspace_bytes = 0;
  int fallbacks = 0;  // failed backends tried before this one
  bool ok = true;
  uint32_t thread = 0;  // small per-process thread number, set by record()

  double seconds() const { return static_cast<double>(duration_ns) * 1e-9; }
  // Achieved rates; 0 when the duration is 0.
  double gflops_per_second() const;
  double gbytes_per_second() const;
};

// How a span is shown: its name, then its backend when it has one
// ("attention cpu.gemm"). The Chrome trace events and, in CUDA builds, the
// NVTX ranges that mirror spans (src/runtime/nvtx_ranges.h) use this name.
std::string span_trace_name(std::string_view name, std::string_view backend);

// Upper bounds (seconds) of the duration histogram every aggregate keeps.
inline constexpr std::array<double, 14> kSpanSecondsBuckets = {
    1e-5, 2.5e-5, 1e-4, 2.5e-4, 1e-3, 2.5e-3, 1e-2, 2.5e-2, 0.1, 0.25, 1, 2.5, 10, 60};

// Everything recorded under one (name, backend), including dropped spans.
struct SpanAggregate {
  std::string stage;  // the spans' Span::stage
  uint64_t count = 0;
  uint64_t errors = 0;  // spans with ok == false
  double seconds = 0;
  double min_seconds = 0, max_seconds = 0;
  double flops = 0, bytes = 0;
  uint64_t fallbacks = 0;
  size_t max_workspace_bytes = 0;
  // buckets[i] counts durations <= kSpanSecondsBuckets[i] (not cumulative);
  // the last slot counts the rest (+Inf).
  std::array<uint64_t, kSpanSecondsBuckets.size() + 1> buckets{};
};

class Profiler {
 public:
  static constexpr size_t kDefaultSpanCapacity = 1 << 16;

  Profiler();
  // Disabled: record() does nothing and callers may skip building spans.
  void set_enabled(bool enabled) { enabled_.store(enabled, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  // The verbose level: dispatch spans also say why their backend was chosen
  // and why every other was not. Off by default because spelling out every
  // backend's reasons costs more than the dispatch itself on small calls;
  // the CLI turns it on with --trace, the one output that shows decisions.
  void set_record_decisions(bool on) { decisions_.store(on, std::memory_order_relaxed); }
  bool record_decisions() const { return decisions_.load(std::memory_order_relaxed); }
  // How many of the latest spans spans() keeps (0: aggregates only). Once
  // the ring is full, older spans are dropped and counted; aggregates always
  // include them.
  void set_span_capacity(size_t capacity);
  size_t span_capacity() const;
  int64_t now_ns() const;
  void record(Span span);
  // The retained spans, oldest first.
  std::vector<Span> spans() const;
  uint64_t dropped_spans() const;
  // Keyed by (name, backend).
  std::map<std::pair<std::string, std::string>, SpanAggregate> aggregates() const;
  // Forgets the retained spans (aggregates stay: see reset()).
  void clear();
  // Forgets spans, aggregates and the dropped count.
  void reset();

 private:
  std::atomic<bool> enabled_{true};
  std::atomic<bool> decisions_{false};
  std::chrono::steady_clock::time_point epoch_;
  mutable std::mutex mu_;
  size_t capacity_ = kDefaultSpanCapacity;
  std::vector<Span> ring_;  // ring_[(head_ + i) % size] is the i-th oldest
  size_t head_ = 0;
  uint64_t dropped_ = 0;
  std::map<std::pair<std::string, std::string>, SpanAggregate, std::less<>> aggregates_;
};

// Times a scope and records it as one span when the scope ends. Fill the
// extra fields through span() before then:
//   ScopedSpan s(ctx.profiler(), "model.layer0.qkv_gemm");
//   s.span().flops = 2.0 * m * n * k;
// In CUDA builds the scope is also an NVTX range of the same name (domain
// "tessera"), so Nsight Systems shows it; end it on the thread that began it.
class ScopedSpan {
 public:
  ScopedSpan(Profiler& profiler, std::string_view name);
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;
  ~ScopedSpan();
  Span& span() { return span_; }
  void set_ok(bool ok) { span_.ok = ok; }

 private:
  Profiler& profiler_;
  bool enabled_;
  Span span_;
};

}  // namespace tessera

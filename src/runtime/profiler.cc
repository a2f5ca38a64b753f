#include "tessera/profiler.h"

#include <algorithm>

#include "runtime/nvtx_ranges.h"

namespace tessera {

namespace {

// Small, stable per-process thread numbers for trace lanes (1, 2, ...).
uint32_t this_thread_number() {
  static std::atomic<uint32_t> next{1};
  thread_local const uint32_t number = next.fetch_add(1, std::memory_order_relaxed);
  return number;
}

void add_to(SpanAggregate& a, const Span& s) {
  const double sec = s.seconds();
  a.min_seconds = a.count == 0 ? sec : std::min(a.min_seconds, sec);
  a.max_seconds = a.count == 0 ? sec : std::max(a.max_seconds, sec);
  ++a.count;
  if (!s.ok) ++a.errors;
  a.seconds += sec;
  a.flops += s.flops;
  a.bytes += s.bytes;
  a.fallbacks += static_cast<uint64_t>(std::max(s.fallbacks, 0));
  a.max_workspace_bytes = std::max(a.max_workspace_bytes, s.workspace_bytes);
  const auto it = std::lower_bound(kSpanSecondsBuckets.begin(), kSpanSecondsBuckets.end(), sec);
  ++a.buckets[static_cast<size_t>(it - kSpanSecondsBuckets.begin())];
}

}  // namespace

std::string span_trace_name(std::string_view name, std::string_view backend) {
  std::string out(name);
  if (!backend.empty()) out.append(" ").append(backend);
  return out;
}

double Span::gflops_per_second() const {
  return duration_ns > 0 ? flops / static_cast<double>(duration_ns) : 0.0;
}
double Span::gbytes_per_second() const {
  return duration_ns > 0 ? bytes / static_cast<double>(duration_ns) : 0.0;
}

Profiler::Profiler() : epoch_(std::chrono::steady_clock::now()) {}

int64_t Profiler::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              epoch_)
      .count();
}

void Profiler::set_span_capacity(size_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  // Keep the newest spans that still fit, in order.
  std::vector<Span> kept;
  const size_t n = ring_.size();
  const size_t keep = std::min(n, capacity);
  kept.reserve(keep);
  for (size_t i = n - keep; i < n; ++i) kept.push_back(std::move(ring_[(head_ + i) % n]));
  dropped_ += n - keep;
  ring_ = std::move(kept);
  head_ = 0;
  capacity_ = capacity;
}

size_t Profiler::span_capacity() const {
  std::lock_guard<std::mutex> lock(mu_);
  return capacity_;
}

void Profiler::record(Span span) {
  if (!enabled()) return;
  span.thread = this_thread_number();
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(span.name, span.backend);
  auto it = aggregates_.find(key);
  if (it == aggregates_.end()) {
    it = aggregates_.emplace(std::move(key), SpanAggregate{.stage = span.stage}).first;
  }
  add_to(it->second, span);
  if (capacity_ == 0) return;  // keeping no spans was asked for: nothing is dropped
  if (ring_.size() < capacity_) {
    ring_.push_back(std::move(span));
  } else {
    ring_[head_] = std::move(span);  // overwrite the oldest
    head_ = (head_ + 1) % ring_.size();
    ++dropped_;
  }
}

std::vector<Span> Profiler::spans() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Span> out;
  out.reserve(ring_.size());
  for (size_t i = 0; i < ring_.size(); ++i) out.push_back(ring_[(head_ + i) % ring_.size()]);
  return out;
}

uint64_t Profiler::dropped_spans() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

std::map<std::pair<std::string, std::string>, SpanAggregate> Profiler::aggregates() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {aggregates_.begin(), aggregates_.end()};
}

void Profiler::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  ring_.clear();
  head_ = 0;
}

void Profiler::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  ring_.clear();
  head_ = 0;
  dropped_ = 0;
  aggregates_.clear();
}

ScopedSpan::ScopedSpan(Profiler& profiler, std::string_view name)
    : profiler_(profiler), enabled_(profiler.enabled()) {
  if (!enabled_) return;
  span_.name = std::string(name);
  nvtx::push_range(span_.name.c_str());  // the span has no backend: same name
  span_.start_ns = profiler_.now_ns();
}

ScopedSpan::~ScopedSpan() {
  if (!enabled_) return;
  span_.duration_ns = profiler_.now_ns() - span_.start_ns;
  nvtx::pop_range();
  profiler_.record(std::move(span_));
}

}  // namespace tessera

#include "tessera/profiler.h"

namespace tessera {

Profiler::Profiler() : epoch_(std::chrono::steady_clock::now()) {}

int64_t Profiler::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              epoch_)
      .count();
}

void Profiler::record(Span span) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  spans_.push_back(std::move(span));
}

std::vector<Span> Profiler::spans() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spans_;
}

void Profiler::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  spans_.clear();
}

}  // namespace tessera

#include "attention/tuning/tuner.h"

#include <algorithm>

#include "attention/tuning/timing.h"

namespace tessera {

Tuner::Tuner(const Registry& registry, std::vector<Backend*> candidates, TunerOptions options)
    : registry_(registry), candidates_(std::move(candidates)), options_(options) {
  std::stable_sort(candidates_.begin(), candidates_.end(),
                   [](Backend* a, Backend* b) { return a->priority() > b->priority(); });
}

void Tuner::measure(const AttentionProblem& problem, const std::string& shape, Context& ctx,
                    const std::function<void(const Measurement&)>& report) {
  const std::string bucket = tuning_bucket(problem.args());
  bucket_shapes_[bucket].push_back(shape);
  double best = -1;
  for (Backend* b : candidates_) {
    if (!b->can_run(problem, ctx)) continue;
    Policy only;
    only.only = {std::string(b->name())};
    Dispatcher dispatcher(registry_, only);
    TimingOptions timing;
    timing.warmup = 1;  // the first run warms caches
    timing.iters = options_.iters;
    timing.min_seconds = options_.min_seconds;
    timing.max_runs = options_.max_runs;
    timing.give_up_ms = best > 0 ? options_.give_up_factor * best : 0;
    Timing t;
    // A backend's first timing in a process runs slow well past its warm-up
    // run (cpu.gemm: 31 ms then 0.15 ms for the same decode shape, on
    // oneDNN's first use), so it is taken twice and the first one dropped.
    if (warmed_.insert(std::string(b->name())).second) {
      (void)time_dispatch(dispatcher, problem, ctx, timing, &t);
    }
    Measurement m{b->name(), time_dispatch(dispatcher, problem, ctx, timing, &t)};
    if (m.status.ok()) {
      m.median_ms = t.median_ms();
      best = best < 0 ? m.median_ms : std::min(best, m.median_ms);
      auto& [sum, count] = sums_[bucket][std::string(b->name())];
      sum += m.median_ms;
      ++count;
    }
    report(m);
  }
}

std::vector<TuningEntry> Tuner::entries() const {
  std::vector<TuningEntry> out;
  for (const auto& [bucket, by_backend] : sums_) {
    TuningEntry entry;
    entry.bucket = bucket;
    const std::vector<std::string>& shapes = bucket_shapes_.at(bucket);
    for (const auto& s : shapes) entry.shape += (entry.shape.empty() ? "" : ";") + s;
    for (const auto& [name, sum_count] : by_backend) {
      if (sum_count.second == static_cast<int>(shapes.size())) {
        entry.ranking.push_back({name, sum_count.first});
      }
    }
    if (entry.ranking.empty()) continue;
    std::stable_sort(entry.ranking.begin(), entry.ranking.end(),
                     [](const TuningMeasurement& a, const TuningMeasurement& b) {
                       return a.median_ms < b.median_ms;
                     });
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace tessera

// The tuning algorithm behind `tessera tune`: time every candidate backend
// on each problem (through time_dispatch, policy only:NAME, so the measured
// path is the one users get), sum the medians per shape bucket, and rank
// each bucket's backends fastest first. The CLI parses shapes, prints
// progress and saves the table.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "attention/tuning/tuning.h"
#include "tessera/dispatcher.h"

namespace tessera {

struct TunerOptions {
  int iters = 3;             // timed runs per (shape, backend), after one warm-up
  double min_seconds = 0.1;  // more runs until this much time, up to max_runs
  size_t max_runs = 50;
  // A backend whose warm-up run is this many times slower than the best
  // median so far for the shape is not timed further (the reference would
  // otherwise dominate the tuning time).
  double give_up_factor = 5.0;
};

class Tuner {
 public:
  // `candidates` are tried highest priority first, so the give-up rule has
  // a best time early.
  Tuner(const Registry& registry, std::vector<Backend*> candidates, TunerOptions options);

  struct Measurement {
    std::string_view backend;
    Status status;  // why it could not be timed
    double median_ms = 0;
  };
  // Times every candidate whose check() accepts `problem`; `shape` names it
  // in the table. `report` sees each measurement as it is made.
  void measure(const AttentionProblem& problem, const std::string& shape, Context& ctx,
               const std::function<void(const Measurement&)>& report);
  // One entry per bucket measured: the backends that ran every shape of the
  // bucket, by summed median, fastest first.
  std::vector<TuningEntry> entries() const;

 private:
  const Registry& registry_;
  std::vector<Backend*> candidates_;
  TunerOptions options_;
  // bucket -> backend -> (summed median ms, shapes measured)
  std::map<std::string, std::map<std::string, std::pair<double, int>>> sums_;
  std::map<std::string, std::vector<std::string>> bucket_shapes_;
  std::set<std::string> warmed_;  // backends timed once already in this process
};

}  // namespace tessera

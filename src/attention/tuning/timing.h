// The one timing loop of `tessera bench` and `tessera tune`: a validated
// problem run through a dispatcher (so the measured path is the one users
// get), warm-up runs first, then at least `iters` timed runs and more until
// `min_seconds`, up to `max_runs`. Speed lives here and in bench/, never in
// tests.
#pragma once

#include <cstddef>
#include <vector>

#include "tessera/dispatcher.h"

namespace tessera {

struct TimingOptions {
  int warmup = 1;
  int iters = 5;
  double min_seconds = 0;
  size_t max_runs = 1000;
  // > 0: when the first warm-up run takes longer than this, stop and report
  // that run alone (tune: a hopeless backend is not timed further).
  double give_up_ms = 0;
};

struct Timing {
  std::vector<double> ms;  // the timed runs, sorted
  bool gave_up = false;
  double median_ms() const { return ms[ms.size() / 2]; }
  double min_ms() const { return ms.front(); }
};

// The first failed run's status is returned; `out` is then unspecified.
Status time_dispatch(Dispatcher& dispatcher, const AttentionProblem& problem, Context& ctx,
                     const TimingOptions& options, Timing* out);

}  // namespace tessera

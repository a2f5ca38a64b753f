#include "attention/tuning/timing.h"

#include <algorithm>
#include <chrono>

namespace tessera {

Status time_dispatch(Dispatcher& dispatcher, const AttentionProblem& problem, Context& ctx,
                     const TimingOptions& o, Timing* out) {
  const auto run_once = [&](double* ms) {
    const auto t0 = std::chrono::steady_clock::now();
    Status s = dispatcher.run(problem, ctx);
    *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return s;
  };
  Timing t;
  double ms = 0;
  for (int i = 0; i < o.warmup; ++i) {
    TESSERA_RETURN_IF_ERROR(run_once(&ms));
    if (i == 0 && o.give_up_ms > 0 && ms > o.give_up_ms) {
      t.ms = {ms};
      t.gave_up = true;
      *out = std::move(t);
      return Status::Ok();
    }
  }
  double total_ms = 0;
  while (t.ms.size() < static_cast<size_t>(std::max(o.iters, 1)) ||
         (total_ms < o.min_seconds * 1e3 && t.ms.size() < o.max_runs)) {
    TESSERA_RETURN_IF_ERROR(run_once(&ms));
    t.ms.push_back(ms);
    total_ms += ms;
  }
  std::sort(t.ms.begin(), t.ms.end());
  *out = std::move(t);
  return Status::Ok();
}

}  // namespace tessera

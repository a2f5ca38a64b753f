// backend.run(problem, ctx), with an exception turned into an Internal status:
// how the dispatcher, shadow/canary runs and the conformance runner call a
// backend, so a throwing backend is reported the same way everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tessera/backend.h"
#include "tessera/profiler.h"

namespace tessera {

Status run_backend_guarded(Backend& backend, const AttentionProblem& problem, Context& ctx);

// run_backend_guarded between two readings of the profiler's clock, inside an
// NVTX range (CUDA builds, profiler enabled) named like the span the caller
// records for it: span_trace_name(span_name, backend.name()).
struct TimedRun {
  Status status;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};
TimedRun run_backend_timed(Backend& backend, const AttentionProblem& problem, Context& ctx,
                           std::string_view span_name);

// The fields every attention span shares (dispatch, shadow, canary): name,
// backend, shape, device, dtype, mask and FLOPs. Callers add the rest.
void fill_attention_span_basics(const AttentionArgs& args, const Backend& backend, std::string name,
                                Span* span);

}  // namespace tessera

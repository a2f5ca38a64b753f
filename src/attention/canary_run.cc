// Dispatcher::canary_run: the candidate backend runs the served args into
// scratch memory; its agreement with the served output and both times are
// recorded per shape bucket. The caller's output is only read.
#include <cstdio>

#include "attention/shadow.h"
#include "attention/tuning.h"
#include "tessera/dispatcher.h"

namespace tessera {

// The span (and NVTX range) name of these runs.
constexpr char kCanarySpan[] = "attention.canary";

void Dispatcher::canary_run(const AttentionArgs& args, Context& ctx, const Served& served,
                            uint64_t call) {
  CanaryOptions opts;
  uint64_t seed = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (canary_.backend.empty() || canary_.backend == served.name) return;
    if (quarantined_.count(canary_.backend) != 0) return;
    opts = canary_;
    seed = shadow_.seed + 1;  // a coin independent of the shadow's
  }
  if (!sampled(seed, call, opts.rate)) return;
  // Scratch outputs and the comparison live in host memory.
  if (args.out.device.kind != DeviceKind::kCpu) return;
  Backend* candidate = registry_.find(opts.backend);
  if (candidate == nullptr || !candidate->availability().available) return;
  if (!candidate->check(args, ctx).empty()) return;  // not a shape it claims
  ScratchRun scratch;
  if (!make_scratch_run(args, ctx, "canary." + opts.backend, &scratch).ok()) return;
  const auto [status, start, end] = run_backend_timed(*candidate, scratch.args, ctx, kCanarySpan);
  const Comparison cmp = status.ok() ? compare_results(scratch.args, args) : Comparison{};
  const bool agrees = status.ok() && cmp.ok;
  const std::string bucket = tuning_bucket(args);
  {
    std::lock_guard<std::mutex> lock(mu_);
    CanaryBucketRecord& rec = canary_records_[opts.backend][bucket];
    ++rec.runs;
    if (agrees) ++rec.agreements;
    if (!status.ok()) ++rec.failures;
    rec.max_abs_error = std::max(rec.max_abs_error, cmp.max_abs_error);
    rec.serving_seconds += static_cast<double>(served.duration_ns) * 1e-9;
    rec.canary_seconds += static_cast<double>(end - start) * 1e-9;
    rec.serving = served.name;
    DispatchStats& st = stats_[opts.backend];
    ++st.canary_runs;
    if (!agrees) ++st.canary_disagreements;
  }
  const std::string verdict =
      !status.ok() ? "failed: " + status.to_string()
                   : (cmp.ok ? "agrees with " : "DISAGREES with ") + served.name + "; " + cmp.worst;
  if (ctx.profiler().enabled()) {
    Span span;
    fill_attention_span_basics(args, *candidate, kCanarySpan, &span);
    span.decision = "canary in bucket '" + bucket + "': " + verdict;
    span.start_ns = start;
    span.duration_ns = end - start;
    span.bytes = attention_bytes(args);
    span.workspace_bytes = candidate->workspace_bytes(args);
    span.ok = agrees;
    ctx.profiler().record(std::move(span));
  }
  if (!agrees) {
    ctx.logger().log(LogLevel::kWarning, "canary " + opts.backend + " on " +
                                             describe_shape(args) + " (call " +
                                             std::to_string(call) + "): " + verdict);
  }
}

}  // namespace tessera

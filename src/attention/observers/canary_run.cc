// CanaryObserver: the candidate backend runs the served problem into
// scratch memory; its agreement with the served output and both times are
// recorded per shape bucket. The caller's output is only read.
#include <cstdio>
#include <utility>

#include "attention/observers/shadow.h"
#include "attention/staging/staging.h"
#include "attention/tuning/tuning.h"
#include "tessera/observers.h"

namespace tessera {

// The span (and NVTX range) name of these runs.
constexpr char kCanarySpan[] = "attention.canary";

CanaryObserver::CanaryObserver(Dispatcher& dispatcher, CanaryOptions options)
    : dispatcher_(dispatcher), options_(std::move(options)) {}

void CanaryObserver::not_run(const std::string& why, Context& ctx) {
  const std::string message = "canary " + options_.backend + " not run: " + why;
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    first = warned_.insert(message).second;
  }
  ctx.logger().log(first ? LogLevel::kWarning : LogLevel::kDebug, message);
}

CanaryRecords CanaryObserver::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

void CanaryObserver::after_run(const DispatchEvent& event, Context& ctx) {
  const CanaryOptions& opts = options_;
  if (opts.backend.empty() || event.backend.name() == opts.backend) return;
  if (!sampled(opts.seed, event.call, opts.rate)) return;
  if (dispatcher_.quarantined().count(opts.backend) != 0) return;
  Backend* candidate = dispatcher_.registry().find(opts.backend);
  if (candidate == nullptr) return;
  // The comparison runs on host memory: a call served on a device is read
  // back, and a candidate on a device gets the problem staged there
  // (attention/staging/staging.h). A device that is not here is said once.
  for (const auto& [whose, device] :
       {std::pair{"the served call's tensors", event.problem.device()},
        std::pair{"the candidate", candidate->device()}}) {
    if (std::string why = device_staging_problem(device); !why.empty()) {
      return not_run(std::string(whose) + " on " + device.to_string() + ": " + why, ctx);
    }
  }
  if (Availability av = candidate->availability(); !av.available) {
    return not_run("unavailable: " + av.reason, ctx);
  }
  const std::string owner = "canary." + opts.backend;
  HostCopy host;
  if (Status s = HostCopy::make(event.problem, owner, ctx, &host); !s.ok()) {
    return not_run("reading the served call back: " + s.to_string(), ctx);
  }
  const AttentionArgs& args = host.problem().args();
  ScratchRun scratch;
  if (!make_scratch_run(host.problem(), ctx, owner, &scratch).ok()) return;
  BackendPlacement placed;
  if (Status s = BackendPlacement::place(*candidate, *scratch.problem, owner, ctx, &placed);
      !s.ok()) {
    return not_run("staging onto " + candidate->device().to_string() + ": " + s.to_string(), ctx);
  }
  if (!candidate->can_run(placed.problem(), ctx)) return;  // not a shape it claims
  auto [status, start, end] = run_backend_timed(*candidate, placed.problem(), ctx, kCanarySpan);
  if (status.ok()) status = placed.copy_outputs_back(ctx);
  const Comparison cmp = status.ok() ? compare_results(scratch.args(), args) : Comparison{};
  const bool agrees = status.ok() && cmp.ok;
  const std::string bucket = tuning_bucket(args);
  const std::string served(event.backend.name());
  {
    std::lock_guard<std::mutex> lock(mu_);
    CanaryBucketRecord& rec = records_[opts.backend][bucket];
    ++rec.runs;
    if (agrees) ++rec.agreements;
    if (!status.ok()) ++rec.failures;
    rec.max_abs_error = std::max(rec.max_abs_error, cmp.max_abs_error);
    rec.serving_seconds += static_cast<double>(event.duration_ns) * 1e-9;
    rec.canary_seconds += static_cast<double>(end - start) * 1e-9;
    rec.serving = served;
  }
  DispatchStats delta;
  delta.canary_runs = 1;
  delta.canary_disagreements = agrees ? 0 : 1;
  dispatcher_.add_stats(opts.backend, delta);
  const std::string verdict =
      !status.ok() ? "failed: " + status.to_string()
                   : (cmp.ok ? "agrees with " : "DISAGREES with ") + served + "; " + cmp.worst;
  if (ctx.profiler().enabled()) {
    Span span;
    fill_attention_span_basics(args, *candidate, kCanarySpan, &span);
    span.decision = "canary in bucket '" + bucket + "': " + verdict;
    span.start_ns = start;
    span.duration_ns = end - start;
    span.bytes = attention_bytes(args);
    span.workspace_bytes = candidate->workspace_bytes(placed.problem(), ctx);
    span.ok = agrees;
    ctx.profiler().record(std::move(span));
  }
  if (!agrees) {
    ctx.logger().log(LogLevel::kWarning, "canary " + opts.backend + " on " + describe_shape(args) +
                                             " (call " + std::to_string(event.call) +
                                             "): " + verdict);
  }
}

}  // namespace tessera

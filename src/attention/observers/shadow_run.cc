// ShadowObserver: after a sampled call, the trusted backend runs the same
// problem into scratch memory; a disagreement is counted, logged with what
// replays it, and after ShadowOptions::quarantine_after of them the backend
// is quarantined through the dispatcher. The caller's output is only read.
#include <cinttypes>
#include <cstdio>

#include "attention/observers/shadow.h"
#include "attention/staging/staging.h"
#include "tessera/observers.h"

namespace tessera {

// The span (and NVTX range) name of these runs.
constexpr char kShadowSpan[] = "attention.shadow";

ShadowObserver::ShadowObserver(Dispatcher& dispatcher, ShadowOptions options)
    : dispatcher_(dispatcher), options_(std::move(options)) {}

void ShadowObserver::skip(const std::string& served, const std::string& why, Context& ctx,
                          bool warn_once) {
  DispatchStats delta;
  delta.shadow_skipped = 1;
  dispatcher_.add_stats(served, delta);
  const std::string message = "shadow check of " + served + " skipped: " + why;
  bool first = false;
  if (warn_once) {
    std::lock_guard<std::mutex> lock(mu_);
    first = warned_.insert(message).second;
  }
  // A reason that holds for every sampled call (no device) is said once, loudly.
  ctx.logger().log(first ? LogLevel::kWarning : LogLevel::kDebug, message);
}

void ShadowObserver::after_run(const DispatchEvent& event, Context& ctx) {
  const ShadowOptions& opts = options_;
  if (!(opts.rate > 0) || event.backend.name() == opts.trusted) return;
  const uint64_t call = event.call;
  if (!sampled(opts.seed, call, opts.rate)) return;
  const std::string served(event.backend.name());
  Backend* trusted = dispatcher_.registry().find(opts.trusted);
  if (trusted == nullptr) return skip(served, "no backend named '" + opts.trusted + "'", ctx);
  // The comparison runs on host memory: a call served on a device is read
  // back (its output included), and a trusted backend on a device gets the
  // problem staged there (attention/staging/staging.h).
  const Device served_on = event.problem.device();
  if (std::string why = device_staging_problem(served_on); !why.empty()) {
    return skip(served, "the call's tensors on " + served_on.to_string() + ": " + why, ctx, true);
  }
  if (std::string why = device_staging_problem(trusted->device()); !why.empty()) {
    return skip(served, opts.trusted + " on " + trusted->device().to_string() + ": " + why, ctx,
                true);
  }
  if (!trusted->availability().available) {
    return skip(served, opts.trusted + " is unavailable", ctx);
  }
  const std::string owner = "shadow." + opts.trusted;
  HostCopy host;
  if (Status s = HostCopy::make(event.problem, owner, ctx, &host); !s.ok()) {
    return skip(served,
                "reading the call back from " + served_on.to_string() + ": " + s.to_string(), ctx);
  }
  const AttentionArgs& args = host.problem().args();
  ScratchRun scratch;
  if (Status s = make_scratch_run(host.problem(), ctx, owner, &scratch); !s.ok()) {
    return skip(served, s.to_string(), ctx);
  }
  BackendPlacement placed;
  if (Status s = BackendPlacement::place(*trusted, *scratch.problem, owner, ctx, &placed);
      !s.ok()) {
    return skip(served, "staging onto " + trusted->device().to_string() + ": " + s.to_string(),
                ctx);
  }
  if (!trusted->can_run(placed.problem(), ctx)) {
    return skip(served, opts.trusted + " cannot run these args", ctx);
  }
  auto [status, start, end] = run_backend_timed(*trusted, placed.problem(), ctx, kShadowSpan);
  if (status.ok()) status = placed.copy_outputs_back(ctx);
  if (!status.ok()) return skip(served, opts.trusted + " failed: " + status.to_string(), ctx);
  const Comparison cmp = compare_results(args, scratch.args());

  uint64_t mismatches = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    mismatches = mismatches_[served] += cmp.ok ? 0 : 1;
  }
  DispatchStats delta;
  delta.shadow_checks = 1;
  delta.shadow_mismatches = cmp.ok ? 0 : 1;
  dispatcher_.add_stats(served, delta);
  bool newly_quarantined = false;
  if (!cmp.ok && opts.quarantine_after > 0 &&
      mismatches >= static_cast<uint64_t>(opts.quarantine_after) &&
      dispatcher_.quarantined().count(served) == 0) {
    dispatcher_.quarantine(served, std::to_string(mismatches) + " shadow mismatches vs " +
                                       opts.trusted + " (last on " + describe_shape(args) + ": " +
                                       cmp.worst + ")");
    newly_quarantined = true;
  }
  char err[64];
  std::snprintf(err, sizeof err, "max |err| %.3g", cmp.max_abs_error);
  if (ctx.profiler().enabled()) {
    Span span;
    fill_attention_span_basics(args, *trusted, kShadowSpan, &span);
    span.decision = "shadow check of " + served + " (call " + std::to_string(call) +
                    "): " + (cmp.ok ? "agrees" : "MISMATCH") + ", " + err + "; " + cmp.worst;
    span.start_ns = start;
    span.duration_ns = end - start;
    span.ok = cmp.ok;
    ctx.profiler().record(std::move(span));
  }
  if (cmp.ok) return;

  char header[160];
  std::snprintf(header, sizeof header,
                " (call %" PRIu64 ", shadow seed %" PRIu64 ", inputs fnv1a %016" PRIx64 ")", call,
                opts.seed, input_fingerprint(args));
  std::string message = "shadow mismatch " + std::to_string(mismatches) + ": " + served +
                        " disagrees with " + opts.trusted + " on " + describe_shape(args) + header +
                        ": " + std::to_string(cmp.mismatches) + " of " +
                        std::to_string(cmp.elements) + " elements out of tolerance, first " +
                        cmp.worst + ", " + err + ".";
  if (opts.repro_dir.empty()) {
    message +=
        " Replay: set a repro directory (ShadowOptions.repro_dir, --shadow-repro DIR or "
        "TESSERA_SHADOW=" +
        std::to_string(opts.rate) + ",repro=DIR) to save q/k/v, then `tessera attention " +
        "run --backend " + served + "` on them.";
  } else {
    const std::string dir = opts.repro_dir + "/" + served + "-call" + std::to_string(call);
    std::string commands;
    if (Status s =
            write_replay_case(args, &args, &scratch.args(), dir, served, opts.trusted, &commands);
        s.ok()) {
      message += " Replay:\n" + commands;
    } else {
      message += " (could not save the replay case: " + s.to_string() + ")";
    }
  }
  ctx.logger().log(LogLevel::kWarning, message);
  if (newly_quarantined) {
    ctx.logger().log(LogLevel::kError, "quarantined attention backend " + served + " after " +
                                           std::to_string(mismatches) +
                                           " shadow mismatches; the dispatcher will " +
                                           "not choose it again in this process");
  }
}

}  // namespace tessera

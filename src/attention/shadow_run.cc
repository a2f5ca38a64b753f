// Dispatcher::shadow_check: after a sampled call, the trusted backend runs
// the same args into scratch memory; a disagreement is counted, logged with
// what replays it, and after ShadowOptions::quarantine_after of them the
// backend is quarantined. The caller's output is only read.
#include <cinttypes>
#include <cstdio>

#include "attention/shadow.h"
#include "tessera/dispatcher.h"

namespace tessera {

// The span (and NVTX range) name of these runs.
constexpr char kShadowSpan[] = "attention.shadow";

void Dispatcher::shadow_check(const AttentionArgs& args, Context& ctx, const Served& served,
                              uint64_t call) {
  ShadowOptions opts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!(shadow_.rate > 0) || served.name == shadow_.trusted) return;
    opts = shadow_;
  }
  if (!sampled(opts.seed, call, opts.rate)) return;
  const auto skip = [&](const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_[served.name].shadow_skipped;
    }
    ctx.logger().log(LogLevel::kDebug, "shadow check of " + served.name + " skipped: " + why);
  };
  // Scratch outputs and the comparison live in host memory.
  if (args.out.device.kind != DeviceKind::kCpu) return skip("device outputs are not compared yet");
  Backend* trusted = registry_.find(opts.trusted);
  if (trusted == nullptr) return skip("no backend named '" + opts.trusted + "'");
  if (!trusted->availability().available) return skip(opts.trusted + " is unavailable");
  if (!trusted->check(args, ctx).empty()) return skip(opts.trusted + " cannot run these args");
  ScratchRun scratch;
  if (Status s = make_scratch_run(args, ctx, "shadow." + opts.trusted, &scratch); !s.ok()) {
    return skip(s.to_string());
  }
  const auto [status, start, end] = run_backend_timed(*trusted, scratch.args, ctx, kShadowSpan);
  if (!status.ok()) return skip(opts.trusted + " failed: " + status.to_string());
  const Comparison cmp = compare_results(args, scratch.args);

  uint64_t mismatches = 0;
  bool newly_quarantined = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    DispatchStats& st = stats_[served.name];
    ++st.shadow_checks;
    if (!cmp.ok) ++st.shadow_mismatches;
    mismatches = st.shadow_mismatches;
    if (!cmp.ok && opts.quarantine_after > 0 &&
        mismatches >= static_cast<uint64_t>(opts.quarantine_after) &&
        quarantined_.count(served.name) == 0) {
      quarantined_[served.name] = std::to_string(mismatches) + " shadow mismatches vs " +
                                  opts.trusted + " (last on " + describe_shape(args) + ": " +
                                  cmp.worst + ")";
      newly_quarantined = true;
    }
  }
  char err[64];
  std::snprintf(err, sizeof err, "max |err| %.3g", cmp.max_abs_error);
  if (ctx.profiler().enabled()) {
    Span span;
    fill_attention_span_basics(args, *trusted, kShadowSpan, &span);
    span.decision = "shadow check of " + served.name + " (call " + std::to_string(call) +
                    "): " + (cmp.ok ? "agrees" : "MISMATCH") + ", " + err + "; " + cmp.worst;
    span.start_ns = start;
    span.duration_ns = end - start;
    span.ok = cmp.ok;
    ctx.profiler().record(std::move(span));
  }
  if (cmp.ok) return;

  char header[160];
  std::snprintf(header, sizeof header, " (call %" PRIu64 ", shadow seed %" PRIu64
                ", inputs fnv1a %016" PRIx64 ")", call, opts.seed, input_fingerprint(args));
  std::string message = "shadow mismatch " + std::to_string(mismatches) + ": " + served.name +
                        " disagrees with " + opts.trusted + " on " + describe_shape(args) +
                        header + ": " + std::to_string(cmp.mismatches) + " of " +
                        std::to_string(cmp.elements) + " elements out of tolerance, first " +
                        cmp.worst + ", " + err + ".";
  if (opts.repro_dir.empty()) {
    message += " Replay: set a repro directory (--shadow-repro DIR or TESSERA_SHADOW=" +
               std::to_string(opts.rate) + ",repro=DIR) to save q/k/v, then `tessera attention " +
               "run --backend " + served.name + "` on them.";
  } else {
    const std::string dir = opts.repro_dir + "/" + served.name + "-call" + std::to_string(call);
    std::string commands;
    if (Status s = write_replay_case(args, &args, &scratch.args, dir, served.name, opts.trusted,
                                     &commands);
        s.ok()) {
      message += " Replay:\n" + commands;
    } else {
      message += " (could not save the replay case: " + s.to_string() + ")";
    }
  }
  ctx.logger().log(LogLevel::kWarning, message);
  if (newly_quarantined) {
    ctx.logger().log(LogLevel::kError,
                     "quarantined attention backend " + served.name + " after " +
                         std::to_string(mismatches) + " shadow mismatches; the dispatcher will " +
                         "not choose it again in this process");
  }
}

}  // namespace tessera

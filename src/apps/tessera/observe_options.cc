#include "observe_options.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "api/environment.h"
#include "attention/dispatch/dispatch_metrics.h"
#include "attention/observers/canary.h"
#include "attention/tuning/tuning.h"
#include "runtime/profiler_summary.h"
#include "runtime/trace_export.h"

namespace tessera::cli {

namespace {

std::string env_or(const std::string& flag, const char* env) {
  return flag.empty() ? api::environment_variable(env) : flag;
}

Status write_text(const std::string& path, const std::string& text, const char* flag) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return not_found(std::string(flag) + ": cannot open '" + path + "' for writing");
  f << text;
  if (!f) return internal_error(std::string(flag) + ": writing '" + path + "' failed");
  return Status::Ok();
}

}  // namespace

void add_observe_options(CLI::App& app, ObserveOptions* o) {
  const char* group = "Observability (docs/OBSERVABILITY.md)";
  app.add_option("--trace", o->trace,
                 "Write a Chrome trace JSON of every span (opens in ui.perfetto.dev) at exit")
      ->group(group);
  app.add_flag("--profile", o->profile, "Print a summary table of spans and memory at exit")
      ->group(group);
  app.add_option("--metrics", o->metrics, "Write Prometheus text metrics to FILE at exit")
      ->group(group);
  app.add_flag("--no-profiler", o->no_profiler, "Record no spans (to measure the profiler's cost)")
      ->group(group);
  app.add_option("--shadow", o->shadow,
                 "Re-run this fraction of dispatches on a trusted backend and compare: "
                 "RATE[,trusted=NAME][,quarantine=N][,seed=S][,repro=DIR]. Default: "
                 "$TESSERA_SHADOW, else off")
      ->group(group);
  app.add_option("--shadow-repro", o->shadow_repro,
                 "Save the tensors of each shadow mismatch here, with the replay command")
      ->group(group);
  app.add_option("--canary", o->canary,
                 "Run this backend beside the serving one and record agreement and speed "
                 "(the caller gets the serving result). Default: $TESSERA_CANARY")
      ->group(group);
  app.add_option("--canary-record", o->canary_record,
                 "Canary record file (default: $TESSERA_CANARY_RECORD, else "
                 "$XDG_STATE_HOME/tessera/canary.json)")
      ->group(group);
  app.add_option("--tuning", o->tuning,
                 "Decision table from `tessera tune`, or 'none' (default: $TESSERA_TUNING, else "
                 "$XDG_CACHE_HOME/tessera/tuning.json when present)")
      ->group(group);
}

std::string canary_record_path(const ObserveOptions& o) {
  const std::string p = env_or(o.canary_record, "TESSERA_CANARY_RECORD");
  return p.empty() ? api::default_canary_path() : p;
}

Status configure_observability(const ObserveOptions& o, Context& ctx, Dispatcher& dispatcher,
                               ObserveState* state) {
  // Only --trace reads the span ring; reports, --profile and /metrics read
  // the aggregates. Without --trace the ring would still fill up to its
  // 65,536 spans (~20 MiB of strings) over a long embed or serve run, which
  // the soaks measured as RSS growth, for no reader.
  if (o.trace.empty()) ctx.profiler().set_span_capacity(0);
  ctx.profiler().set_enabled(!o.no_profiler);
  // The trace is the one output that shows each dispatch's decision.
  ctx.profiler().set_record_decisions(!o.trace.empty());
  const std::string shadow_text = env_or(o.shadow, "TESSERA_SHADOW");
  if (!shadow_text.empty()) {
    ShadowOptions shadow;
    if (Status s = parse_shadow(shadow_text, &shadow); !s.ok()) {
      return invalid_argument((o.shadow.empty() ? "TESSERA_SHADOW: " : "--shadow: ") + s.message());
    }
    if (!o.shadow_repro.empty()) shadow.repro_dir = o.shadow_repro;
    state->shadow = std::make_shared<ShadowObserver>(dispatcher, shadow);
    dispatcher.add_observer(state->shadow);
  }
  const std::string canary = env_or(o.canary, "TESSERA_CANARY");
  if (!canary.empty()) {
    CanaryOptions c;
    c.backend = canary;
    // A coin independent of the shadow's.
    c.seed = (state->shadow ? state->shadow->options().seed : 0) + 1;
    state->canary = std::make_shared<CanaryObserver>(dispatcher, c);
    dispatcher.add_observer(state->canary);
    state->canary_record_path = canary_record_path(o);
  }
  return Status::Ok();
}

Status finish_observability(const ObserveOptions& o, const ObserveState& state, Context& ctx,
                            const Dispatcher& dispatcher) {
  Status first;
  const auto keep = [&first](Status s) {
    if (first.ok() && !s.ok()) first = std::move(s);
  };
  if (!o.trace.empty()) keep(write_chrome_trace(ctx.profiler(), o.trace));
  if (!o.metrics.empty()) {
    keep(write_text(o.metrics, prometheus_text(ctx, &dispatcher), "--metrics"));
  }
  if (o.profile) {
    std::fprintf(stderr, "\n%s\n%s", profile_summary(ctx.profiler()).c_str(),
                 memory_summary(ctx.allocator()).c_str());
  }
  const auto stats = dispatcher.stats();
  if (state.shadow && state.shadow->options().rate > 0) {
    uint64_t checks = 0, mismatches = 0;
    for (const auto& [name, st] : stats) {
      checks += st.shadow_checks;
      mismatches += st.shadow_mismatches;
    }
    std::string q;
    for (const auto& [name, reason] : dispatcher.quarantined()) q += (q.empty() ? "" : ", ") + name;
    std::fprintf(stderr, "shadow: %llu checks, %llu mismatches%s%s\n",
                 static_cast<unsigned long long>(checks),
                 static_cast<unsigned long long>(mismatches),
                 q.empty() ? "" : "; quarantined: ", q.c_str());
  }
  const CanaryRecords records = state.canary ? state.canary->records() : CanaryRecords{};
  if (!records.empty() && !state.canary_record_path.empty()) {
    CanaryRecords all;
    keep(load_canary_records(state.canary_record_path, &all));
    merge_canary_records(records, &all);
    keep(save_canary_records(state.canary_record_path, all));
    for (const auto& [name, buckets] : records) {
      std::fprintf(stderr, "canary %s: %s (record: %s)\n", name.c_str(),
                   canary_summary(buckets).c_str(), state.canary_record_path.c_str());
    }
  }
  return first;
}

}  // namespace tessera::cli

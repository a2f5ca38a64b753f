#include "attention/dispatch/dispatch_metrics.h"

namespace tessera {

void append_dispatch_metrics(const Dispatcher& dispatcher, MetricsText* out) {
  const auto quarantined = dispatcher.quarantined();
  auto stats = dispatcher.stats();
  for (const auto& [name, reason] : quarantined) stats[name];  // a row even with no calls
  for (const auto& [name, st] : stats) {
    const MetricsText::Labels l = {{"backend", name}};
    const auto d = [](uint64_t v) { return static_cast<double>(v); };
    out->counter("tessera_attention_calls_total",
                 "Attention runs started on this backend (served or failed)", l, d(st.calls));
    out->counter("tessera_attention_failures_total",
                 "Attention runs on this backend that returned an error or threw", l,
                 d(st.failures));
    out->counter("tessera_attention_fallbacks_total",
                 "Calls this backend served after an earlier backend failed", l, d(st.fallbacks));
    out->counter("tessera_shadow_checks_total",
                 "Served calls re-run on the trusted backend and compared", l, d(st.shadow_checks));
    out->counter("tessera_shadow_mismatches_total",
                 "Shadow checks where this backend disagreed with the trusted one", l,
                 d(st.shadow_mismatches));
    out->counter("tessera_shadow_skipped_total",
                 "Sampled calls whose shadow run could not happen (budget, trusted failed)", l,
                 d(st.shadow_skipped));
    out->gauge("tessera_backend_quarantined", "1 when the dispatcher no longer chooses it", l,
               quarantined.count(name) ? 1.0 : 0.0);
    out->counter("tessera_canary_runs_total", "Runs of this backend as the canary candidate", l,
                 d(st.canary_runs));
    out->counter("tessera_canary_disagreements_total",
                 "Canary runs that failed or disagreed with the served result", l,
                 d(st.canary_disagreements));
  }
}

std::string prometheus_text(Context& ctx, const Dispatcher* dispatcher) {
  MetricsText m;
  append_build_info(&m);
  if (dispatcher != nullptr) append_dispatch_metrics(*dispatcher, &m);
  append_profiler_metrics(ctx.profiler(), &m);
  append_allocator_metrics(ctx.allocator(), &m);
  return m.render();
}

}  // namespace tessera

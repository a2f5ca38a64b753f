// The dispatcher's Prometheus metrics, and the whole exposition of one
// context and dispatcher (what `--metrics FILE` writes and a /metrics
// endpoint serves).
#pragma once

#include <string>

#include "runtime/metrics.h"
#include "tessera/context.h"
#include "tessera/dispatcher.h"

namespace tessera {

// Per backend: calls, failures, fallbacks, shadow checks / mismatches /
// skips, quarantined (0/1), canary runs / disagreements.
void append_dispatch_metrics(const Dispatcher& dispatcher, MetricsText* out);
// Build info, the profiler's and allocator's metrics, and the dispatcher's
// (when given).
std::string prometheus_text(Context& ctx, const Dispatcher* dispatcher);

}  // namespace tessera

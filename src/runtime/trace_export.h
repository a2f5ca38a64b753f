// Chrome trace event JSON for the profiler's spans: one complete ("X") event
// per span, microsecond timestamps, every span field under "args". Opens in
// Perfetto (ui.perfetto.dev) and chrome://tracing.
#pragma once

#include <string>
#include <vector>

#include "tessera/profiler.h"
#include "tessera/status.h"

namespace tessera {

// {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}
std::string chrome_trace_json(const std::vector<Span>& spans, uint64_t dropped_spans = 0);
// Writes the profiler's retained spans to `path`.
Status write_chrome_trace(const Profiler& profiler, const std::string& path);

}  // namespace tessera

#include "runtime/profiler_summary.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <vector>

namespace tessera {

namespace {

std::string format_row(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format_row(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  // va_start above initialises ap; clang 14's analyzer does not see it.
  std::vsnprintf(buf, sizeof buf, fmt, ap);  // NOLINT(clang-analyzer-valist.Uninitialized)
  va_end(ap);
  return buf;
}

}  // namespace

std::string profile_summary(const Profiler& profiler) {
  using Entry = std::pair<std::pair<std::string, std::string>, SpanAggregate>;
  const auto aggregates = profiler.aggregates();
  std::vector<Entry> rows(aggregates.begin(), aggregates.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Entry& a, const Entry& b) { return a.second.seconds > b.second.seconds; });
  std::string out = format_row("%-28s %-12s %7s %10s %9s %9s %9s %8s %7s %4s\n", "SPAN", "BACKEND",
                               "CALLS", "TOTAL_MS", "MEAN_MS", "MIN_MS", "MAX_MS", "GFLOP/S",
                               "GB/S", "ERR");
  for (const auto& [key, a] : rows) {
    const double gflops = a.seconds > 0 ? a.flops / a.seconds * 1e-9 : 0;
    const double gbps = a.seconds > 0 ? a.bytes / a.seconds * 1e-9 : 0;
    out += format_row("%-28s %-12s %7llu %10.3f %9.3f %9.3f %9.3f %8.1f %7.1f %4llu\n",
                      key.first.c_str(), key.second.empty() ? "-" : key.second.c_str(),
                      static_cast<unsigned long long>(a.count), a.seconds * 1e3,
                      a.count ? a.seconds * 1e3 / static_cast<double>(a.count) : 0.0,
                      a.min_seconds * 1e3, a.max_seconds * 1e3, gflops, gbps,
                      static_cast<unsigned long long>(a.errors));
  }
  if (rows.empty()) out += "(no spans recorded)\n";
  if (const uint64_t dropped = profiler.dropped_spans(); dropped > 0) {
    out += format_row("%llu spans left the trace ring; the rows above still count them\n",
                      static_cast<unsigned long long>(dropped));
  }
  return out;
}

std::string memory_summary(const TrackingAllocator& allocator) {
  std::string out = format_row("%-28s %14s %14s %12s\n", "MEMORY OWNER", "LIVE_BYTES",
                               "PEAK_BYTES", "ALLOCATIONS");
  for (const auto& [owner, st] : allocator.by_owner()) {
    out += format_row("%-28s %14zu %14zu %12llu\n", owner.c_str(), st.live_bytes, st.peak_bytes,
                      static_cast<unsigned long long>(st.allocations));
  }
  out += format_row("%-28s %14zu %14zu\n", "(all owners)", allocator.live_bytes(),
                    allocator.peak_bytes());
  if (const auto budget = allocator.budget()) out += format_row("budget: %zu bytes\n", *budget);
  return out;
}

}  // namespace tessera

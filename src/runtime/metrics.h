// Prometheus text exposition (format 0.0.4): a small builder that groups
// samples by family (one # HELP and # TYPE each), escapes label values and
// writes histograms as cumulative _bucket/_sum/_count, plus the metrics of
// the runtime's own services (profiler aggregates, tracked memory).
// The dispatcher's metrics are added by src/attention/dispatch/dispatch_metrics.h.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/allocator.h"
#include "tessera/profiler.h"

namespace tessera {

class MetricsText {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  // A family's first sample fixes its type and help; names must match
  // [a-zA-Z_:][a-zA-Z0-9_:]*. Counters should end in _total.
  void counter(std::string_view name, std::string_view help, const Labels& labels, double value);
  void gauge(std::string_view name, std::string_view help, const Labels& labels, double value);
  // counts[i] holds the observations in (bounds[i-1], bounds[i]]; the one past
  // the last bound holds the rest. Written cumulatively, ending with +Inf.
  void histogram(std::string_view name, std::string_view help, const Labels& labels,
                 const std::vector<double>& bounds, const std::vector<uint64_t>& counts,
                 double sum);
  std::string render() const;

 private:
  struct Family {
    std::string name, type, help;
    std::vector<std::string> lines;
  };
  Family& family(std::string_view name, std::string_view type, std::string_view help);
  std::vector<Family> families_;
  std::map<std::string, size_t, std::less<>> index_;
};

// "1", "0.25", "+Inf", "NaN": the sample value syntax.
std::string format_metric_value(double value);
// Label value with \\, \" and \n escaped.
std::string escape_label_value(std::string_view value);

// tessera_attention_seconds{backend} and tessera_stage_seconds{stage}
// histograms, FLOPs, bytes, errors, fallbacks and dropped spans.
void append_profiler_metrics(const Profiler& profiler, MetricsText* out);
// tessera_memory_{live,peak}_bytes{owner}, allocations, totals and budget.
void append_allocator_metrics(const TrackingAllocator& allocator, MetricsText* out);
// tessera_build_info{version, cpu, gemm} 1.
void append_build_info(MetricsText* out);

}  // namespace tessera

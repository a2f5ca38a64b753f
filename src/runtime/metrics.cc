#include "runtime/metrics.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "runtime/machine_info.h"

namespace tessera {

std::string format_metric_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[32];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
  } else {
    // The shortest form that reads back exactly ("0.1", not 0.10000000000000001).
    for (int precision = 15; precision <= 17; ++precision) {
      std::snprintf(buf, sizeof buf, "%.*g", precision, value);
      if (std::strtod(buf, nullptr) == value) break;
    }
  }
  return buf;
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

std::string escape_help(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string label_text(const MetricsText::Labels& labels) {
  if (labels.empty()) return "";
  std::string s = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    s += (i ? "," : "") + labels[i].first + "=\"" + escape_label_value(labels[i].second) + "\"";
  }
  return s + "}";
}

}  // namespace

MetricsText::Family& MetricsText::family(std::string_view name, std::string_view type,
                                         std::string_view help) {
  auto it = index_.find(name);
  if (it != index_.end()) return families_[it->second];
  index_.emplace(std::string(name), families_.size());
  families_.push_back({std::string(name), std::string(type), std::string(help), {}});
  return families_.back();
}

void MetricsText::counter(std::string_view name, std::string_view help, const Labels& labels,
                          double value) {
  family(name, "counter", help)
      .lines.push_back(std::string(name) + label_text(labels) + " " + format_metric_value(value));
}

void MetricsText::gauge(std::string_view name, std::string_view help, const Labels& labels,
                        double value) {
  family(name, "gauge", help)
      .lines.push_back(std::string(name) + label_text(labels) + " " + format_metric_value(value));
}

void MetricsText::histogram(std::string_view name, std::string_view help, const Labels& labels,
                            const std::vector<double>& bounds, const std::vector<uint64_t>& counts,
                            double sum) {
  Family& f = family(name, "histogram", help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds.size(); ++i) {
    cumulative += i < counts.size() ? counts[i] : 0;
    Labels with_le = labels;
    with_le.emplace_back("le", i < bounds.size() ? format_metric_value(bounds[i]) : "+Inf");
    f.lines.push_back(std::string(name) + "_bucket" + label_text(with_le) + " " +
                      format_metric_value(static_cast<double>(cumulative)));
  }
  f.lines.push_back(std::string(name) + "_sum" + label_text(labels) + " " +
                    format_metric_value(sum));
  f.lines.push_back(std::string(name) + "_count" + label_text(labels) + " " +
                    format_metric_value(static_cast<double>(cumulative)));
}

std::string MetricsText::render() const {
  std::string out;
  for (const Family& f : families_) {
    out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
    out += "# TYPE " + f.name + " " + f.type + "\n";
    for (const auto& line : f.lines) out += line + "\n";
  }
  return out;
}

void append_profiler_metrics(const Profiler& profiler, MetricsText* out) {
  const std::vector<double> bounds(kSpanSecondsBuckets.begin(), kSpanSecondsBuckets.end());
  for (const auto& [key, agg] : profiler.aggregates()) {
    const auto& [name, backend] = key;
    const std::vector<uint64_t> counts(agg.buckets.begin(), agg.buckets.end());
    if (name == "attention") {
      const MetricsText::Labels l = {{"backend", backend}};
      out->histogram("tessera_attention_seconds",
                     "Wall time of attention dispatches, by the backend that served them", l,
                     bounds, counts, agg.seconds);
      out->counter("tessera_attention_flops_total",
                   "FLOPs of the attention products served (visible pairs only)", l, agg.flops);
      out->counter("tessera_attention_bytes_total",
                   "Bytes an ideal kernel moves for the attention calls served", l, agg.bytes);
      out->counter("tessera_attention_served_after_fallback_total",
                   "Failed backends tried before this one served a call", l,
                   static_cast<double>(agg.fallbacks));
      continue;
    }
    MetricsText::Labels l = {{"span", name}};
    if (!backend.empty()) l.emplace_back("backend", backend);
    out->histogram("tessera_span_seconds",
                   "Wall time of other spans: model stages, pipeline steps, shadow and canary runs",
                   l, bounds, counts, agg.seconds);
    out->counter("tessera_span_flops_total", "FLOPs recorded by other spans", l, agg.flops);
    out->counter("tessera_span_errors_total", "Spans of other kinds that ended with an error", l,
                 static_cast<double>(agg.errors));
  }
  out->counter("tessera_profiler_dropped_spans_total",
               "Spans dropped from the bounded trace ring (aggregates still count them)", {},
               static_cast<double>(profiler.dropped_spans()));
}

void append_allocator_metrics(const TrackingAllocator& allocator, MetricsText* out) {
  for (const auto& [owner, st] : allocator.by_owner()) {
    const MetricsText::Labels l = {{"owner", owner}};
    out->gauge("tessera_memory_live_bytes", "Tracked bytes live now, by owner", l,
               static_cast<double>(st.live_bytes));
    out->gauge("tessera_memory_peak_bytes", "Most tracked bytes live at once, by owner", l,
               static_cast<double>(st.peak_bytes));
    out->counter("tessera_memory_allocations_total", "Tracked allocations, by owner", l,
                 static_cast<double>(st.allocations));
  }
  out->gauge("tessera_memory_total_live_bytes", "Tracked bytes live now, all owners", {},
             static_cast<double>(allocator.live_bytes()));
  out->gauge("tessera_memory_total_peak_bytes", "Most tracked bytes live at once, all owners", {},
             static_cast<double>(allocator.peak_bytes()));
  if (const auto budget = allocator.budget()) {
    out->gauge("tessera_memory_budget_bytes", "The context's memory budget in bytes", {},
               static_cast<double>(*budget));
  }
}

void append_build_info(MetricsText* out) {
  const MachineInfo m = machine_info();
  out->gauge("tessera_build_info", "Version, CPU model and libraries of this process",
             {{"version", m.tessera_version}, {"cpu", m.cpu_model}, {"gemm", m.gemm_library}}, 1);
}

}  // namespace tessera

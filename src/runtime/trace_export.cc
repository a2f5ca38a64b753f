#include "runtime/trace_export.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace tessera {

namespace {

constexpr int kPid = 1;

// The trace category: "attention" for dispatches (and their shadow and canary
// runs), else the first dotted part of the name ("model", "pipeline").
std::string category_of(const std::string& name) { return name.substr(0, name.find('.')); }

nlohmann::json args_of(const Span& s) {
  nlohmann::json a = {{"ok", s.ok}};
  if (!s.backend.empty()) a["backend"] = s.backend;
  if (!s.path.empty()) a["path"] = s.path;
  if (!s.decision.empty()) a["decision"] = s.decision;
  if (!s.shape.empty()) a["shape"] = s.shape;
  if (!s.device.empty()) a["device"] = s.device;
  if (!s.dtype.empty()) a["dtype"] = s.dtype;
  if (!s.mask.empty()) a["mask"] = s.mask;
  if (s.b > 0) {
    a["B"] = s.b;
    a["Hq"] = s.hq;
    a["Hkv"] = s.hkv;
    a["Sq"] = s.sq;
    a["Sk"] = s.sk;
    a["D"] = s.d;
    a["Dv"] = s.dv;
  }
  if (s.flops > 0) {
    a["flops"] = s.flops;
    a["gflop_per_s"] = s.gflops_per_second();
  }
  if (s.bytes > 0) {
    a["bytes"] = s.bytes;
    a["gb_per_s"] = s.gbytes_per_second();
  }
  if (s.workspace_bytes > 0) a["workspace_bytes"] = s.workspace_bytes;
  if (s.fallbacks > 0) a["fallbacks"] = s.fallbacks;
  return a;
}

}  // namespace

std::string chrome_trace_json(const std::vector<Span>& spans, uint64_t dropped_spans) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"args", {{"name", "tessera"}}}});
  std::set<uint32_t> threads;
  for (const Span& s : spans) threads.insert(s.thread);
  for (uint32_t t : threads) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", kPid},
                      {"tid", t},
                      {"args", {{"name", "thread " + std::to_string(t)}}}});
  }
  for (const Span& s : spans) {
    events.push_back({{"name", span_trace_name(s.name, s.backend)},
                      {"cat", category_of(s.name)},
                      {"ph", "X"},
                      {"pid", kPid},
                      {"tid", s.thread},
                      {"ts", static_cast<double>(s.start_ns) / 1e3},
                      {"dur", static_cast<double>(s.duration_ns) / 1e3},
                      {"args", args_of(s)}});
  }
  nlohmann::json trace = {
      {"traceEvents", std::move(events)},
      {"displayTimeUnit", "ns"},
      {"otherData",
       {{"producer", "tessera"}, {"spans", spans.size()}, {"dropped_spans", dropped_spans}}}};
  return trace.dump() + "\n";
}

Status write_chrome_trace(const Profiler& profiler, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return {StatusCode::kNotFound, "trace: cannot open '" + path + "' for writing", "trace"};
  f << chrome_trace_json(profiler.spans(), profiler.dropped_spans());
  if (!f) return {StatusCode::kInternal, "trace: writing '" + path + "' failed", "trace"};
  return Status::Ok();
}

}  // namespace tessera

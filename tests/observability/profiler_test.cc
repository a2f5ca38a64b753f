// The profiler keeps bounded spans and complete aggregates; the trace JSON
// holds one span per dispatch with its decision; the metrics text is well
// formed (the exposition-format check itself is cli_observe_test.py).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "reference/reference_backend.h"
#include "runtime/metrics.h"
#include "runtime/profiler_summary.h"
#include "runtime/trace_export.h"
#include "tessera/dispatcher.h"
#include "verify/grid.h"
#include "verify/materialize.h"

namespace tessera {
namespace {

Span named(const std::string& name, int64_t duration_ns) {
  Span s;
  s.name = name;
  s.duration_ns = duration_ns;
  s.flops = 1000;
  return s;
}

TEST(Profiler, RingKeepsTheNewestSpansAndAggregatesCountAll) {
  Profiler p;
  p.set_span_capacity(2);
  for (int i = 0; i < 5; ++i) p.record(named("s" + std::to_string(i), int64_t{1000} * (i + 1)));
  const auto spans = p.spans();
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].name, "s3");
  EXPECT_EQ(spans[1].name, "s4");
  EXPECT_EQ(p.dropped_spans(), 3u);
  EXPECT_EQ(p.aggregates().size(), 5u);
  p.clear();
  EXPECT_TRUE(p.spans().empty());
  EXPECT_EQ(p.aggregates().size(), 5u);  // clear() keeps the aggregates
  p.reset();
  EXPECT_TRUE(p.aggregates().empty());
}

TEST(Profiler, AggregateHistogramAndRates) {
  Profiler p;
  p.record(named("x", 5'000));            // 5 us: first bucket (<= 10 us)
  p.record(named("x", 50'000'000));       // 50 ms: (25 ms, 100 ms]
  p.record(named("x", 120'000'000'000));  // 120 s: +Inf
  const SpanAggregate a = p.aggregates().at({"x", ""});
  EXPECT_EQ(a.count, 3u);
  EXPECT_EQ(a.buckets[0], 1u);
  EXPECT_EQ(a.buckets[8], 1u);  // 0.1
  EXPECT_EQ(a.buckets.back(), 1u);
  EXPECT_DOUBLE_EQ(a.min_seconds, 5e-6);
  EXPECT_DOUBLE_EQ(a.max_seconds, 120.0);
  Span s = named("y", 2'000);
  s.flops = 4'000;
  EXPECT_DOUBLE_EQ(s.gflops_per_second(), 2.0);
}

TEST(Profiler, AggregateKeepsItsSpansStage) {
  Profiler p;
  Span layer = named("model.layer3.qkv_gemm", 1'000);
  layer.stage = "layer.qkv_gemm";
  p.record(layer);
  p.record(named("attention", 1'000));
  EXPECT_EQ(p.aggregates().at({"model.layer3.qkv_gemm", ""}).stage, "layer.qkv_gemm");
  EXPECT_EQ(p.aggregates().at({"attention", ""}).stage, "");
}

TEST(Profiler, DisabledRecordsNothingAndScopedSpanRecordsOnExit) {
  Profiler p;
  {
    ScopedSpan s(p, "model.layer0.qkv_gemm");
    s.span().flops = 42;
  }
  p.set_enabled(false);
  { ScopedSpan s(p, "ignored"); }
  const auto spans = p.spans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].name, "model.layer0.qkv_gemm");
  EXPECT_EQ(spans[0].flops, 42);
  EXPECT_GE(spans[0].duration_ns, 0);
  EXPECT_GE(spans[0].thread, 1u);
}

TEST(Trace, OneSpanPerDispatchWithTheDecision) {
  Registry registry;
  ASSERT_TRUE(registry.add(make_reference_backend()).ok());
  Dispatcher dispatcher(registry);
  Context ctx;
  ctx.profiler().set_record_decisions(true);  // the verbose level: decisions in spans
  constexpr int kCalls = 4;
  for (int i = 0; i < kCalls; ++i) {
    verify::OwnedCase p(verify::small_case(9 + i));
    ASSERT_TRUE(dispatcher.run(p.args, ctx).ok());
  }
  { ScopedSpan stage(ctx.profiler(), "model.pooling"); }
  const nlohmann::json trace = nlohmann::json::parse(chrome_trace_json(ctx.profiler().spans()));
  int dispatches = 0, stages = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ASSERT_TRUE(e.at("ts").is_number());
    ASSERT_TRUE(e.at("dur").is_number());
    if (e.at("cat") == "attention") {
      ++dispatches;
      const auto& a = e.at("args");
      EXPECT_EQ(a.at("backend"), "reference");
      EXPECT_NE(a.at("decision").get<std::string>().find("first eligible by priority"),
                std::string::npos);
      EXPECT_EQ(a.at("device"), "cpu");
      EXPECT_EQ(a.at("dtype"), "f32");
      EXPECT_EQ(a.at("mask"), "none");
      EXPECT_EQ(a.at("Sq"), 9 + dispatches - 1);
      EXPECT_EQ(a.at("Hq"), 2);
      EXPECT_GT(a.at("flops").get<double>(), 0);
      EXPECT_GT(a.at("gflop_per_s").get<double>(), 0);
    } else if (e.at("cat") == "model") {
      ++stages;
    }
  }
  EXPECT_EQ(dispatches, kCalls);
  EXPECT_EQ(stages, 1);
  EXPECT_NE(profile_summary(ctx.profiler()).find("reference"), std::string::npos);
}

TEST(Metrics, FamiliesAreGroupedAndLabelsEscaped) {
  MetricsText m;
  m.counter("a_total", "first", {{"k", "x\"y\\z\nw"}}, 1);
  m.gauge("b", "second", {}, 0.5);
  m.counter("a_total", "first", {{"k", "2"}}, 2);
  m.histogram("h_seconds", "third", {{"k", "v"}}, {0.1, 1}, {1, 0, 2}, 3.5);
  const std::string text = m.render();
  EXPECT_EQ(text,
            "# HELP a_total first\n# TYPE a_total counter\n"
            "a_total{k=\"x\\\"y\\\\z\\nw\"} 1\na_total{k=\"2\"} 2\n"
            "# HELP b second\n# TYPE b gauge\nb 0.5\n"
            "# HELP h_seconds third\n# TYPE h_seconds histogram\n"
            "h_seconds_bucket{k=\"v\",le=\"0.1\"} 1\n"
            "h_seconds_bucket{k=\"v\",le=\"1\"} 1\n"
            "h_seconds_bucket{k=\"v\",le=\"+Inf\"} 3\n"
            "h_seconds_sum{k=\"v\"} 3.5\nh_seconds_count{k=\"v\"} 3\n");
}

}  // namespace
}  // namespace tessera

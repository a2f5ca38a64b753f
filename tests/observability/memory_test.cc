// Budgets refuse before allocating and leave nothing behind; a leaking
// backend is caught; memory per owner reaches the metrics.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "../attention/test_backends.h"
#include "attention/dispatch/dispatch_metrics.h"
#include "observe_backends.h"
#include "tessera/dispatcher.h"
#include "verify/grid.h"
#include "verify/materialize.h"

namespace tessera {
namespace {

void expect_no_leaks(const Context& ctx) {
  for (const auto& leak : ctx.allocator().leaks()) {
    ADD_FAILURE() << "leak: " << leak.owner << " holds " << leak.bytes << " bytes";
  }
}

TEST(Budget, RefusalIsAStatusAndLeavesNothingAllocated) {
  TrackingAllocator alloc(4096);
  void* p = reinterpret_cast<void*>(0x1);
  Status s = alloc.allocate(8192, "cpu.gemm", &p);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("cpu.gemm asked for 8192 bytes"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("4096-byte budget"), std::string::npos) << s.message();
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(alloc.live_bytes(), 0u);
  EXPECT_EQ(alloc.peak_bytes(), 0u);
  EXPECT_TRUE(alloc.by_owner().empty());  // not even an empty owner row
}

TEST(Budget, ABackendRefusedHalfwayFreesWhatItTookAndTheCallFallsBack) {
  Registry registry;
  // 3 KiB fits the 4 KiB budget; the second 3 KiB does not.
  ASSERT_TRUE(registry.add(std::make_unique<testing::GreedyBackend>(3072, 3072)).ok());
  ASSERT_TRUE(registry.add(make_reference_backend()).ok());
  Dispatcher dispatcher(registry);
  ContextOptions options;
  options.memory_budget_bytes = 4096;
  Context ctx(options);
  std::vector<std::string> logged;
  ctx.logger().set_sink([&](LogLevel, std::string_view m) { logged.emplace_back(m); });
  verify::OwnedCase p(verify::small_case());
  std::string used;
  ASSERT_TRUE(dispatcher.run(p.args, ctx, &used).ok());
  EXPECT_EQ(used, "reference");
  EXPECT_EQ(ctx.allocator().live_bytes(), 0u);
  EXPECT_EQ(ctx.allocator().by_owner().at("test.greedy").peak_bytes, 3072u);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("ResourceExhausted"), std::string::npos) << logged[0];
  expect_no_leaks(ctx);
}

TEST(Budget, WhenEveryBackendIsRefusedTheCallSaysResourceExhausted) {
  Registry registry;
  ASSERT_TRUE(registry.add(std::make_unique<testing::GreedyBackend>(3072, 3072)).ok());
  Dispatcher dispatcher(registry);
  ContextOptions options;
  options.memory_budget_bytes = 4096;
  Context ctx(options);
  ctx.logger().set_sink([](LogLevel, std::string_view) {});
  verify::OwnedCase p(verify::small_case());  // out poisoned
  Status s = dispatcher.run(p.args, ctx);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.to_string();
  EXPECT_EQ(ctx.allocator().live_bytes(), 0u);
  const Status untouched = p.materialized().check_outputs_poisoned();
  EXPECT_TRUE(untouched.ok()) << untouched.message();  // nothing was written
  expect_no_leaks(ctx);
}

TEST(Leaks, ALeakingBackendFailsTheCheckAndShowsInTheMetrics) {
  Registry registry;
  ASSERT_TRUE(
      registry.add(std::make_unique<testing::LeakingBackend>(make_reference_backend())).ok());
  Dispatcher dispatcher(registry);
  std::vector<std::string> logged;
  {
    Context ctx;
    ctx.logger().set_sink([&](LogLevel, std::string_view m) { logged.emplace_back(m); });
    verify::OwnedCase p(verify::small_case());
    ASSERT_TRUE(dispatcher.run(p.args, ctx).ok());
    EXPECT_NONFATAL_FAILURE(expect_no_leaks(ctx), "leak: test.leaking holds 4096 bytes");
    const std::string metrics = prometheus_text(ctx, &dispatcher);
    EXPECT_NE(metrics.find("tessera_memory_live_bytes{owner=\"test.leaking\"} 4096"),
              std::string::npos)
        << metrics;
  }
  ASSERT_EQ(logged.size(), 1u);  // the context's end reports it
  EXPECT_NE(logged[0].find("test.leaking still holds 4096 bytes"), std::string::npos);
}

}  // namespace
}  // namespace tessera

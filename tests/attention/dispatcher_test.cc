#include "tessera/dispatcher.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "reference/reference_backend.h"
#include "test_backends.h"
#include "verify/grid.h"
#include "verify/materialize.h"

namespace tessera {
namespace {

using testing::FaultyBackend;
using testing::LeakingBackend;

std::vector<float> reference_output() {
  verify::OwnedCase p(verify::small_case());
  Context ctx;
  EXPECT_TRUE(run_args(*make_reference_backend(), p.args, ctx).ok());
  return p.out();
}

// The check every test shares: a context must end with nothing live.
void expect_no_leaks(const Context& ctx) {
  for (const auto& leak : ctx.allocator().leaks()) {
    ADD_FAILURE() << "leak: " << leak.owner << " holds " << leak.bytes << " bytes";
  }
}

TEST(Dispatcher, FallsBackWhenABackendFailsAndCountsIt) {
  for (auto mode : {FaultyBackend::Mode::kReturnsError, FaultyBackend::Mode::kThrows,
                    FaultyBackend::Mode::kThrowsInParallelJob}) {
    SCOPED_TRACE(static_cast<int>(mode));
    Registry registry;
    auto faulty = std::make_unique<FaultyBackend>("test.faulty", mode, 100);
    FaultyBackend* faulty_ptr = faulty.get();
    ASSERT_TRUE(registry.add(std::move(faulty)).ok());
    ASSERT_TRUE(registry.add(make_reference_backend()).ok());
    Dispatcher dispatcher(registry);
    ContextOptions options;
    options.num_threads = 4;  // the parallel job's throw happens on a worker too
    Context ctx(options);
    std::vector<std::string> logged;
    ctx.logger().set_sink([&](LogLevel, std::string_view m) { logged.emplace_back(m); });
    verify::OwnedCase p(verify::small_case());
    std::string used;
    ASSERT_TRUE(dispatcher.run(p.args, ctx, &used).ok());
    EXPECT_EQ(used, "reference");
    EXPECT_EQ(faulty_ptr->runs, 1);
    EXPECT_EQ(p.out(), reference_output());
    auto stats = dispatcher.stats();
    EXPECT_EQ(stats["test.faulty"].failures, 1u);
    EXPECT_EQ(stats["reference"].fallbacks, 1u);
    ASSERT_EQ(logged.size(), 1u);
    EXPECT_NE(logged[0].find("test.faulty failed"), std::string::npos) << logged[0];
    auto spans = ctx.profiler().spans();
    ASSERT_EQ(spans.size(), 1u);
    EXPECT_EQ(spans[0].backend, "reference");
    EXPECT_EQ(spans[0].fallbacks, 1);
    EXPECT_NE(spans[0].decision.find("test.faulty failed"), std::string::npos);
    expect_no_leaks(ctx);
  }
}

// The policy's fail: clause fails a backend's runs without running it, as a
// crashed kernel would: counted, logged, and fallen back from like one.
TEST(Dispatcher, FailClauseInjectsARunFailure) {
  Registry registry;
  ASSERT_TRUE(registry.add(make_reference_backend()).ok());
  Policy policy;
  ASSERT_TRUE(parse_policy("fail:reference", &policy).ok());
  Dispatcher dispatcher(registry, policy);
  Context ctx;
  verify::OwnedCase p(verify::small_case());
  const std::vector<float> before = p.out();
  const Status s = dispatcher.run(p.args, ctx);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("reference failed"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("fault injected"), std::string::npos) << s.message();
  EXPECT_EQ(p.out(), before);
  EXPECT_EQ(dispatcher.stats()["reference"].failures, 1u);
  expect_no_leaks(ctx);
}

TEST(Dispatcher, FailsWithEveryReasonWhenNothingCanRun) {
  Registry registry;
  ASSERT_TRUE(registry
                  .add(std::make_unique<FaultyBackend>("test.faulty",
                                                       FaultyBackend::Mode::kReturnsError, 1))
                  .ok());
  Dispatcher dispatcher(registry);
  Context ctx;
  ctx.logger().set_sink([](LogLevel, std::string_view) {});
  verify::OwnedCase p(verify::small_case());
  Status s = dispatcher.run(p.args, ctx);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("simulated kernel failure"), std::string::npos) << s.message();
}

TEST(Dispatcher, InvalidArgsLeaveOutputUntouched) {
  Registry registry;
  register_builtin_backends(registry);
  Dispatcher dispatcher(registry);
  Context ctx;
  verify::OwnedCase p(verify::small_case());  // out poisoned
  p.args.k.shape[2] = 3;                      // Hq = 2 is not a multiple of 3
  Status s = dispatcher.run(p.args, ctx);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  const Status untouched = p.materialized().check_outputs_poisoned();
  EXPECT_TRUE(untouched.ok()) << untouched.message();
  EXPECT_TRUE(ctx.profiler().spans().empty());
}

TEST(Dispatcher, ExplainGivesAReasonForEveryRejection) {
  Registry registry;
  ASSERT_TRUE(registry.add(make_reference_backend()).ok());
  ASSERT_TRUE(registry
                  .add(std::make_unique<FaultyBackend>("test.faulty",
                                                       FaultyBackend::Mode::kReturnsError, 5))
                  .ok());
  Policy policy;
  ASSERT_TRUE(parse_policy("prefer:missing;deny:test.faulty", &policy).ok());
  Dispatcher dispatcher(registry, policy);
  Context ctx;
  verify::OwnedCase p(verify::small_case());
  p.args.mask = Mask::causal();  // test.faulty claims no causal support either
  Explanation ex = dispatcher.explain(p.args, ctx);
  EXPECT_EQ(ex.chosen, "reference");
  ASSERT_EQ(ex.verdicts.size(), 3u);
  EXPECT_EQ(ex.verdicts[0].name, "missing");
  EXPECT_NE(ex.verdicts[0].reasons.at(0).find("no backend named"), std::string::npos);
  EXPECT_EQ(ex.verdicts[1].name, "test.faulty");
  EXPECT_NE(ex.verdicts[1].reasons.at(0).find("denied by policy"), std::string::npos);
  EXPECT_EQ(ex.verdicts[2].kind, BackendVerdict::Kind::kChosen);
}

TEST(Dispatcher, CapabilityRejectionsNameTheFeature) {
  Registry registry;
  ASSERT_TRUE(registry
                  .add(std::make_unique<FaultyBackend>("test.faulty",
                                                       FaultyBackend::Mode::kReturnsError, 5))
                  .ok());
  Dispatcher dispatcher(registry);
  Context ctx;
  verify::OwnedCase p(verify::small_case());
  p.args.mask = Mask::causal();
  Explanation ex = dispatcher.explain(p.args, ctx);
  EXPECT_TRUE(ex.chosen.empty());
  ASSERT_EQ(ex.verdicts.size(), 1u);
  EXPECT_EQ(ex.verdicts[0].reasons, (std::vector<std::string>{"causal mask not supported"}));
}

TEST(Dispatcher, OnlyPolicyRestrictsTheChoice) {
  Registry registry;
  ASSERT_TRUE(registry.add(make_reference_backend()).ok());
  ASSERT_TRUE(registry
                  .add(std::make_unique<FaultyBackend>("test.faulty",
                                                       FaultyBackend::Mode::kReturnsError, 5))
                  .ok());
  Policy policy;
  ASSERT_TRUE(parse_policy("reference", &policy).ok());
  Dispatcher dispatcher(registry, policy);
  Context ctx;
  verify::OwnedCase p(verify::small_case());
  std::string used;
  ASSERT_TRUE(dispatcher.run(p.args, ctx, &used).ok());
  EXPECT_EQ(used, "reference");
  EXPECT_EQ(dispatcher.stats().count("test.faulty"), 0u);
}

TEST(Allocator, CatchesALeakingBackend) {
  Registry registry;
  ASSERT_TRUE(registry.add(std::make_unique<LeakingBackend>(make_reference_backend())).ok());
  Dispatcher dispatcher(registry);
  std::vector<std::string> logged;
  {
    Context ctx;
    ctx.logger().set_sink([&](LogLevel, std::string_view m) { logged.emplace_back(m); });
    verify::OwnedCase p(verify::small_case());
    ASSERT_TRUE(dispatcher.run(p.args, ctx).ok());
    // The leak check every test uses fails on this backend.
    EXPECT_NONFATAL_FAILURE(expect_no_leaks(ctx), "leak: test.leaking holds 4096 bytes");
  }
  ASSERT_EQ(logged.size(), 1u);  // and the context's end reports it
  EXPECT_NE(logged[0].find("test.leaking still holds 4096 bytes"), std::string::npos);
}

}  // namespace
}  // namespace tessera

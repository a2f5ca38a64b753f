// The dispatch path: a problem validated once, selection that stops at the
// first eligible backend without spelling out reasons, reasons on request,
// observers after each served call, setters safe while other threads
// dispatch.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "tessera/dispatcher.h"
#include "verify/grid.h"
#include "verify/materialize.h"

namespace tessera {
namespace {

// Writes zeros; counts how check() was asked: with reason text or without.
class CountingBackend final : public Backend {
 public:
  CountingBackend(std::string name, int priority, bool rejects)
      : name_(std::move(name)), priority_(priority), rejects_(rejects) {}
  std::string_view name() const override { return name_; }
  Device device() const override { return Device::cpu(); }
  int priority() const override { return priority_; }
  const Capabilities& capabilities() const override { return caps_; }
  void check(const AttentionProblem& p, const Context& ctx, Reasons& why) const override {
    ++(why.wants_text() ? checks_with_text : checks_without_text);
    Backend::check(p, ctx, why);
    if (rejects_) why.add([&] { return "rejects everything (" + name_ + ")"; });
  }
  Status run(const AttentionProblem& p, Context& /*ctx*/) override {
    ++runs;
    const TensorView& out = p.args().out;
    for (int64_t i = 0; i < out.numel(); ++i) static_cast<float*>(out.data)[i] = 0.0f;
    return Status::Ok();
  }
  mutable std::atomic<int> checks_with_text{0}, checks_without_text{0};
  std::atomic<int> runs{0};

 private:
  std::string name_;
  int priority_;
  bool rejects_;
  const Capabilities caps_{.dtypes = {DType::kF32}};
};

struct Fixture {
  Registry registry;
  CountingBackend *rejecting, *first, *later;
  Fixture() {
    auto r = std::make_unique<CountingBackend>("test.rejecting", 300, true);
    auto f = std::make_unique<CountingBackend>("test.first", 200, false);
    auto l = std::make_unique<CountingBackend>("test.later", 100, false);
    rejecting = r.get(), first = f.get(), later = l.get();
    EXPECT_TRUE(registry.add(std::move(r)).ok());
    EXPECT_TRUE(registry.add(std::move(f)).ok());
    EXPECT_TRUE(registry.add(std::move(l)).ok());
  }
};

AttentionProblem valid(const AttentionArgs& args) {
  std::optional<AttentionProblem> p;
  EXPECT_TRUE(AttentionProblem::make(args, &p).ok());
  return *p;
}

TEST(AttentionProblem, IsMadeOnlyFromValidArgs) {
  verify::OwnedCase s(verify::small_case());  // f32 [1, 9, 2, 8]
  std::optional<AttentionProblem> p;
  ASSERT_TRUE(AttentionProblem::make(s.args, &p).ok());
  EXPECT_EQ(p->dims().sq, 9);
  EXPECT_EQ(p->dims().hq, 2);
  EXPECT_FLOAT_EQ(p->scale(), 1.0f / std::sqrt(8.0f));
  s.args.k.shape[2] = 3;  // Hq = 2 is not a multiple of 3
  const Status st = AttentionProblem::make(s.args, &p);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(p.has_value());
}

TEST(Select, StopsAtTheFirstEligibleAndSpellsOutNoReason) {
  Fixture f;
  Dispatcher dispatcher(f.registry);
  Context ctx;
  verify::OwnedCase s(verify::small_case());  // f32 [1, 9, 2, 8]
  const AttentionProblem p = valid(s.args);
  EXPECT_EQ(dispatcher.select(p, ctx), f.first);
  std::string used;
  ASSERT_TRUE(dispatcher.run(s.args, ctx, &used).ok());
  EXPECT_EQ(used, "test.first");
  EXPECT_EQ(f.rejecting->checks_without_text, 2);  // select and run
  EXPECT_EQ(f.rejecting->checks_with_text, 0);
  EXPECT_EQ(f.later->checks_without_text + f.later->checks_with_text, 0);  // never reached
  EXPECT_EQ(ctx.profiler().spans().at(0).decision, "");  // not the verbose level

  // explain() and the verbose trace are where the text is built.
  const Explanation ex = dispatcher.explain(p, ctx);
  EXPECT_EQ(ex.chosen, "test.first");
  EXPECT_EQ(ex.verdicts.at(0).reasons.at(0), "rejects everything (test.rejecting)");
  ctx.profiler().set_record_decisions(true);
  ASSERT_TRUE(dispatcher.run(p, ctx).ok());
  const std::string decision = ctx.profiler().spans().back().decision;
  EXPECT_NE(decision.find("test.first: first eligible by priority"), std::string::npos) << decision;
  EXPECT_NE(decision.find("test.rejecting rejected: rejects everything"), std::string::npos)
      << decision;
  EXPECT_GE(f.rejecting->checks_with_text, 2);
}

TEST(Select, NothingEligibleIsAnErrorWithEveryReason) {
  Fixture f;
  Policy only;
  ASSERT_TRUE(parse_policy("only:test.rejecting", &only).ok());
  Dispatcher dispatcher(f.registry, only);
  Context ctx;
  verify::OwnedCase s(verify::small_case());  // f32 [1, 9, 2, 8]
  EXPECT_EQ(dispatcher.select(valid(s.args), ctx), nullptr);
  const Status st = dispatcher.run(s.args, ctx);
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("test.rejecting rejected: rejects everything"), std::string::npos)
      << st.message();
}

// An experimental backend whose availability is costly to learn (xla's loads
// its plugin): counts how often it is asked.
class ExperimentalBackend final : public Backend {
 public:
  std::string_view name() const override { return "test.experimental"; }
  Device device() const override { return Device::cpu(); }
  int priority() const override { return 1000; }
  const Capabilities& capabilities() const override { return caps_; }
  Availability availability() const override {
    ++asked;
    return {false, "its plugin is missing"};
  }
  Status run(const AttentionProblem& /*p*/, Context& /*ctx*/) override {
    return internal_error("never chosen here");
  }
  mutable std::atomic<int> asked{0};

 private:
  const Capabilities caps_{.dtypes = {DType::kF32}, .maturity = Maturity::kExperimental};
};

// The policy's clauses come before availability: an experimental backend the
// policy cannot pick is not asked (and says why it was passed over); one the
// policy admits is asked, and an unavailable one says why.
TEST(Select, AsksAvailabilityOnlyOfBackendsThePolicyAdmits) {
  Fixture f;
  auto owned = std::make_unique<ExperimentalBackend>();
  ExperimentalBackend* experimental = owned.get();
  ASSERT_TRUE(f.registry.add(std::move(owned)).ok());
  verify::OwnedCase s(verify::small_case());  // f32 [1, 9, 2, 8]
  const AttentionProblem p = valid(s.args);
  Context ctx;
  {
    Dispatcher dispatcher(f.registry);
    std::string used;
    ASSERT_TRUE(dispatcher.run(s.args, ctx, &used).ok());
    EXPECT_EQ(used, "test.first");
    const Explanation ex = dispatcher.explain(p, ctx);
    EXPECT_EQ(ex.verdicts.at(0).name, "test.experimental");
    EXPECT_EQ(ex.verdicts.at(0).reasons.at(0).rfind("experimental: ", 0), 0u)
        << ex.verdicts.at(0).reasons.at(0);
    EXPECT_EQ(experimental->asked, 0);
  }
  Policy allow;
  ASSERT_TRUE(parse_policy("allow:experimental", &allow).ok());
  Dispatcher dispatcher(f.registry, allow);
  std::string used;
  ASSERT_TRUE(dispatcher.run(s.args, ctx, &used).ok());
  EXPECT_EQ(used, "test.first");
  const Explanation ex = dispatcher.explain(p, ctx);
  EXPECT_EQ(ex.verdicts.at(0).reasons.at(0), "unavailable: its plugin is missing");
  EXPECT_GE(experimental->asked, 1);
}

struct Recorder final : DispatchObserver {
  std::vector<std::pair<std::string, uint64_t>> seen;
  void after_run(const DispatchEvent& e, Context& /*ctx*/) override {
    seen.emplace_back(std::string(e.backend.name()), e.call);
  }
};

TEST(Observers, SeeEveryServedCallUntilRemoved) {
  Fixture f;
  Dispatcher dispatcher(f.registry);
  auto recorder = std::make_shared<Recorder>();
  dispatcher.add_observer(recorder);
  Context ctx;
  verify::OwnedCase s(verify::small_case());  // f32 [1, 9, 2, 8]
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(dispatcher.run(s.args, ctx).ok());
  const std::vector<std::pair<std::string, uint64_t>> want = {
      {"test.first", 0}, {"test.first", 1}, {"test.first", 2}};
  EXPECT_EQ(recorder->seen, want);
  dispatcher.remove_observer(recorder.get());
  ASSERT_TRUE(dispatcher.run(s.args, ctx).ok());
  EXPECT_EQ(recorder->seen.size(), 3u);
}

// A plan is read without the mutex, yet a backend registered after the
// dispatcher was made is taken in at the next call (the plan remembers the
// registry's size), and counted from its first call on.
TEST(Dispatcher, TakesInABackendRegisteredAfterIt) {
  Fixture f;
  Dispatcher dispatcher(f.registry);
  Context ctx(ContextOptions{1});
  verify::OwnedCase s(verify::small_case());
  std::string used;
  ASSERT_TRUE(dispatcher.run(s.args, ctx, &used).ok());
  EXPECT_EQ(used, "test.first");
  auto late = std::make_unique<CountingBackend>("test.late", 250, false);
  ASSERT_TRUE(f.registry.add(std::move(late)).ok());
  ASSERT_TRUE(dispatcher.run(s.args, ctx, &used).ok());
  EXPECT_EQ(used, "test.late");
  const auto stats = dispatcher.stats();
  EXPECT_EQ(stats.at("test.first").calls, 1u);
  EXPECT_EQ(stats.at("test.late").calls, 1u);
  // Listed once served or given stats, not for being in the plan.
  EXPECT_EQ(stats.count("test.later"), 0u);
  dispatcher.add_stats("test.later", DispatchStats{.shadow_checks = 2});
  EXPECT_EQ(dispatcher.stats().at("test.later").shadow_checks, 2u);
  EXPECT_EQ(dispatcher.stats().at("test.later").calls, 0u);
}

// Run it under the asan preset too: a data race in the setters shows as
// heap-use-after-free of a plan or a torn policy there.
TEST(Dispatcher, SetPolicyWhileOtherThreadsDispatch) {
  Fixture f;
  Policy to_first, to_later;
  ASSERT_TRUE(parse_policy("only:test.first", &to_first).ok());
  ASSERT_TRUE(parse_policy("prefer:test.later;deny:test.first", &to_later).ok());
  Dispatcher dispatcher(f.registry, to_first);
  constexpr int kThreads = 2, kCalls = 2000;
  std::atomic<int> bad{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&] {
      Context ctx(ContextOptions{1});
      verify::OwnedCase s(verify::small_case());  // f32 [1, 9, 2, 8]
      for (int i = 0; i < kCalls; ++i) {
        std::string used;
        if (!dispatcher.run(s.args, ctx, &used).ok() ||
            (used != "test.first" && used != "test.later")) {
          ++bad;
        }
      }
    });
  }
  for (int i = 0; i < 500; ++i) {
    dispatcher.set_policy(i % 2 ? to_first : to_later);
    dispatcher.quarantine("test.rejecting", "flapping");
    dispatcher.release("test.rejecting");
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(f.first->runs + f.later->runs, kThreads * kCalls);
  const auto stats = dispatcher.stats();
  uint64_t calls = 0;
  for (const auto& [name, st] : stats) calls += st.calls;
  EXPECT_EQ(calls, static_cast<uint64_t>(kThreads * kCalls));
}

}  // namespace
}  // namespace tessera

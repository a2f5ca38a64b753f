// Shadow verification: a deliberately wrong backend is detected, logged with
// what replays it, and quarantined; shadow work never changes the caller's
// output; sampling follows the rate and the seed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "observe_backends.h"
#include "verify/grid.h"
#include "verify/materialize.h"
#include "tessera/observers.h"

namespace tessera {
namespace {

struct Fixture {
  Registry registry;
  testing::DelegatingBackend* wrong = nullptr;
  explicit Fixture(float offset) {
    auto b = std::make_unique<testing::DelegatingBackend>("test.wrong", 100, Maturity::kStable,
                                                          offset);
    wrong = b.get();
    EXPECT_TRUE(registry.add(std::move(b)).ok());
    EXPECT_TRUE(registry.add(make_reference_backend()).ok());
  }
};

TEST(Shadow, AWrongBackendIsDetectedLoggedAndQuarantined) {
  Fixture f(0.5f);
  Dispatcher dispatcher(f.registry);
  ShadowOptions shadow;
  ASSERT_TRUE(parse_shadow("1,quarantine=2,seed=9", &shadow).ok());
  const std::string repro =
      (std::filesystem::temp_directory_path() / ("tessera-shadow-" + std::to_string(getpid())))
          .string();
  shadow.repro_dir = repro;
  dispatcher.add_observer(std::make_shared<ShadowObserver>(dispatcher, shadow));
  Context ctx;
  std::vector<std::pair<LogLevel, std::string>> logged;
  ctx.logger().set_sink([&](LogLevel l, std::string_view m) { logged.emplace_back(l, m); });

  std::vector<std::string> served;
  for (int i = 0; i < 4; ++i) {
    verify::OwnedCase p(verify::small_case());
    std::string used;
    ASSERT_TRUE(dispatcher.run(p.args, ctx, &used).ok());
    served.push_back(used);
  }
  // Two mismatches quarantine it; later calls go to the reference.
  EXPECT_EQ(served, (std::vector<std::string>{"test.wrong", "test.wrong", "reference",
                                              "reference"}));
  const auto stats = dispatcher.stats();
  EXPECT_EQ(stats.at("test.wrong").shadow_checks, 2u);
  EXPECT_EQ(stats.at("test.wrong").shadow_mismatches, 2u);
  ASSERT_EQ(dispatcher.quarantined().count("test.wrong"), 1u);

  verify::OwnedCase p(verify::small_case());
  const Explanation ex = dispatcher.explain(p.args, ctx);
  EXPECT_EQ(ex.chosen, "reference");
  ASSERT_EQ(ex.verdicts[0].name, "test.wrong");
  EXPECT_EQ(ex.verdicts[0].kind, BackendVerdict::Kind::kRejected);
  EXPECT_NE(ex.verdicts[0].reasons.at(0).find("quarantined: 2 shadow mismatches vs reference"),
            std::string::npos)
      << ex.verdicts[0].reasons.at(0);

  // The log names the case and the commands that replay it, on files it wrote.
  ASSERT_GE(logged.size(), 3u);
  const std::string& first = logged[0].second;
  RecordProperty("first_log", first);  // docs/OBSERVABILITY.md quotes it (--gtest_output=xml)
  EXPECT_EQ(logged[0].first, LogLevel::kWarning);
  EXPECT_NE(first.find("shadow mismatch 1: test.wrong disagrees with reference on B=1,Sq=9"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("shadow seed 9"), std::string::npos) << first;
  EXPECT_NE(first.find("tessera attention run --q " + repro + "/test.wrong-call0/q.npy"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("--backend test.wrong"), std::string::npos) << first;
  for (const char* file : {"q.npy", "k.npy", "v.npy", "got.npy", "want.npy"}) {
    EXPECT_TRUE(std::filesystem::exists(repro + "/test.wrong-call0/" + file)) << file;
  }
  {  // q.npy is a NumPy 1.0 file that `attention run` reads back
    std::ifstream f(repro + "/test.wrong-call0/q.npy", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 10u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const size_t header_len = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
    const std::string header = bytes.substr(10, header_len);
    EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
    EXPECT_NE(header.find("'shape': (1, 9, 2, 8)"), std::string::npos) << header;
    EXPECT_EQ((10 + header_len) % 64, 0u);
    EXPECT_EQ(bytes.size(), 10 + header_len + size_t{9} * 2 * 8 * sizeof(float));
  }
  EXPECT_EQ(logged[2].first, LogLevel::kError);
  EXPECT_NE(logged[2].second.find("quarantined attention backend test.wrong"), std::string::npos);
  std::filesystem::remove_all(repro);

  dispatcher.release("test.wrong");
  EXPECT_EQ(dispatcher.explain(p.args, ctx).chosen, "test.wrong");
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

TEST(Shadow, NeverChangesTheCallersOutput) {
  for (float offset : {0.0f, 0.5f}) {
    Fixture f(offset);
    Dispatcher plain(f.registry);
    Dispatcher shadowed(f.registry);
    ShadowOptions shadow;
    shadow.rate = 1;
    shadow.quarantine_after = 0;  // keep serving from the wrong one
    shadowed.add_observer(std::make_shared<ShadowObserver>(shadowed, shadow));
    Context ctx;
    ctx.logger().set_sink([](LogLevel, std::string_view) {});
    verify::OwnedCase a(verify::small_case()), b(verify::small_case());
    ASSERT_TRUE(plain.run(a.args, ctx).ok());
    ASSERT_TRUE(shadowed.run(b.args, ctx).ok());
    EXPECT_EQ(a.out(), b.out());  // bit-identical
    EXPECT_EQ(shadowed.stats().at("test.wrong").shadow_checks, 1u);
    EXPECT_EQ(shadowed.stats().at("test.wrong").shadow_mismatches, offset != 0 ? 1u : 0u);
    EXPECT_TRUE(shadowed.quarantined().empty());
    EXPECT_TRUE(ctx.allocator().leaks().empty());
  }
}

TEST(Shadow, SamplesTheRateDeterministically) {
  const auto count = [](uint64_t seed) {
    Fixture f(0.0f);
    Dispatcher dispatcher(f.registry);
    ShadowOptions shadow;
    shadow.rate = 0.25;
    shadow.seed = seed;
    dispatcher.add_observer(std::make_shared<ShadowObserver>(dispatcher, shadow));
    Context ctx;
    verify::OwnedCase p(verify::small_case(4, 1, 4));
    for (int i = 0; i < 400; ++i) EXPECT_TRUE(dispatcher.run(p.args, ctx).ok());
    return dispatcher.stats().at("test.wrong").shadow_checks;
  };
  const uint64_t a = count(1);
  EXPECT_EQ(a, count(1));
  EXPECT_GT(a, 60u);  // 100 expected; 5 sigma is about 43
  EXPECT_LT(a, 140u);
}

TEST(Shadow, SkipsWhenTheBudgetRefusesTheScratchOutput) {
  Fixture f(0.5f);
  Dispatcher dispatcher(f.registry);
  ShadowOptions shadow;
  shadow.rate = 1;
  dispatcher.add_observer(std::make_shared<ShadowObserver>(dispatcher, shadow));
  ContextOptions options;
  options.memory_budget_bytes = 64;  // smaller than any scratch output here
  Context ctx(options);
  verify::OwnedCase p(verify::small_case());
  ASSERT_TRUE(dispatcher.run(p.args, ctx).ok());
  EXPECT_EQ(dispatcher.stats().at("test.wrong").shadow_skipped, 1u);
  EXPECT_EQ(dispatcher.stats().at("test.wrong").shadow_checks, 0u);
  EXPECT_EQ(ctx.allocator().live_bytes(), 0u);
}

TEST(Shadow, OptionsParseAndNameTheirErrors) {
  ShadowOptions o;
  ASSERT_TRUE(parse_shadow("0.01,trusted=cpu.gemm,quarantine=5,seed=3,repro=/tmp/x", &o).ok());
  EXPECT_DOUBLE_EQ(o.rate, 0.01);
  EXPECT_EQ(o.trusted, "cpu.gemm");
  EXPECT_EQ(o.quarantine_after, 5);
  EXPECT_EQ(o.seed, 3u);
  EXPECT_EQ(o.repro_dir, "/tmp/x");
  Status s = parse_shadow("1.5", &o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("rate must be a number in [0, 1]"), std::string::npos);
  EXPECT_NE(parse_shadow("0.1,colour=red", &o).message().find("unknown key 'colour'"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera

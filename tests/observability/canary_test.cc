// Canary runs leave the served output bit-identical and record agreement and
// speed per bucket; experimental backends serve only when the policy allows.
#include "attention/observers/canary.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "attention/tuning/tuning.h"
#include "observe_backends.h"
#include "tessera/observers.h"
#include "verify/grid.h"
#include "verify/materialize.h"

namespace tessera {
namespace {

TEST(Canary, ServedOutputIsBitIdenticalAndAgreementIsRecorded) {
  for (float offset : {0.0f, 0.25f}) {
    Registry registry;
    ASSERT_TRUE(registry.add(make_reference_backend()).ok());
    ASSERT_TRUE(registry
                    .add(std::make_unique<testing::DelegatingBackend>(
                        "test.candidate", 100, Maturity::kExperimental, offset))
                    .ok());
    Dispatcher plain(registry);
    Dispatcher canaried(registry);
    auto canary = std::make_shared<CanaryObserver>(canaried, CanaryOptions{"test.candidate", 1.0});
    canaried.add_observer(canary);
    Context ctx;
    ctx.logger().set_sink([](LogLevel, std::string_view) {});
    constexpr int kCalls = 3;
    for (int i = 0; i < kCalls; ++i) {
      verify::OwnedCase a(verify::small_case()), b(verify::small_case());
      std::string used_a, used_b;
      ASSERT_TRUE(plain.run(a.args, ctx, &used_a).ok());
      ASSERT_TRUE(canaried.run(b.args, ctx, &used_b).ok());
      EXPECT_EQ(used_b, "reference");  // experimental: never served under auto
      EXPECT_EQ(used_a, used_b);
      EXPECT_EQ(a.out(), b.out());  // bit-identical, whatever the candidate wrote
    }
    const CanaryRecords records = canary->records();
    verify::OwnedCase p(verify::small_case());
    const auto& rec = records.at("test.candidate").at(tuning_bucket(p.args));
    EXPECT_EQ(rec.runs, static_cast<uint64_t>(kCalls));
    EXPECT_EQ(rec.agreements, offset == 0 ? rec.runs : 0u);
    EXPECT_EQ(rec.serving, "reference");
    EXPECT_GT(rec.serving_seconds, 0);
    EXPECT_GT(rec.canary_seconds, 0);
    if (offset != 0) {
      EXPECT_NEAR(rec.max_abs_error, offset, 1e-6);
    }
    EXPECT_EQ(canaried.stats().at("test.candidate").canary_runs, static_cast<uint64_t>(kCalls));
    EXPECT_TRUE(ctx.allocator().leaks().empty());
  }
}

TEST(Canary, RecordsMergeAcrossRunsOnDisk) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tessera-canary-" + std::to_string(getpid())))
          .string() +
      "/canary.json";
  CanaryRecords one;
  one["cpu.flash"]["f32,mask=none,D<=64,Sq<=16,Sk<=16"] = {2, 2, 0, 1e-7, 0.4, 0.1, "cpu.gemm"};
  for (int round = 0; round < 2; ++round) {
    CanaryRecords all;
    ASSERT_TRUE(load_canary_records(path, &all).ok());
    merge_canary_records(one, &all);
    ASSERT_TRUE(save_canary_records(path, all).ok());
  }
  CanaryRecords back;
  ASSERT_TRUE(load_canary_records(path, &back).ok());
  const auto& buckets = back.at("cpu.flash");
  EXPECT_EQ(buckets.begin()->second.runs, 4u);
  EXPECT_EQ(canary_summary(buckets),
            "4 runs in 1 bucket, 4 agree (100.0%), 4.00x the serving backend's speed");
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(Maturity, AutoServesExperimentalOnlyWhenThePolicyAllows) {
  Registry registry;
  ASSERT_TRUE(registry.add(make_reference_backend()).ok());
  ASSERT_TRUE(registry
                  .add(std::make_unique<testing::DelegatingBackend>("test.new", 100,
                                                                    Maturity::kExperimental))
                  .ok());
  Context ctx;
  verify::OwnedCase p(verify::small_case());
  for (const auto& [text, chosen] : std::vector<std::pair<std::string, std::string>>{
           {"auto", "reference"},
           {"allow:experimental", "test.new"},
           {"prefer:test.new", "test.new"},
           {"only:test.new", "test.new"},
           {"allow:experimental;deny:test.new", "reference"}}) {
    Policy policy;
    ASSERT_TRUE(parse_policy(text, &policy).ok()) << text;
    Dispatcher dispatcher(registry, policy);
    const Explanation ex = dispatcher.explain(p.args, ctx);
    EXPECT_EQ(ex.chosen, chosen) << text;
    if (text == "auto") {
      EXPECT_NE(ex.verdicts[0].reasons.at(0).find("experimental: serves only under the policy "
                                                  "clause allow:experimental"),
                std::string::npos);
    }
  }
  Policy policy;
  ASSERT_TRUE(parse_policy("deny:x;allow:experimental", &policy).ok());
  EXPECT_EQ(policy.to_string(), "deny:x;allow:experimental");
  EXPECT_EQ(parse_policy("allow:everything", &policy).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera

// A tuned table changes auto's choice and explain cites the entry; tables
// round-trip, and one measured on another machine is refused.
#include "attention/tuning/tuning.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "observe_backends.h"
#include "tessera/dispatcher.h"
#include "verify/grid.h"
#include "verify/materialize.h"

namespace tessera {
namespace {

TuningTable table_for(const AttentionArgs& args, std::vector<TuningMeasurement> ranking) {
  TuningTable t;
  t.key = current_tuning_key();
  t.source = "test-table.json";
  t.entries.push_back({tuning_bucket(args), "B=1,S=9,H=2,D=8", std::move(ranking)});
  return t;
}

TEST(Tuning, ATunedTableChangesAutosChoiceAndExplainCitesIt) {
  Registry registry;
  ASSERT_TRUE(registry.add(make_reference_backend()).ok());  // priority 0
  ASSERT_TRUE(
      registry.add(std::make_unique<testing::DelegatingBackend>("test.fast", 10, Maturity::kStable))
          .ok());
  Dispatcher dispatcher(registry);
  Context ctx;
  ctx.profiler().set_record_decisions(true);  // the verbose trace says why
  verify::OwnedCase p(verify::small_case());
  EXPECT_EQ(dispatcher.explain(p.args, ctx).chosen, "test.fast");  // by priority

  dispatcher.set_tuning(
      std::make_shared<TuningTable>(table_for(p.args, {{"reference", 0.5}, {"test.fast", 2.0}})));
  const Explanation ex = dispatcher.explain(p.args, ctx);
  EXPECT_EQ(ex.chosen, "reference");
  const std::string& why = ex.verdicts.at(0).reasons.at(0);
  EXPECT_NE(why.find("rank 1 of 2 in tuned table entry '" + tuning_bucket(p.args) +
                     "' (test-table.json): reference 0.5 ms, test.fast 2 ms"),
            std::string::npos)
      << why;
  std::string used;
  ASSERT_TRUE(dispatcher.run(p.args, ctx, &used).ok());
  EXPECT_EQ(used, "reference");
  EXPECT_NE(ctx.profiler().spans().back().decision.find("tuned table entry"), std::string::npos);

  // Another bucket has no entry: priority, and explain says why.
  verify::OwnedCase big(verify::small_case(200));
  const Explanation other = dispatcher.explain(big.args, ctx);
  EXPECT_EQ(other.chosen, "test.fast");
  EXPECT_NE(other.verdicts.at(0).reasons.at(0).find("has no entry for"), std::string::npos);

  // An only: policy ignores the table.
  Policy only;
  ASSERT_TRUE(parse_policy("test.fast", &only).ok());
  dispatcher.set_policy(only);
  EXPECT_EQ(dispatcher.explain(p.args, ctx).chosen, "test.fast");
}

TEST(Tuning, TablesRoundTripAndAnotherMachinesTableIsRefused) {
  verify::OwnedCase p(verify::small_case());
  TuningTable t = table_for(p.args, {{"cpu.gemm", 1.25}, {"reference", 30}});
  t.threads = 2;
  t.created = "2026-12-02T00:00:00Z";
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tessera-tuning-" + std::to_string(getpid())))
          .string() +
      "/tuning.json";
  ASSERT_TRUE(t.save(path).ok());
  TuningTable back;
  ASSERT_TRUE(TuningTable::load(path, current_tuning_key(), &back).ok());
  ASSERT_EQ(back.entries.size(), 1u);
  EXPECT_EQ(back.entries[0].ranking[0].backend, "cpu.gemm");
  EXPECT_DOUBLE_EQ(back.entries[0].ranking[0].median_ms, 1.25);
  EXPECT_EQ(back.source, path);

  TuningKey other = current_tuning_key();
  other.cpu = "Some Other CPU";
  Status s = TuningTable::load(path, other, &back);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("Some Other CPU"), std::string::npos) << s.message();

  TuningTable bad;
  EXPECT_NE(TuningTable::parse("{\"format\": \"tessera.tuning\", \"version\": 99}", "x", &bad)
                .message()
                .find("version 99"),
            std::string::npos);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(Tuning, BucketsNameDtypeMaskHeadDimAndLengths) {
  verify::OwnedCase p(verify::small_case(9, 2, 8));
  EXPECT_EQ(tuning_bucket(p.args), "f32,mask=none,D<=32,Sq<=16,Sk<=16");
  p.args.mask = Mask::causal();
  p.args.q.shape[1] = 1;
  p.args.out.shape[1] = 1;
  EXPECT_EQ(tuning_bucket(p.args), "f32,mask=causal,D<=32,Sq=1,Sk<=16");
}

}  // namespace
}  // namespace tessera

// tessera::Runtime: options checked with the option named, and a runtime
// that runs attention through its dispatcher.
#include "tessera/runtime.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "attention/tuning/shipped_rankings.h"
#include "runtime/cpu_kind.h"
#include "tessera/tessera.h"

namespace tessera {
namespace {

TEST(Runtime, BadPolicyNamesTheOption) {
  RuntimeOptions options;
  options.attention = "nonsense:foo";  // unknown backend names are legal; clauses are not
  options.tuning = "none";
  std::unique_ptr<Runtime> rt;
  const Status s = Runtime::create(options, &rt);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("attention:", 0), 0u) << s.message();
  EXPECT_EQ(rt, nullptr);
}

TEST(Runtime, NegativeThreadsRefused) {
  RuntimeOptions options;
  options.threads = -2;
  std::unique_ptr<Runtime> rt;
  const Status s = Runtime::create(options, &rt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("threads = -2"), std::string::npos) << s.message();
}

TEST(Runtime, UnusableTuningTableIsNotedNotFatal) {
  RuntimeOptions options;
  options.tuning = "/nonexistent/tuning.json";
  std::unique_ptr<Runtime> rt;
  ASSERT_TRUE(Runtime::create(options, &rt).ok());
  EXPECT_EQ(rt->tuning_path(), "");
  EXPECT_NE(rt->tuning_note().find("/nonexistent/tuning.json"), std::string::npos)
      << rt->tuning_note();
}

TEST(Runtime, RunsAttentionWithTheBudgetAndPolicyGiven) {
  RuntimeOptions options;
  options.attention = "only:reference";
  options.threads = 1;
  options.memory_budget_bytes = 64 << 20;
  options.tuning = "none";
  std::unique_ptr<Runtime> rt;
  ASSERT_TRUE(Runtime::create(options, &rt).ok());
  EXPECT_EQ(rt->policy().only, std::vector<std::string>{"reference"});
  EXPECT_NE(rt->registry().find("reference"), nullptr);
  // One query, two keys with equal scores: the output is the mean of v.
  std::vector<float> q = {1, 0}, k = {1, 0, 1, 0}, v = {2, 4, 6, 8}, out(2, -1.0f);
  AttentionArgs args;
  args.q = TensorView::contiguous(q.data(), DType::kF32, {1, 1, 1, 2});
  args.k = TensorView::contiguous(k.data(), DType::kF32, {1, 2, 1, 2});
  args.v = TensorView::contiguous(v.data(), DType::kF32, {1, 2, 1, 2});
  args.out = TensorView::contiguous(out.data(), DType::kF32, {1, 1, 1, 2});
  std::string used;
  ASSERT_TRUE(rt->dispatcher().run(args, rt->context(), &used).ok());
  EXPECT_EQ(used, "reference");
  EXPECT_FLOAT_EQ(out[0], 4.0f);
  EXPECT_FLOAT_EQ(out[1], 6.0f);
  EXPECT_EQ(rt->context().allocator().live_bytes(), 0u);
  // The call is in the trace and the metrics the runtime exports.
  EXPECT_NE(rt->chrome_trace().find("\"attention reference\""), std::string::npos)
      << rt->chrome_trace();
  EXPECT_NE(rt->metrics_text().find("tessera_attention_calls_total{backend=\"reference\"} 1"),
            std::string::npos)
      << rt->metrics_text();
}

// Decode S4 of docs/BENCHMARKS.md (f32), where cpu.flash and cpu.gemm differ
// on this project's AVX2 machine.
struct DecodeS4 {
  std::vector<float> q = std::vector<float>(size_t{32} * 128, 0.5f);
  std::vector<float> kv = std::vector<float>(size_t{8192} * 8 * 128, 0.25f);
  std::vector<float> out = std::vector<float>(size_t{32} * 128);
  AttentionArgs args;
  DecodeS4() {
    args.q = TensorView::contiguous(q.data(), DType::kF32, {1, 1, 32, 128});
    args.k = TensorView::contiguous(kv.data(), DType::kF32, {1, 8192, 8, 128});
    args.v = args.k;
    args.out = TensorView::contiguous(out.data(), DType::kF32, {1, 1, 32, 128});
  }
};

std::string chosen_reason(const Explanation& ex) {
  for (const BackendVerdict& v : ex.verdicts) {
    if (v.kind == BackendVerdict::Kind::kChosen) return v.reasons.at(0);
  }
  return "";
}

// Without a tuned table, decode goes where the table shipped for this CPU
// kind ranks first (cpu.gemm on the AVX2 machine the file was measured on),
// and the runtime's note and explain name that table. No timing here: the
// expectation is read from the shipped file.
TEST(Runtime, WithoutATunedTableDecodeFollowsTheShippedRanking) {
  std::shared_ptr<const TuningTable> shipped;
  ASSERT_TRUE(shipped_ranking(cpu_kind(), &shipped).ok());
  if (cpu_kind() == CpuKind::kAvx2) {
    ASSERT_NE(shipped, nullptr) << "x86-avx2.json ships";
  }
  RuntimeOptions options;
  options.tuning = "none";
  options.threads = 2;
  std::unique_ptr<Runtime> rt;
  ASSERT_TRUE(Runtime::create(options, &rt).ok());
  DecodeS4 s4;
  const TuningEntry* entry = shipped ? shipped->find(tuning_bucket(s4.args)) : nullptr;
  const std::string want = entry ? entry->ranking.front().backend : "cpu.flash";
  std::string used;
  ASSERT_TRUE(rt->dispatcher().run(s4.args, rt->context(), &used).ok());
  EXPECT_EQ(used, want);
  EXPECT_NEAR(s4.out[0], 0.25f, 1e-6f);  // every key equal: the output is v
  const std::string why = chosen_reason(rt->dispatcher().explain(s4.args, rt->context()));
  EXPECT_EQ(rt->tuning_path(), "");
  const std::string kind(cpu_kind_name(cpu_kind()));
  if (shipped != nullptr) {
    EXPECT_NE(rt->tuning_note().find("auto uses the shipped default ranking for " + kind +
                                     ", measured on '" + shipped->key.cpu + "'"),
              std::string::npos)
        << rt->tuning_note();
    if (entry != nullptr) {
      EXPECT_NE(why.find("of the shipped default ranking for " + kind), std::string::npos) << why;
    }
  } else {
    EXPECT_NE(rt->tuning_note().find("no shipped default ranking for " + kind), std::string::npos)
        << rt->tuning_note();
  }
}

// A user's table wins over the shipped one, and a refused one leaves the
// shipped one in place, with the note saying both.
TEST(Runtime, AUsersTunedTableWinsOverTheShippedRanking) {
  DecodeS4 s4;
  TuningTable user;
  user.key = current_tuning_key();
  user.entries.push_back({tuning_bucket(s4.args), "S4", {{"reference", 1.0}}});
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera-runtime-" + std::to_string(getpid()));
  const std::string path = (dir / "tuning.json").string();
  ASSERT_TRUE(user.save(path).ok());
  RuntimeOptions options;
  options.tuning = path;
  std::unique_ptr<Runtime> rt;
  ASSERT_TRUE(Runtime::create(options, &rt).ok());
  EXPECT_EQ(rt->tuning_path(), path);
  EXPECT_EQ(rt->dispatcher().explain(s4.args, rt->context()).chosen, "reference");

  user.key.cpu = "Another CPU";
  ASSERT_TRUE(user.save(path).ok());
  ASSERT_TRUE(Runtime::create(options, &rt).ok());
  EXPECT_EQ(rt->tuning_path(), "");
  EXPECT_NE(rt->tuning_note().find("Another CPU"), std::string::npos) << rt->tuning_note();
  EXPECT_NE(rt->tuning_note().find("; auto uses the "), std::string::npos) << rt->tuning_note();
  EXPECT_NE(rt->dispatcher().explain(s4.args, rt->context()).chosen, "reference");
  std::filesystem::remove_all(dir);
}

TEST(Runtime, LibraryVersionIsTheProjects) {
  EXPECT_STREQ(library_version(), TESSERA_PROJECT_VERSION);
}

}  // namespace
}  // namespace tessera

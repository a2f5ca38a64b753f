// tessera::Runtime: options checked with the option named, and a runtime
// that runs attention through its dispatcher.
#include "tessera/runtime.h"

#include <gtest/gtest.h>

#include <vector>

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

TEST(Runtime, LibraryVersionIsTheProjects) { EXPECT_STREQ(library_version(), TESSERA_PROJECT_VERSION); }

}  // namespace
}  // namespace tessera

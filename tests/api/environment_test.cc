// The environment is read at the edges (api/environment.h) and reaches the
// layers below as values; errors name the option by the library's name
// (Status::option()), which each front end renders in its own words.
#include "api/environment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

namespace tessera {
namespace {

// Sets a variable for one scope and restores the previous value.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      old_ = old;
      had_ = true;
    }
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedVariable() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(Environment, PolicyFromTheOptionElseTheVariable) {
  Policy p;
  {
    ScopedVariable v("TESSERA_ATTENTION", "deny:cpu.gemm");
    ASSERT_TRUE(api::policy_or_environment("", &p).ok());
    EXPECT_EQ(p.deny, (std::vector<std::string>{"cpu.gemm"}));
    ASSERT_TRUE(api::policy_or_environment("only:reference", &p).ok());  // the option wins
    EXPECT_EQ(p.only, (std::vector<std::string>{"reference"}));
    EXPECT_TRUE(p.deny.empty());
  }
  {
    ScopedVariable v("TESSERA_ATTENTION", "bogus:x");
    const Status s = api::policy_or_environment("", &p);
    EXPECT_EQ(s.message().rfind("TESSERA_ATTENTION: ", 0), 0u) << s.message();
    EXPECT_EQ(s.option(), "");  // a variable is not an option a front end renames
    const Status o = api::policy_or_environment("bogus:y", &p);
    EXPECT_EQ(o.option(), "attention");
    EXPECT_EQ(o.message().rfind("attention: ", 0), 0u) << o.message();
  }
  ScopedVariable v("TESSERA_ATTENTION", nullptr);
  ASSERT_TRUE(api::policy_or_environment("", &p).ok());
  EXPECT_TRUE(p.only.empty() && p.deny.empty() && p.prefer.empty());
}

TEST(Environment, WeightsFromTheOptionElseTheVariable) {
  model::WeightPrecision w{};
  {
    ScopedVariable v("TESSERA_WEIGHTS", "bf16");
    ASSERT_TRUE(api::weights_or_environment("", &w).ok());
    EXPECT_EQ(w, model::WeightPrecision::kBf16);
    ASSERT_TRUE(api::weights_or_environment("f32", &w).ok());
    EXPECT_EQ(w, model::WeightPrecision::kF32);
    ASSERT_TRUE(api::weights_or_environment("int8", &w).ok());
    EXPECT_EQ(w, model::WeightPrecision::kInt8);
    EXPECT_STREQ(model::weight_precision_name(w), "int8");
  }
  {
    ScopedVariable v("TESSERA_WEIGHTS", "half");
    const Status s = api::weights_or_environment("", &w);
    EXPECT_EQ(s.message().rfind("TESSERA_WEIGHTS: 'half' is not a weight precision", 0), 0u)
        << s.message();
    const Status o = api::weights_or_environment("fp16", &w);
    EXPECT_EQ(o.option(), "weights");
    EXPECT_EQ(o.message().rfind("weights: 'fp16'", 0), 0u) << o.message();
    EXPECT_NE(o.message().find("expected f32, bf16 or int8"), std::string::npos) << o.message();
  }
  ScopedVariable v("TESSERA_WEIGHTS", nullptr);
  ASSERT_TRUE(api::weights_or_environment("", &w).ok());
  EXPECT_EQ(w, model::WeightPrecision::kF32);
}

TEST(Environment, UserFilesFollowXdgThenHome) {
  ScopedVariable home("HOME", "/home/u");
  {
    ScopedVariable cache("XDG_CACHE_HOME", "/c");
    ScopedVariable state("XDG_STATE_HOME", "/s");
    EXPECT_EQ(api::default_tuning_path(), "/c/tessera/tuning.json");
    EXPECT_EQ(api::default_canary_path(), "/s/tessera/canary.json");
  }
  ScopedVariable cache("XDG_CACHE_HOME", nullptr);
  ScopedVariable state("XDG_STATE_HOME", nullptr);
  EXPECT_EQ(api::default_tuning_path(), "/home/u/.cache/tessera/tuning.json");
  EXPECT_EQ(api::default_canary_path(), "/home/u/.local/state/tessera/canary.json");
}

TEST(Environment, ModelSearchReadsTheDataDirectory) {
  ScopedVariable data("TESSERA_DATA_DIR", "/data/t");
  ScopedVariable model("TESSERA_MODEL", "e5");
  const pipeline::ModelSearch s = api::model_search();
  EXPECT_EQ(s.data_dir, "/data/t");
  EXPECT_EQ(s.data_dir_source, "$TESSERA_DATA_DIR");
  EXPECT_EQ(s.env_model, "e5");
}

TEST(StatusOption, MessageNamingRenamesTheLeadingOptionOnly) {
  const Status s = invalid_option("weights", ": bf16 weights need AVX-512");
  EXPECT_EQ(s.option(), "weights");
  // The option's word later in the prose is prose, not the option.
  EXPECT_EQ(s.message_naming("--weights"), "--weights: bf16 weights need AVX-512");
  const Status odd(StatusCode::kInvalidArgument, "the file: weights", "weights");
  EXPECT_EQ(odd.message_naming("--weights"), "the file: weights");  // not at the start: unchanged
  const Status none = invalid_argument("max_tokens = 1");
  EXPECT_EQ(none.message_naming("--max-tokens"), "max_tokens = 1");  // no option: unchanged
}

}  // namespace
}  // namespace tessera

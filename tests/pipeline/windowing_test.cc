#include "pipeline/windowing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera::pipeline {
namespace {

TEST(Windowing, ShortDocumentIsOneWindow) {
  const WindowOptions opt{10, 3};  // 8 content tokens per window
  for (int64_t n = 1; n <= 8; ++n) {
    const auto w = plan_windows(n, opt);
    ASSERT_EQ(w.size(), 1u) << n;
    EXPECT_EQ(w[0].begin, 0);
    EXPECT_EQ(w[0].end, n);
  }
  EXPECT_TRUE(plan_windows(0, opt).empty());
}

TEST(Windowing, WindowsCoverEveryTokenAndOverlapByStride) {
  for (int max_tokens : {3, 4, 7, 16, 258}) {
    for (int stride = 0; stride < max_tokens - 2; ++stride) {
      const WindowOptions opt{max_tokens, stride};
      ASSERT_TRUE(check_window_options(opt).ok());
      for (int64_t n : {1, 2, 5, 17, 64, 255, 256, 257, 1000}) {
        const auto w = plan_windows(n, opt);
        const std::string where = "max_tokens=" + std::to_string(max_tokens) +
                                  " stride=" + std::to_string(stride) + " n=" + std::to_string(n);
        ASSERT_FALSE(w.empty()) << where;
        EXPECT_EQ(w.front().begin, 0) << where;
        EXPECT_EQ(w.back().end, n) << where;
        std::vector<int> covered(n, 0);
        for (size_t i = 0; i < w.size(); ++i) {
          EXPECT_LT(w[i].begin, w[i].end) << where;
          EXPECT_LE(w[i].end - w[i].begin, max_tokens - 2) << where;
          for (int64_t t = w[i].begin; t < w[i].end; ++t) ++covered[t];
          if (i > 0) {
            EXPECT_EQ(w[i - 1].end - w[i].begin, stride) << where << " window " << i;
            EXPECT_EQ(w[i - 1].end - w[i - 1].begin, max_tokens - 2)
                << where << ": only the last window may be short";
          }
        }
        for (int64_t t = 0; t < n; ++t) ASSERT_GE(covered[t], 1) << where << " token " << t;
      }
    }
  }
}

TEST(Windowing, ExampleWithTheDefaults) {
  // 256-token model, stride 32: 254 content tokens, step 222.
  const auto w = plan_windows(600, WindowOptions{256, 32});
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].begin, 0);
  EXPECT_EQ(w[0].end, 254);
  EXPECT_EQ(w[1].begin, 222);
  EXPECT_EQ(w[1].end, 476);
  EXPECT_EQ(w[2].begin, 444);
  EXPECT_EQ(w[2].end, 600);
}

TEST(Windowing, RejectsOptionsNamingTheFlag) {
  Status s = check_window_options({2, 0});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--max-tokens = 2"), std::string::npos) << s.message();
  s = check_window_options({10, 8});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--stride = 8"), std::string::npos) << s.message();
  EXPECT_FALSE(check_window_options({10, -1}).ok());
  EXPECT_TRUE(check_window_options({10, 7}).ok());
}

}  // namespace
}  // namespace tessera::pipeline

#include "runtime/gemm.h"

#include <gtest/gtest.h>

#include <vector>

#include "tessera/dtype.h"

namespace tessera {
namespace {

// C = A * B^T against a hand loop, with leading dimensions wider than the rows.
TEST(Gemm, MatchesALoopWithTransposeAndPadding) {
  const int64_t m = 5, n = 7, k = 3, lda = 4, ldb = 6, ldc = 9;
  std::vector<float> a(m * lda), b(n * ldb), c(m * ldc, 1.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.5f;
  ASSERT_TRUE(
      sgemm(false, true, m, n, k, 2.0f, a.data(), lda, b.data(), ldb, 1.0f, c.data(), ldc).ok());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float want = 1.0f;
      for (int64_t p = 0; p < k; ++p) want += 2.0f * a[i * lda + p] * b[j * ldb + p];
      EXPECT_FLOAT_EQ(c[i * ldc + j], want) << i << "," << j;
    }
  }
  EXPECT_EQ(c[ldc - 1], 1.0f);  // padding untouched
}

// A backend's thread choice must not leak into its caller's later GEMMs.
TEST(Gemm, ScopedThreadsRestoresTheCallersSetting) {
  set_gemm_threads(3);
  {
    const ScopedGemmThreads one(1);
    EXPECT_EQ(gemm_threads(), 1);
  }
  EXPECT_EQ(gemm_threads(), 3);
  set_gemm_threads(0);  // below 1 means 1
  EXPECT_EQ(gemm_threads(), 1);
}

}  // namespace
}  // namespace tessera

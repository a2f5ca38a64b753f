// gemm_bf16_weights against a float64 product of the f32 inputs, with the
// error bound of rounding both operands to bf16 and accumulating in f32:
//   |y - ref| <= (2u + u^2 + gamma_k (1 + u)^2) * sum_p |x_ip| |w_jp|,
// u = 2^-8 (bf16's unit roundoff), gamma_k = k eps / (1 - k eps), eps = 2^-24.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "runtime/gemm.h"

namespace tessera {
namespace {

constexpr double kBf16UnitRoundoff = 1.0 / 256;      // 2^-8
constexpr double kF32UnitRoundoff = 1.0 / 16777216;  // 2^-24
constexpr float kGuard = -12345.0f;                  // y's padding columns stay this

double error_bound_factor(int64_t k) {
  const double u = kBf16UnitRoundoff;
  const double gamma = k * kF32UnitRoundoff / (1 - k * kF32UnitRoundoff);
  return 2 * u + u * u + gamma * (1 + u) * (1 + u);
}

struct Case {
  int64_t m, n, k;
};

// Weights and inputs of mixed sign and magnitude; ldx > k and ldy > n so a
// stride mistake reads or writes the wrong element.
void check_case(const Case& c, TrackingAllocator& alloc) {
  SCOPED_TRACE("M = " + std::to_string(c.m) + ", N = " + std::to_string(c.n) +
               ", K = " + std::to_string(c.k));
  const int64_t ldx = c.k + 3, ldy = c.n + 5;
  std::mt19937 rng(static_cast<uint32_t>(c.m * 7919 + c.n * 31 + c.k));
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-4, 4);
  auto value = [&] { return std::ldexp(mant(rng), expo(rng)); };
  std::vector<float> w(c.n * c.k), x(c.m * ldx), y(c.m * ldy, kGuard);
  for (float& v : w) v = value();
  for (float& v : x) v = value();

  Bf16Weights bw;
  const Status made = Bf16Weights::create(w.data(), c.n, c.k, alloc, "test.weights", &bw);
  if (made.code() == StatusCode::kUnsupported) GTEST_SKIP() << made.to_string();
  ASSERT_TRUE(made.ok()) << made.to_string();
  EXPECT_GE(bw.bytes(), static_cast<size_t>(c.n * c.k * 2));
  size_t bytes = 0;
  ASSERT_TRUE(gemm_bf16_workspace_bytes(c.m, ldx, bw, ldy, &bytes).ok());
  // At least one 1024-row block of x in bf16.
  EXPECT_GE(bytes, static_cast<size_t>(std::min<int64_t>(c.m, 1024) * c.k * 2));
  Buffer work;
  ASSERT_TRUE(Buffer::allocate(alloc, bytes, "test.workspace", &work).ok());
  const Status st = gemm_bf16_weights(c.m, x.data(), ldx, bw, y.data(), ldy, work.data(), bytes);
  ASSERT_TRUE(st.ok()) << st.to_string();

  const double factor = error_bound_factor(c.k);
  double worst_ratio = 0;  // |error| / bound, worst element
  int64_t worst_i = -1, worst_j = -1;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double ref = 0, mag = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        ref += double(x[i * ldx + p]) * w[j * c.k + p];
        mag += std::fabs(double(x[i * ldx + p]) * w[j * c.k + p]);
      }
      const double ratio = std::fabs(y[i * ldy + j] - ref) / (factor * mag);
      if (!(ratio <= worst_ratio)) worst_ratio = ratio, worst_i = i, worst_j = j;
    }
    for (int64_t j = c.n; j < ldy; ++j) ASSERT_EQ(y[i * ldy + j], kGuard) << "row " << i;
  }
  EXPECT_LE(worst_ratio, 1.0) << "worst element (" << worst_i << ", " << worst_j << "): error is "
                              << worst_ratio << " x the bound";
  std::printf("[ bf16gemm ] M=%lld N=%lld K=%lld: worst error %.3f of the bound\n",
              static_cast<long long>(c.m), static_cast<long long>(c.n), static_cast<long long>(c.k),
              worst_ratio);
}

TEST(GemmBf16, WithinTheRoundingBoundOnOddShapes) {
  TrackingAllocator alloc;
  // Odd sizes on purpose, the encoder's shapes (384 / 1152 / 1536), M across
  // the kernel's row blocks and past gemm_bf16.cc's 1024-row blocks (2100:
  // two full blocks and a tail); the same shapes again hit the plan cache.
  const Case cases[] = {{1, 7, 5},       {3, 33, 64},      {17, 384, 385},
                        {64, 1152, 384}, {129, 384, 1536}, {70, 1536, 384},
                        {1, 384, 384},   {17, 384, 385},   {2100, 20, 48}};
  for (const Case& c : cases) {
    check_case(c, alloc);
    if (IsSkipped()) return;  // no bf16 kernel on this CPU
  }
  EXPECT_EQ(alloc.live_bytes(), 0u);
  EXPECT_TRUE(alloc.leaks().empty());
}

TEST(GemmBf16, RejectsBadShapesWithoutWriting) {
  TrackingAllocator alloc;
  std::vector<float> w(4 * 8, 1.0f), x(2 * 8, 1.0f), y(2 * 4, kGuard);
  Bf16Weights bw;
  const Status made = Bf16Weights::create(w.data(), 4, 8, alloc, "test.weights", &bw);
  if (made.code() == StatusCode::kUnsupported) GTEST_SKIP() << made.to_string();
  ASSERT_TRUE(made.ok()) << made.to_string();
  size_t bytes = 0;
  ASSERT_TRUE(gemm_bf16_workspace_bytes(2, 8, bw, 4, &bytes).ok());
  std::vector<char> work(bytes);
  Status st = gemm_bf16_weights(2, x.data(), 7, bw, y.data(), 4, work.data(), bytes);  // ldx < k
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("ldx = 7"), std::string::npos) << st.message();
  st = gemm_bf16_weights(2, x.data(), 8, Bf16Weights(), y.data(), 4, work.data(), bytes);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  st = gemm_bf16_weights(2, x.data(), 8, bw, y.data(), 4, work.data(), bytes - 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("workspace"), std::string::npos) << st.message();
  for (float v : y) EXPECT_EQ(v, kGuard);
  EXPECT_EQ(Bf16Weights::create(w.data(), 0, 8, alloc, "test.weights", &bw).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera

// gelu_in_place (runtime/gelu.h) against GELU in double from std::erf.
#include "runtime/gelu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace tessera {
namespace {

double gelu64(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// The header's promise: |error| <= 1.2e-6 max(1, |x|).
void expect_close(float x, float got) {
  const double bound = 1.2e-6 * std::max(1.0, std::fabs(double{x}));
  EXPECT_LE(std::fabs(double{got} - gelu64(x)), bound) << "x = " << x << ", got " << got;
}

TEST(Gelu, DenseSweepWithinTheStatedError) {
  // Every 1e-4 over [-12, 12]: the fitted range, the clamp at 6 and past it.
  std::vector<float> x;
  for (int64_t i = -120000; i <= 120000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);
  std::vector<float> y = x;
  gelu_in_place(y.data(), static_cast<int64_t>(y.size()));
  double worst = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    expect_close(x[i], y[i]);
    worst = std::max(
        worst, std::fabs(double{y[i]} - gelu64(x[i])) / std::max(1.0, std::fabs(double{x[i]})));
  }
  RecordProperty("worst_scaled_error", std::to_string(worst));
}

TEST(Gelu, EveryLengthAndTailTheSame) {
  // Lengths 0..40 (whole vectors of 8 and 16 and every tail), a guard after
  // the end that must stay, and each element equal to the long run's.
  std::vector<float> ref(40);
  for (int i = 0; i < 40; ++i) ref[i] = 0.37f * static_cast<float>(i - 20);
  std::vector<float> whole = ref;
  gelu_in_place(whole.data(), 40);
  for (int64_t n = 0; n <= 40; ++n) {
    std::vector<float> v(ref.begin(), ref.begin() + n);
    v.push_back(1234.5f);  // guard
    gelu_in_place(v.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], whole[i]) << "n = " << n << ", i = " << i;
    ASSERT_EQ(v[n], 1234.5f) << "n = " << n << ": wrote past the end";
  }
}

TEST(Gelu, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,  -0.0f,  inf,    std::numeric_limits<float>::quiet_NaN(),
                          1e30f, -1e30f, 1e-30f, -50.0f};
  gelu_in_place(v.data(), static_cast<int64_t>(v.size()));
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_EQ(v[2], inf);
  EXPECT_TRUE(std::isnan(v[3]));
  EXPECT_EQ(v[4], 1e30f);  // erf = 1: x itself
  EXPECT_EQ(v[5], 0.0f);   // erf = -1: h - h
  EXPECT_NEAR(v[6], 0.5e-30f, 1e-36f);
  EXPECT_EQ(v[7], 0.0f);
}

}  // namespace
}  // namespace tessera

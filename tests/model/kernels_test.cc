#include "model/kernels.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "model/pooling.h"

namespace tessera::model {
namespace {

std::vector<float> random_vector(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

double gelu64(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }

// Every length 0..70 (vector bodies and tails), on an offset pointer.
TEST(Kernels, BiasGeluMatchesDoubleErf) {
  for (int64_t n = 0; n <= 70; ++n) {
    std::vector<float> x = random_vector(n + 1, 1 + n, 3.0f), bias = random_vector(n, 100 + n);
    std::vector<float> want(n);
    for (int64_t i = 0; i < n; ++i) want[i] = static_cast<float>(gelu64(double(x[i + 1]) + bias[i]));
    bias_gelu_row(x.data() + 1, bias.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(x[i + 1], want[i], 4e-7 + 4e-7 * std::fabs(want[i])) << n << ":" << i;
    }
  }
}

TEST(Kernels, GeluTailsAndSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {-12.0f, -5.0f, -1e-20f, 0.0f, 1e-20f, 5.0f, 12.0f, 1e30f, -1e30f};
  std::vector<float> zero(x.size(), 0.0f);
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = static_cast<float>(gelu64(x[i]));
  bias_gelu_row(x.data(), zero.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(x[i], want[i], 1e-6 * std::max(1.0f, std::fabs(want[i]))) << i;
  }
  std::vector<float> nan = {std::nanf(""), inf};
  bias_gelu_row(nan.data(), zero.data(), 2);
  EXPECT_TRUE(std::isnan(nan[0]));
  EXPECT_EQ(nan[1], inf);
}

void layer_norm64(const std::vector<double>& x, const float* g, const float* b, double eps,
                  std::vector<double>* out) {
  const size_t n = x.size();
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= n;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= n;
  out->resize(n);
  for (size_t i = 0; i < n; ++i) (*out)[i] = (x[i] - mean) / std::sqrt(var + eps) * g[i] + b[i];
}

TEST(Kernels, AddBiasResidualLayerNormMatchesDouble) {
  for (int64_t n : {1, 2, 7, 16, 33, 384, 385}) {
    auto x = random_vector(n, 1, 2.0f), y = random_vector(n, 2), bias = random_vector(n, 3);
    auto g = random_vector(n, 4), b = random_vector(n, 5);
    for (float& v : x) v += 10.0f;  // an offset mean must not hurt the variance
    std::vector<double> sum(n), want;
    for (int64_t i = 0; i < n; ++i) sum[i] = double(x[i]) + y[i] + bias[i];
    layer_norm64(sum, g.data(), b.data(), 1e-12, &want);
    add_bias_residual_layer_norm_row(x.data(), y.data(), bias.data(), g.data(), b.data(), 1e-12f, n);
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(x[i] - want[i]));
    EXPECT_LT(worst, 2e-5) << "n=" << n;
  }
}

TEST(Kernels, LayerNormOfAConstantRowIsBeta) {
  std::vector<float> x(10, 3.25f), g(10, 2.0f), b(10);
  for (int i = 0; i < 10; ++i) b[i] = 0.1f * i;
  layer_norm_row(x.data(), g.data(), b.data(), 1e-12f, 10);
  for (int i = 0; i < 10; ++i) EXPECT_FLOAT_EQ(x[i], b[i]);
}

TEST(Kernels, Sum3AndAddBias) {
  std::vector<float> a = {1, 2, 3}, b = {10, 20, 30}, c = {100, 200, 300}, x(3);
  sum3_row(x.data(), a.data(), b.data(), c.data(), 3);
  EXPECT_EQ(x, (std::vector<float>{111, 222, 333}));
  add_bias_row(x.data(), a.data(), 3);
  EXPECT_EQ(x, (std::vector<float>{112, 224, 336}));
}

TEST(Kernels, RowBlocksCoverEveryRowOnce) {
  ThreadPool pool(2);
  for (int64_t rows : {0, 1, 5, 1000, 1001}) {
    for (int64_t cost : {1, 1 << 20}) {
      std::vector<std::atomic<int>> seen(rows);
      for_row_blocks(pool, rows, cost, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) seen[r]++;
      });
      for (int64_t r = 0; r < rows; ++r) EXPECT_EQ(seen[r].load(), 1) << rows << "/" << r;
    }
  }
}

TEST(Pooling, ClsMeanMaxOverPackedSequences) {
  // Two sequences of 2 and 3 tokens, h = 2.
  const std::vector<float> hidden = {1, -1,  3, 5,   /* seq 0 */
                                     0, 2,  -6, 4,  9, 0 /* seq 1 */};
  const int32_t cu[] = {0, 2, 5};
  std::vector<float> out(4);
  pool_sequences(Pooling::kCls, hidden.data(), 2, cu, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{1, -1, 0, 2}));
  pool_sequences(Pooling::kMean, hidden.data(), 2, cu, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{2, 2, 1, 2}));
  pool_sequences(Pooling::kMax, hidden.data(), 2, cu, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{3, 5, 9, 4}));
}

TEST(Pooling, L2NormalizeRowsAndZeroRow) {
  std::vector<float> x = {3, 4, 0, 0};
  l2_normalize_rows(x.data(), 2, 2);
  EXPECT_FLOAT_EQ(x[0], 0.6f);
  EXPECT_FLOAT_EQ(x[1], 0.8f);
  EXPECT_EQ(x[2], 0.0f);  // no division by zero
  EXPECT_EQ(x[3], 0.0f);
}

}  // namespace
}  // namespace tessera::model

#include "model/kernels.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "model/heads/pooling.h"

namespace tessera::model {
namespace {

std::vector<float> random_vector(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
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

TEST(Kernels, LayerNormMatchesDouble) {
  for (int64_t n : {1, 2, 7, 16, 33, 384, 385}) {
    auto x = random_vector(n, 1, 2.0f), g = random_vector(n, 4), b = random_vector(n, 5);
    for (float& v : x) v += 10.0f;  // an offset mean must not hurt the variance
    std::vector<double> want;
    layer_norm64(std::vector<double>(x.begin(), x.end()), g.data(), b.data(), 1e-12, &want);
    layer_norm_row(x.data(), g.data(), b.data(), 1e-12f, n);
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

TEST(Kernels, Sum3) {
  std::vector<float> a = {1, 2, 3}, b = {10, 20, 30}, c = {100, 200, 300}, x(3);
  sum3_row(x.data(), a.data(), b.data(), c.data(), 3);
  EXPECT_EQ(x, (std::vector<float>{111, 222, 333}));
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

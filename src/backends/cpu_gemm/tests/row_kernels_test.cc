// The softmax and conversion rows of cpu.gemm, on every SIMD target Highway
// compiled and this CPU runs, for every length 0..3 vectors, against double.
#include "cpu_gemm/row_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"

namespace tessera::cpu_gemm {
namespace {

constexpr int64_t kMaxLen = 3 * 16 + 5;  // three AVX-512 vectors and a tail
constexpr float kInf = std::numeric_limits<float>::infinity();

float score(int64_t j) { return std::sin(0.7 * static_cast<double>(j)) * 6.0; }

class RowKernels : public hwy::TestWithParamTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(RowKernels);

TEST_P(RowKernels, SoftmaxMatchesDoubleForEveryLengthAndWindow) {
  for (int64_t n = 0; n <= kMaxLen; ++n) {
    for (const auto& [lo, hi] : {std::pair<int64_t, int64_t>{0, n}, {n / 3, n - n / 4}}) {
      std::vector<float> s(n), bias(n);
      for (int64_t j = 0; j < n; ++j) {
        s[j] = score(j), bias[j] = 0.25f * static_cast<float>(j % 3);
      }
      const float softcap = n % 2 ? 5.0f : 0.0f;
      const RowSoftmax r = softmax_row(s.data(), n, lo, hi, softcap, bias.data(), 1);
      std::vector<double> want(n, 0.0);
      double max = -INFINITY, sum = 0;
      for (int64_t j = lo; j < hi; ++j) {
        double x = score(j);
        if (softcap > 0) {
          x = softcap * std::tanh(x / softcap);
        }
        want[j] = x + bias[j];
        max = std::max(max, want[j]);
      }
      for (int64_t j = lo; j < hi; ++j) {
        sum += (want[j] = std::exp(want[j] - max));
      }
      if (hi <= lo) {
        EXPECT_TRUE(r.fully_masked) << n;
        EXPECT_EQ(r.lse, -kInf);
      } else {
        EXPECT_FALSE(r.fully_masked);
        EXPECT_NEAR(r.lse, max + std::log(sum), 1e-5 * (1 + std::abs(max))) << n;
        EXPECT_NEAR(r.out_scale, 1.0 / sum, 1e-5 / sum) << n;
      }
      for (int64_t j = 0; j < n; ++j) {
        EXPECT_NEAR(s[j], want[j], 2e-6)
            << "n=" << n << " j=" << j << " window " << lo << "," << hi;
      }
    }
  }
}

TEST_P(RowKernels, NaNAnywhereMakesTheRowNaN) {
  for (int64_t n = 1; n <= kMaxLen; n += 7) {
    for (int64_t at = 0; at < n; at += 3) {
      std::vector<float> s(n, 1.0f);
      s[at] = std::numeric_limits<float>::quiet_NaN();
      const RowSoftmax r = softmax_row(s.data(), n, 0, n, 0.0f, nullptr, 0);
      EXPECT_TRUE(std::isnan(r.out_scale)) << n << " " << at;
      EXPECT_TRUE(std::isnan(r.lse));
      EXPECT_FALSE(r.fully_masked);
    }
  }
}

TEST_P(RowKernels, MinusInfinityBiasMasksAndAllMaskedIsZero) {
  const int64_t n = 37;
  std::vector<float> s(n, 2.0f), bias(n, -kInf);
  bias[5] = 0.0f;
  RowSoftmax r = softmax_row(s.data(), n, 0, n, 0.0f, bias.data(), 1);
  EXPECT_FLOAT_EQ(r.out_scale, 1.0f);
  EXPECT_FLOAT_EQ(r.lse, 2.0f);
  for (int64_t j = 0; j < n; ++j) {
    EXPECT_EQ(s[j], j == 5 ? 1.0f : 0.0f) << j;
  }

  const float all_masked = -kInf;
  std::fill(s.begin(), s.end(), 3.0f);
  r = softmax_row(s.data(), n, 0, n, 0.0f, &all_masked, 0);  // stride 0: broadcast
  EXPECT_TRUE(r.fully_masked);
  EXPECT_EQ(r.lse, -kInf);
  for (float x : s) {
    EXPECT_EQ(x, 0.0f);
  }
}

TEST_P(RowKernels, RowToF32ConvertsEveryDtypeAndStride) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (int64_t stride : {1, 3}) {
      for (int64_t n = 0; n <= kMaxLen; ++n) {
        std::vector<uint8_t> raw(static_cast<size_t>((n * stride + 1) * 4));
        std::vector<float> want(n), got(n, -1.0f);
        for (int64_t j = 0; j < n; ++j) {
          want[j] = round_to_dtype(score(j), dtype);
          store_from_f32(raw.data(), j * stride, dtype, want[j]);
        }
        row_to_f32(raw.data(), dtype, n, stride, got.data());
        for (int64_t j = 0; j < n; ++j) {
          EXPECT_EQ(got[j], want[j]) << dtype_name(dtype) << " n=" << n << " j=" << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessera::cpu_gemm

// The elementwise steps of the rotary and gated layers against double-precision
// formulas: RMSNorm, the gated activations (polynomial exp / erf), and the
// one-pass q/k RMSNorm + rotary (f32 and bf16 rows, grouped-query widths).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "model/kernels.h"
#include "model/layers/gated_activation.h"
#include "model/layers/rotary.h"
#include "tessera/context.h"

namespace tessera::model {
namespace {

std::vector<float> normal_values(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

double exact_activation(Activation act, double x) {
  switch (act) {
    case Activation::kSilu:
      return x / (1.0 + std::exp(-x));
    case Activation::kGeluTanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::kGelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  }
  return 0;
}

TEST(LayerKernels, RmsNormMatchesDouble) {
  for (int64_t n : {1, 8, 16, 33, 128, 1024}) {
    const auto x = normal_values(n, 3, 3.0f), g = normal_values(n, 4);
    std::vector<float> y(n);
    rms_norm_row_to(x.data(), y.data(), g.data(), 1e-6f, n);
    double sq = 0;
    for (float v : x) sq += double(v) * v;
    const double r = 1.0 / std::sqrt(sq / n + 1e-6);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(y[i], x[i] * r * g[i], 2e-6 * (1 + std::abs(x[i] * r * g[i]))) << n << " " << i;
    }
  }
}

TEST(LayerKernels, ActivationsMatchDoubleAcrossTheRange) {
  for (Activation act : {Activation::kSilu, Activation::kGeluTanh, Activation::kGelu}) {
    double worst = 0;
    for (double x = -30.0; x <= 30.0; x += 0.001) {
      const double want = exact_activation(act, x);
      const double got = activation_value(act, static_cast<float>(x));
      // Relative to max(|f(x)|, 1e-3): exact near 0 in absolute terms too.
      worst = std::max(worst, std::abs(got - want) / std::max(std::abs(want), 1e-3));
    }
    EXPECT_LT(worst, 2e-6) << activation_name(act);
    EXPECT_EQ(activation_value(act, 0.0f), 0.0f);
    EXPECT_NEAR(activation_value(act, -200.0f), 0.0f, 1e-30);
    EXPECT_NEAR(activation_value(act, 200.0f), 200.0f, 1e-4);
  }
}

TEST(LayerKernels, GatedRowsInF32AndBf16) {
  Context ctx;
  const int64_t rows = 37, width = 70;
  const auto in = normal_values(rows * 2 * width, 9, 2.0f);
  std::vector<float> out(rows * width);
  gated_activation(ctx.pool(), Activation::kSilu, DType::kF32, in.data(), rows, width, out.data());
  std::vector<uint16_t> in16(in.size()), out16(out.size());
  for (size_t i = 0; i < in.size(); ++i) in16[i] = f32_to_bf16(in[i]);
  gated_activation(ctx.pool(), Activation::kSilu, DType::kBF16, in16.data(), rows, width,
                   out16.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < width; ++i) {
      const double g = in[r * 2 * width + i], u = in[r * 2 * width + width + i];
      const double want = exact_activation(Activation::kSilu, g) * u;
      EXPECT_NEAR(out[r * width + i], want, 1e-5 * (1 + std::abs(want)));
      const double g16 = bf16_to_f32(in16[r * 2 * width + i]);
      const double u16 = bf16_to_f32(in16[r * 2 * width + width + i]);
      const double want16 = exact_activation(Activation::kSilu, g16) * u16;
      EXPECT_NEAR(bf16_to_f32(out16[r * width + i]), want16, 8e-3 * (1 + std::abs(want16)));
    }
  }
}

// One [T, (hq + 2 hkv) d] block: Q and K heads normalized and rotated by
// position as HF's rotate_half does in double; V untouched.
void check_prepare(DType type) {
  Context ctx;
  const int hq = 4, hkv = 2, d = 16, rot = 12;  // partial rotary: the first 12 dims
  const int64_t tokens = 9, width = (hq + 2 * hkv) * d;
  const auto x = normal_values(tokens * width, 11, 1.5f);
  const auto qn = normal_values(d, 12), kn = normal_values(d, 13);
  std::vector<int32_t> positions(tokens);
  // Small positions: at large ones the f32 angle (rounded as torch rounds it)
  // differs from the exact one by ~p * 6e-8 rad, a property of the recipe.
  for (int64_t t = 0; t < tokens; ++t) positions[t] = static_cast<int32_t>((t * 37) % 300);
  LayerAttention a;
  a.rope_theta = 10000.0f;
  a.rope_linear_factor = 2.0f;
  const int64_t table = 4000;
  std::vector<float> cos(table * rot / 2), sin(table * rot / 2);
  fill_rotary_table(rot, a, table, cos.data(), sin.data());
  QkPrepare p;
  p.hq = hq;
  p.hkv = hkv;
  p.d = d;
  p.q_norm = qn.data();
  p.k_norm = kn.data();
  p.eps = 1e-6f;
  p.rope = {cos.data(), sin.data(), rot};
  std::vector<float> f32 = x;
  std::vector<uint16_t> b16(x.size());
  for (size_t i = 0; i < x.size(); ++i) b16[i] = f32_to_bf16(x[i]);
  if (type == DType::kF32) {
    prepare_qk(ctx.pool(), p, type, f32.data(), tokens, positions.data());
  } else {
    prepare_qk(ctx.pool(), p, type, b16.data(), tokens, positions.data());
  }
  const double tol = type == DType::kF32 ? 2e-5 : 2e-2;
  for (int64_t t = 0; t < tokens; ++t) {
    for (int h = 0; h < hq + 2 * hkv; ++h) {
      std::vector<double> v(d);
      for (int i = 0; i < d; ++i) {
        v[i] = type == DType::kF32 ? x[t * width + h * d + i]
                                   : bf16_to_f32(b16[t * width + h * d + i]);
      }
      std::vector<double> want = v;
      if (h < hq + hkv) {
        if (type == DType::kBF16) {
          for (int i = 0; i < d; ++i) v[i] = bf16_to_f32(f32_to_bf16(x[t * width + h * d + i]));
        }
        const float* w = h < hq ? qn.data() : kn.data();
        double sq = 0;
        for (double e : v) sq += e * e;
        const double r = 1.0 / std::sqrt(sq / d + 1e-6);
        for (int i = 0; i < d; ++i) v[i] *= r * w[i];
        want = v;
        for (int i = 0; i < rot / 2; ++i) {
          const double inv = 1.0 / std::pow(10000.0, 2.0 * i / rot) / 2.0;
          const double angle = positions[t] * inv;
          want[i] = v[i] * std::cos(angle) - v[i + rot / 2] * std::sin(angle);
          want[i + rot / 2] = v[i + rot / 2] * std::cos(angle) + v[i] * std::sin(angle);
        }
      }
      for (int i = 0; i < d; ++i) {
        const double got = type == DType::kF32 ? f32[t * width + h * d + i]
                                               : bf16_to_f32(b16[t * width + h * d + i]);
        EXPECT_NEAR(got, want[i], tol * (1 + std::abs(want[i])))
            << "token " << t << " head " << h << " dim " << i;
      }
    }
  }
}

TEST(LayerKernels, QkNormAndRotaryInOnePassF32) { check_prepare(DType::kF32); }
TEST(LayerKernels, QkNormAndRotaryInOnePassBf16) { check_prepare(DType::kBF16); }

}  // namespace
}  // namespace tessera::model

#include "model/layers/gated_activation.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/kernels.h"

namespace tessera::model {

namespace {

// exp(x) = 2^k * exp(r), r = x - k ln2 in [-ln2/2, ln2/2], exp(r) by a
// degree-6 Taylor polynomial (relative error < 2e-7 there); clamped so that
// 2^k stays a normal float (a NaN clamps to -87, as fmin/fmax did). std::max
// / std::min, not std::fmax / std::fmin: GCC calls libm for those without
// -ffinite-math-only, which kept these loops scalar (two calls per element).
inline float fast_exp(float x) {
  x = std::min(88.0f, std::max(-87.0f, x));
  const float k = std::nearbyint(x * 1.44269504088896341f);
  const float r = std::fma(k, -0.693145751953125f, std::fma(k, -1.428606765330187e-06f, x));
  float p = 1.0f / 720.0f;
  p = std::fma(p, r, 1.0f / 120.0f);
  p = std::fma(p, r, 1.0f / 24.0f);
  p = std::fma(p, r, 1.0f / 6.0f);
  p = std::fma(p, r, 0.5f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

// erfc(z) for z >= 0 by the Chebyshev fit of Numerical Recipes' erfcc
// (fractional error < 1.2e-7 everywhere): GELU's negative side is a small
// erfc, where 1 + erf(x) would cancel.
inline float fast_erfc_nonnegative(float z) {
  const float t = 1.0f / std::fma(0.5f, z, 1.0f);
  float p = 0.17087277f;
  p = std::fma(p, t, -0.82215223f);
  p = std::fma(p, t, 1.48851587f);
  p = std::fma(p, t, -1.13520398f);
  p = std::fma(p, t, 0.27886807f);
  p = std::fma(p, t, -0.18628806f);
  p = std::fma(p, t, 0.09678418f);
  p = std::fma(p, t, 0.37409196f);
  p = std::fma(p, t, 1.00002368f);
  p = std::fma(p, t, -1.26551223f);
  return t * fast_exp(std::fma(-z, z, p));
}

inline float apply(Activation act, float x) {
  switch (act) {
    case Activation::kSilu:
      return x / (1.0f + fast_exp(-x));
    case Activation::kGeluTanh: {
      // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3).
      const float u = 0.7978845608028654f * std::fma(0.044715f * x, x * x, x);
      return x / (1.0f + fast_exp(-2.0f * u));
    }
    case Activation::kGelu: {
      // 0.5 x (1 + erf(x / sqrt2)) = 0.5 x erfc(-x / sqrt2).
      const float z = x * 0.7071067811865476f;
      const float e = fast_erfc_nonnegative(std::fabs(z));
      return 0.5f * x * (z >= 0.0f ? 2.0f - e : e);
    }
  }
  return x;
}

template <Activation kAct>
TESSERA_MODEL_CLONES void gated_row_f32(const float* gate, const float* up, float* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = apply(kAct, gate[i]) * up[i];
}

template <Activation kAct>
TESSERA_MODEL_CLONES void gated_row_bf16(const uint16_t* gate, const uint16_t* up, uint16_t* out,
                                         int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    out[i] = f32_to_bf16(apply(kAct, bf16_to_f32(gate[i])) * bf16_to_f32(up[i]));
  }
}

template <Activation kAct>
void run_rows(ThreadPool& pool, DType type, const void* in, int64_t rows, int64_t width,
              void* out) {
  for_row_blocks(pool, rows, 3 * width, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (type == DType::kBF16) {
        const auto* row = static_cast<const uint16_t*>(in) + r * 2 * width;
        gated_row_bf16<kAct>(row, row + width, static_cast<uint16_t*>(out) + r * width, width);
      } else {
        const auto* row = static_cast<const float*>(in) + r * 2 * width;
        gated_row_f32<kAct>(row, row + width, static_cast<float*>(out) + r * width, width);
      }
    }
  });
}

}  // namespace

void gated_activation(ThreadPool& pool, Activation act, DType type, const void* in, int64_t rows,
                      int64_t width, void* out) {
  switch (act) {
    case Activation::kSilu:
      return run_rows<Activation::kSilu>(pool, type, in, rows, width, out);
    case Activation::kGeluTanh:
      return run_rows<Activation::kGeluTanh>(pool, type, in, rows, width, out);
    case Activation::kGelu:
      return run_rows<Activation::kGelu>(pool, type, in, rows, width, out);
  }
}

float activation_value(Activation act, float x) { return apply(act, x); }

}  // namespace tessera::model

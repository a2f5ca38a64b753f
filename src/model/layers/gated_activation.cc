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

// erf by Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7).
inline float fast_erf(float x) {
  const float a = std::fabs(x);
  const float t = 1.0f / std::fma(0.3275911f, a, 1.0f);
  float p = 1.061405429f;
  p = std::fma(p, t, -1.453152027f);
  p = std::fma(p, t, 1.421413741f);
  p = std::fma(p, t, -0.284496736f);
  p = std::fma(p, t, 0.254829592f);
  const float y = 1.0f - p * t * fast_exp(-a * a);
  return std::copysign(y, x);
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
    case Activation::kGelu:
      return 0.5f * x * (1.0f + fast_erf(x * 0.7071067811865476f));
  }
  return x;
}

template <Activation kAct>
TESSERA_MODEL_CLONES void gated_row_f32(const float* gate, const float* up, float* out,
                                        int64_t n) {
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

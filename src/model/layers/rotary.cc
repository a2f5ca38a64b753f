#include "model/layers/rotary.h"

#include <cmath>
#include <vector>

#include "model/kernels.h"

namespace tessera::model {

namespace {

// One head of d values, f32, in place.
TESSERA_MODEL_CLONES void prepare_head(float* x, const float* norm, float eps, int d,
                                       const float* cos, const float* sin, int half) {
  if (norm != nullptr) rms_norm_row_to(x, x, norm, eps, d);
#pragma omp simd
  for (int i = 0; i < half; ++i) {
    const float a = x[i], b = x[i + half];
    x[i] = a * cos[i] - b * sin[i];
    x[i + half] = b * cos[i] + a * sin[i];
  }
}

}  // namespace

void fill_rotary_table(int dim, const LayerAttention& a, int64_t positions, float* cos,
                       float* sin) {
  const int half = dim / 2;
  std::vector<float> inv_freq(half);
  for (int i = 0; i < half; ++i) {
    // torch: 1.0 / (base ** (arange(0, dim, 2).float() / dim)), all in f32.
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(dim);
    inv_freq[i] = (1.0f / std::pow(a.rope_theta, exponent)) / a.rope_linear_factor;
  }
  for (int64_t p = 0; p < positions; ++p) {
    for (int i = 0; i < half; ++i) {
      const float angle = static_cast<float>(p) * inv_freq[i];
      cos[p * half + i] = static_cast<float>(std::cos(static_cast<double>(angle)));
      sin[p * half + i] = static_cast<float>(std::sin(static_cast<double>(angle)));
    }
  }
}

void prepare_qk(ThreadPool& pool, const QkPrepare& p, DType type, void* qkv, int64_t tokens,
                const int32_t* positions) {
  const int heads = p.hq + p.hkv;  // Q's heads, then K's; V follows untouched
  const int64_t width = static_cast<int64_t>(p.hq + 2 * p.hkv) * p.d;
  const int half = p.rope.dim / 2;
  for_row_blocks(pool, tokens, int64_t{2} * heads * p.d, [&](int64_t t0, int64_t t1) {
    std::vector<float> staged(type == DType::kBF16 ? p.d : 0);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t pos = positions[t];
      const float* cos = half > 0 ? p.rope.cos + pos * half : nullptr;
      const float* sin = half > 0 ? p.rope.sin + pos * half : nullptr;
      for (int h = 0; h < heads; ++h) {
        const float* norm = h < p.hq ? p.q_norm : p.k_norm;
        const int64_t at = t * width + static_cast<int64_t>(h) * p.d;
        if (type == DType::kBF16) {
          uint16_t* x = static_cast<uint16_t*>(qkv) + at;
          for (int i = 0; i < p.d; ++i) staged[i] = bf16_to_f32(x[i]);
          prepare_head(staged.data(), norm, p.eps, p.d, cos, sin, half);
          for (int i = 0; i < p.d; ++i) x[i] = f32_to_bf16(staged[i]);
        } else {
          prepare_head(static_cast<float*>(qkv) + at, norm, p.eps, p.d, cos, sin, half);
        }
      }
    }
  });
}

}  // namespace tessera::model

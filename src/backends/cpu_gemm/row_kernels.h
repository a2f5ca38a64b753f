// Row kernels of cpu.gemm: the softmax between the two GEMMs and the
// conversions of q/k/v rows to f32. SIMD through Highway, dispatched at run
// time to the best target this CPU has (AVX-512, AVX2, SSE4, NEON, scalar).
#pragma once

#include <cstdint>

#include "tessera/dtype.h"

namespace tessera::cpu_gemm {

// What the caller does with a row once its probabilities are in place.
struct RowSoftmax {
  // Multiply the row of P*V by this: 1/sum of exp; NaN when a score was NaN.
  float out_scale = 0.0f;
  // Natural-log log-sum-exp of the final scores; -inf when no key is visible.
  float lse = 0.0f;
  // No visible key (or every score -inf): the output row is zeros.
  bool fully_masked = false;
};

// One score row s[0, n) (already multiplied by the scale), restricted to the
// visible columns [lo, hi). In place:
//   s = softcap * tanh(s / softcap)  if softcap > 0
//   s += bias[j * bias_stride]       if bias (stride 0 broadcasts one value)
//   s = exp(s - max) inside [lo, hi), 0 outside  (unnormalized probabilities)
RowSoftmax softmax_row(float* s, int64_t n, int64_t lo, int64_t hi, float softcap,
                       const float* bias, int64_t bias_stride);

// dst[0, n) = src elements 0, stride, 2*stride, ... of `dtype`, as f32.
void row_to_f32(const void* src, DType dtype, int64_t n, int64_t stride, float* dst);

}  // namespace tessera::cpu_gemm

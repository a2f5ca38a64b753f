// GELU in its exact erf form, vectorized through glibc's libmvec erfcf (its
// SIMD variants are declared only under -ffast-math, which CMake sets for this
// file alone; see docs/DECISIONS.md). Accuracy is checked against a double
// erf in tests/model/kernels_test.cc.
#include <cmath>

#include "model/kernels.h"

namespace tessera::model {

namespace {
constexpr float kInvSqrt2 = 0.70710678118654752440f;
}  // namespace

TESSERA_MODEL_CLONES
void bias_gelu_row(float* x, const float* bias, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] + bias[i];
    // 1 + erf(z) = erfc(-z): no cancellation for v << 0, where libmvec's
    // AVX-512 erff rounds to -1 and 1 + erff lost the whole tail (GELU(-5)
    // came out 0 instead of -1.4e-6).
    x[i] = 0.5f * v * erfcf(-v * kInvSqrt2);
  }
}

}  // namespace tessera::model

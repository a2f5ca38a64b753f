// GELU in its exact erf form, vectorized through glibc's libmvec erff (its
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
    x[i] = 0.5f * v * (1.0f + erff(v * kInvSqrt2));
  }
}

}  // namespace tessera::model

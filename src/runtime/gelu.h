// Exact-erf GELU over f32 rows, for linear()'s GELU epilogue (gemm_packed.cc,
// gemm_int8.cc) on an output block still in L2. Internal to runtime/.
#pragma once

#include <cstdint>

namespace tessera {

// v[i] <- 0.5 v[i] (1 + erf(v[i] / sqrt 2)) for i in [0, n). Absolute error
// at most 1.2e-6 max(1, |v|) (a few ulps of the result); NaN stays NaN.
void gelu_in_place(float* v, int64_t n);

}  // namespace tessera

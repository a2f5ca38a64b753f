// Bulk f32 <-> bf16 conversion of activations (int8 linear()'s bf16 input and
// output, gemm_int8.cc). Internal to runtime/.
#pragma once

#include <cstdint>

namespace tessera {

// out[i] = bf16(in[i]), or bf16(in[i] + bf16 out[i]) with `add`, rounded as
// f32_to_bf16 (tessera/dtype.h: nearest even, NaN stays NaN).
void f32_to_bf16_rows(const float* in, int64_t n, bool add, uint16_t* out);

// out[i] = f32(in[i]) (exact).
void bf16_to_f32_rows(const uint16_t* in, int64_t n, float* out);

}  // namespace tessera

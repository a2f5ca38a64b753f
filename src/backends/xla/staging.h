// Copies between the caller's strided host views and the dense row-major
// tiles the program takes and returns. Elements keep their dtype (no
// conversion here: the program converts to f32 itself). Padding is zeroed:
// padded keys are masked by the program, padded query rows are dropped.
#pragma once

#include <cstdint>

#include "tessera/attention.h"

namespace tessera::xla {

// t [B, S, H, X]: dst [rows_padded, H, X] <- t[b, row_begin + r, :, :] for r < rows.
void gather_rows(const TensorView& t, int64_t b, int64_t row_begin, int64_t rows,
                 int64_t rows_padded, void* dst);
// src [rows_padded, H, X] -> t[b, row_begin + r, :, :] for r < rows.
void scatter_rows(const void* src, const TensorView& t, int64_t b, int64_t row_begin, int64_t rows);

// The bias tile of sequence `seq` as the program takes it, f32 [Hq, tq, sk]:
// rows q0 .. q0+rows of the sequence, keys 0 .. k_len; zero elsewhere.
// Broadcast dimensions (size 1) are expanded here.
void gather_bias(const TensorView& bias, int64_t seq, int64_t hq, int64_t q0, int64_t rows,
                 int64_t tq, int64_t k_len, int64_t sk, float* dst);

// src f32 [Hq, tq] -> lse[b, h, row_begin + r] for r < rows.
void scatter_lse(const float* src, int64_t tq, const TensorView& lse, int64_t b, int64_t row_begin,
                 int64_t rows);

}  // namespace tessera::xla

// The activation side of int8 linear() (gemm_int8.cc): the rotation x H and
// the per-row u8 quantization, generic loops (every CPU with an int8 dot
// product) and an AVX-512 path. Internal to runtime/.
#pragma once

#include <cstdint>

#include "tessera/dtype.h"

// The per-element passes, compiled for AVX-512 and AVX2 (every CPU that runs
// int8 has one of them) besides the baseline.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TESSERA_INT8_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TESSERA_INT8_CLONES
#endif

namespace tessera::int8_quantize {

// Rows per product (gemm_int8.cc says why 64): the u8 block quantize_rows
// fills, padded with zero rows.
constexpr int64_t kInt8Rows = 64;

// The rotation's block for K: the largest power of two dividing k, at most 1024.
int64_t rotation_block(int64_t k);

// v[0, k) <- v H: H block-diagonal, each block the orthonormal Walsh-Hadamard
// matrix of `block` (symmetric, H H = I, so the same call rotates back).
void rotate(float* v, int64_t k, int64_t block);

// Rows [0, rows) of x [rows, k] (f32 or bf16) -> x H -> u8 `q` [kInt8Rows,
// k]; scale and zero point of row r at params[2r], params[2r + 1] (x H ~
// scale (q - zero)). Padding rows: zeros, scale 0. `row`: k floats of scratch.
void quantize_rows(const void* x, DType x_type, int64_t rows, int64_t k, uint8_t* q,
                   float* params, float* row);

}  // namespace tessera::int8_quantize

// Elementwise stages of the encoder on one row of n floats. Rows are split
// over threads by the caller (see for_row_blocks). Each kernel is compiled for
// AVX-512, AVX2 and baseline x86-64 and picked at load time (target_clones).
#pragma once

#include <cstdint>
#include <functional>

#include "tessera/thread_pool.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TESSERA_MODEL_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TESSERA_MODEL_CLONES
#endif

namespace tessera::model {

// x[0..n) = LayerNorm(x) * gamma + beta (biased variance, as torch); beta
// may be nullptr (LayerNorm(bias=False)).
void layer_norm_row(float* x, const float* gamma, const float* beta, float eps, int64_t n);
// y[0..n) = LayerNorm(x) * gamma + beta, x unchanged (y == x: in place).
void layer_norm_row_to(const float* x, float* y, const float* gamma, const float* beta, float eps,
                       int64_t n);
// y[0..n) = x / sqrt(mean(x^2) + eps) * gamma (torch's RMSNorm; y == x: in place).
void rms_norm_row_to(const float* x, float* y, const float* gamma, float eps, int64_t n);

// x[0..n) = word + position + token_type (the three embedding rows); c may
// be nullptr (architectures without token types).
void sum3_row(float* x, const float* a, const float* b, const float* c, int64_t n);

// acc[v] = max(acc[v], log(1 + max(logits[v], 0))) for v < n (SPLADE).
void splade_max_row(float* acc, const float* logits, int64_t n);

// fn(r0, r1) over [0, rows) in blocks, on the pool's threads when the work
// (rows * cost_per_row, in floats touched) is worth splitting.
void for_row_blocks(ThreadPool& pool, int64_t rows, int64_t cost_per_row,
                    const std::function<void(int64_t, int64_t)>& fn);

}  // namespace tessera::model

// Pooling of packed token states into one vector per sequence, as
// sentence-transformers' Pooling module computes it, and L2 normalization.
#pragma once

#include <cstdint>

#include "model/config.h"

namespace tessera::model {

// hidden: [total_tokens, h] packed; sequence s owns rows cu_seqlens[s] ..
// cu_seqlens[s+1] (non-empty). out: [count, h].
//   cls: the first token's row; mean: the average of the rows; max: per-column max;
//   lasttoken: the last token's row (decoder embedders, whose last token saw the whole text).
void pool_sequences(Pooling mode, const float* hidden, int64_t h, const int32_t* cu_seqlens,
                    int64_t count, float* out);

// x[r] /= max(||x[r]||_2, 1e-12) for each of `rows` rows of n (torch's F.normalize).
void l2_normalize_rows(float* x, int64_t rows, int64_t n);

}  // namespace tessera::model

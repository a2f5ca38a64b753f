// The gated FFN's middle step (SwiGLU, GeGLU): out = act(gate) * up, where
// the FFN's first product wrote each token's row as [gate | up] (2I wide)
// and out is I wide. One pass over the rows, split over the pool's threads.
// The activations use short polynomial exp / erfc (relative error ~1e-7,
// vectorized), not libm's scalar calls: at long sequences this pass touches
// T x I elements per layer and libm's expf alone would cost ~20% of the
// layer.
#pragma once

#include <cstdint>

#include "model/config.h"
#include "tessera/dtype.h"
#include "tessera/thread_pool.h"

namespace tessera::model {

// in: [rows, 2 * width] of `type` (f32 or bf16), out: [rows, width] of `type`.
void gated_activation(ThreadPool& pool, Activation act, DType type, const void* in, int64_t rows,
                      int64_t width, void* out);

// One value of each activation, f32, as gated_activation computes it (for tests).
float activation_value(Activation act, float x);

}  // namespace tessera::model

// sentence-transformers' Dense modules after pooling (model/config.h,
// DenseModule): each pooled row goes through y = act(x W^T + b), then
// y += x (or x R^T when the widths differ) with use_residual, as
// sentence_transformers.base.modules.dense.Dense computes it.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "runtime/gemm.h"
#include "tessera/allocator.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::model {

struct DenseWeights {
  PackedWeights linear;    // [out, in]
  PackedWeights residual;  // [out, in]; empty without use_residual or when in == out
  Buffer bias;             // [out] f32; empty without a bias
};

// Reads d.dir/model.safetensors (linear.weight, linear.bias, residual.weight),
// each checked against d's shape; weights in tracked memory.
Status load_dense_weights(const DenseModule& d, TrackingAllocator& alloc, DenseWeights* out);

// Runs `modules` in order over `rows` pooled rows: x is [rows,
// modules[0].in_features], y [rows, modules.back().out_features]. Working
// memory from ctx ("model.activations").
Status run_dense(const std::vector<DenseModule>& modules, const std::vector<DenseWeights>& weights,
                 const float* x, int64_t rows, Context& ctx, float* y);

}  // namespace tessera::model

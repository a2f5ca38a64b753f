// MPNet's relative-position attention bias (the T5 bucket scheme, both
// directions), as an additive bias for the attention contract: computed once
// per batch and shared by every layer, never a second attention path.
#pragma once

#include <cstdint>

#include "model/layers/forward_pass.h"
#include "tessera/allocator.h"
#include "tessera/tensor.h"

namespace tessera::model {

// The bucket HF's MPNet gives a key `relative` = key - query positions away:
// half the buckets for keys before the query, half for keys after; within
// each half, exact distances below a quarter of the buckets, then
// logarithmic up to `max_distance`, clamped. Computed in float32 as torch
// does, so bucket edges agree.
int relative_position_bucket(int64_t relative, int num_buckets, int max_distance);

// The bias of query i and key j in head h, table[bucket(j - i), h], for
// i, j < s, written query-major: out[(h * s + j) * s + i], i.e. a dense f32
// [heads, keys, queries] block, viewed by the attention contract as
// [1, heads, Sq, Sk] with strides {.., s * s, 1, s}. Query-major because
// cpu.flash holds a tile's scores with the queries in SIMD lanes: its bias
// is then one vector load, not a gather (docs/DECISIONS.md). table:
// [num_buckets, heads] (the checkpoint's relative_attention_bias.weight).
void fill_relative_position_bias(const float* table, int num_buckets, int max_distance, int heads,
                                 int64_t s, float* out);

// The bias of one batch: a single [1, heads, S, S] block for its longest
// sequence (relative positions make each shorter sequence's bias its
// top-left corner), from weights.relative_attention_bias and the config's
// buckets, in tracked memory ("model.activations") until destroyed.
class RelativePositionBias {
 public:
  Status build(const ForwardPass& f);
  // For PackedBatch::attention_bias: query stride 1 (query-major, above).
  const TensorView& view() const { return view_; }

 private:
  Buffer memory_;
  TensorView view_;
};

}  // namespace tessera::model

// One forward pass as the encoder (encoder.cc) hands it to an architecture's
// forward() (architectures/architecture.h): the packed batch and its ids,
// the weights, the scratch every layer reuses, and where attention runs. An
// architecture composes its forward from the parts here and in layers/
// (the post-norm and pre-norm layer kinds, rotary tables, the relative
// position bias), as llama.cpp's per-architecture graph builders compose
// shared helpers; the encoder keeps what is the same for all of them
// (checking and packing the input, the working memory, pooling and heads).
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/layers/layer_parts.h"
#include "model/layers/rotary.h"
#include "model/weights.h"
#include "tessera/allocator.h"
#include "tessera/context.h"
#include "tessera/dispatcher.h"

namespace tessera::model {

struct ForwardPass {
  const NetworkConfig& config;
  const NetworkWeights& weights;
  const std::vector<std::vector<int32_t>>& ids;
  const std::vector<std::vector<int32_t>>* type_ids;  // null: every type id 0
  PackedBatch& batch;  // an architecture may set batch.attention_bias
  const LayerScratch& scratch;
  int64_t longest = 0;  // tokens of the longest sequence
  Dispatcher& attention;
  Context& ctx;
};

// The cos / sin tables of one batch: one per distinct (theta, factor) among
// the layers (ModernBERT: its global and its local base), [longest, dim/2]
// each, in tracked memory ("model.activations") until destroyed.
class RotaryTables {
 public:
  Status build(const ForwardPass& f);
  RotaryTable of_layer(int layer) const { return tables_[table_of_[layer]]; }

 private:
  Buffer memory_;
  std::vector<RotaryTable> tables_;
  std::vector<size_t> table_of_;  // per layer
};

// hidden[t] = norm(word[id] + position[p + offset] + token_type[type]), each
// term where the weights have it (position_embeddings, token_type_embeddings,
// embeddings_ln_gamma); offset is config.position_offset.
void embed_tokens(const ForwardPass& f);

// A layer kind: layers/encoder_layer.h (post-norm), pre_norm_layer.h.
using LayerForward = Status (*)(const LayerRun& run);

// Runs `layer` on every layer in order, each with its rotary table from
// `rope` (null: no rotation).
Status run_layers(const ForwardPass& f, LayerForward layer, const RotaryTables* rope = nullptr);

// hidden = final_norm(hidden) (pre-norm architectures: the residual stream
// is normalized once after the last layer).
void run_final_norm(const ForwardPass& f);

// The rotary architectures' whole forward (NomicBERT, GTE: post-norm;
// ModernBERT, Qwen2, Qwen3, EuroBERT: pre-norm): the rotary tables, the
// embeddings, `layer` on every layer, and the final norm where
// config.final_norm says the model has one.
Status run_rotary_stack(const ForwardPass& f, LayerForward layer);

}  // namespace tessera::model

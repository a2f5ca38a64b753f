// BERT encoder weights, converted to f32 into one tracked arena ("model.weights")
// and checked against the config. Linear weights keep the PyTorch layout
// [out_features, in_features]; Wq/Wk/Wv are concatenated once into one QKV matrix.
#pragma once

#include <cstddef>
#include <vector>

#include "model/config.h"
#include "model/safetensors.h"
#include "tessera/allocator.h"

namespace tessera::model {

struct LayerWeights {
  const float* qkv_w = nullptr;    // [3H, H]: rows 0..H-1 query, then key, then value
  const float* qkv_b = nullptr;    // [3H]
  const float* attn_out_w = nullptr;  // [H, H]
  const float* attn_out_b = nullptr;  // [H]
  const float* ln1_gamma = nullptr;   // [H]
  const float* ln1_beta = nullptr;    // [H]
  const float* ffn_in_w = nullptr;    // [I, H]
  const float* ffn_in_b = nullptr;    // [I]
  const float* ffn_out_w = nullptr;   // [H, I]
  const float* ffn_out_b = nullptr;   // [H]
  const float* ln2_gamma = nullptr;   // [H]
  const float* ln2_beta = nullptr;    // [H]
};

struct BertWeights {
  Buffer arena;  // owns every array below
  const float* word_embeddings = nullptr;      // [V, H]
  const float* position_embeddings = nullptr;  // [P, H]
  const float* token_type_embeddings = nullptr;  // [type_vocab_size, H]
  const float* embeddings_ln_gamma = nullptr;  // [H]
  const float* embeddings_ln_beta = nullptr;   // [H]
  std::vector<LayerWeights> layers;
};

// Finds the BERT tensors in `file` (names as in BertModel, optionally under a
// prefix such as "bert."), checks each shape against `config` and converts it.
// Errors name the file, the tensor and both shapes.
Status load_bert_weights(const SafetensorsFile& file, const BertConfig& config,
                         TrackingAllocator& allocator, BertWeights* out);

}  // namespace tessera::model

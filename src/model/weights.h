// Encoder weights, found by the architecture's tensor names
// (architectures/architecture.h, WeightNames) and checked against the
// config. Embeddings, biases and LayerNorm parameters are converted to f32
// into one tracked arena ("model.weights"). Linear weights (PyTorch layout
// [out_features, in_features]; Wq/Wk/Wv concatenated once into one QKV
// matrix) are packed in the GEMM library's layout, f32, bf16 or int8 (also
// "model.weights"), each through a temporary f32 copy of that one matrix.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "model/config.h"
#include "model/safetensors.h"
#include "model/weight_precision.h"
#include "runtime/gemm.h"
#include "tessera/allocator.h"

namespace tessera::model {

// One layer. Biases and betas are nullptr where the model has none; with
// Q = Hq D and KV = Hkv D (NetworkConfig::qkv_width) and I2 = I, or 2I for a
// gated FFN ([gate; up]).
struct LayerWeights {
  PackedWeights qkv_w;                // [Q + 2 KV, H]: query rows, then key, then value
  const float* qkv_b = nullptr;       // [Q + 2 KV]
  const float* q_norm = nullptr;      // [D] per-head RMSNorm (Qwen3), or nullptr
  const float* k_norm = nullptr;      // [D]
  PackedWeights attn_out_w;           // [H, Q]
  const float* attn_out_b = nullptr;  // [H]
  const float* ln1_gamma = nullptr;   // [H]; pre-norm layer 0 of ModernBERT: nullptr (no norm)
  const float* ln1_beta = nullptr;    // [H]
  PackedWeights ffn_in_w;             // [I2, H]
  const float* ffn_in_b = nullptr;    // [I2]
  PackedWeights ffn_out_w;            // [H, I]
  const float* ffn_out_b = nullptr;   // [H]
  const float* ln2_gamma = nullptr;   // [H]
  const float* ln2_beta = nullptr;    // [H]
};

// Sequence classification (cross-encoders): first token -> dense -> tanh -> out.
struct ClassifierWeights {
  PackedWeights dense_w;           // [H, H]
  const float* dense_b = nullptr;  // [H]; none: nullptr
  const float* norm_g = nullptr;   // [H]; no norm: nullptr
  const float* norm_b = nullptr;   // [H]; no bias: nullptr
  const float* out_w = nullptr;    // [labels, H], f32 (a handful of rows: dot products)
  const float* out_b = nullptr;    // [labels]
  int labels = 0;
};

// The masked-LM head SPLADE reads: dense -> act -> LayerNorm -> vocabulary logits.
struct MaskedLmWeights {
  PackedWeights transform_w;           // [H, H]
  const float* transform_b = nullptr;  // [H]
  const float* norm_gamma = nullptr;   // [H]
  const float* norm_beta = nullptr;    // [H]
  PackedWeights decoder_w;             // [V, H] (tied checkpoints: the word embeddings)
  const float* decoder_b = nullptr;    // [V]
};

struct NetworkWeights {
  WeightPrecision precision = WeightPrecision::kF32;
  Buffer arena;                                    // owns every f32 array below
  const float* word_embeddings = nullptr;          // [V, H]
  const float* position_embeddings = nullptr;      // [P, H]; rotary or none: nullptr
  const float* token_type_embeddings = nullptr;    // [type_vocab_size, H]; none: nullptr
  const float* embeddings_ln_gamma = nullptr;      // [H]; no embedding norm: nullptr
  const float* embeddings_ln_beta = nullptr;       // [H]; or no bias: nullptr
  const float* final_norm_gamma = nullptr;         // [H]; post-norm models: nullptr
  const float* final_norm_beta = nullptr;          // [H]
  const float* relative_attention_bias = nullptr;  // [buckets, heads]; none: nullptr
  std::vector<LayerWeights> layers;
  std::optional<ClassifierWeights> classifier;  // with HeadKind::kSequenceClassification
  std::optional<MaskedLmWeights> masked_lm;     // with HeadKind::kMaskedLm

  size_t bytes() const;  // the arena plus every packed Linear weight
};

// Finds the tensors config.architecture names in `file` (optionally under a
// prefix such as "bert."), checks each shape against `config` and converts
// it (Linear weights to `precision`). Errors name the file, the tensor and
// both shapes.
Status load_network_weights(const SafetensorsFile& file, const NetworkConfig& config,
                            WeightPrecision precision, TrackingAllocator& allocator,
                            NetworkWeights* out);

}  // namespace tessera::model

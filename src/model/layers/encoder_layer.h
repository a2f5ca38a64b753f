// One post-LayerNorm encoder layer (BERT, RoBERTa, MPNet) over a packed (varlen) batch: no padding
// rows exist, so no FLOP is spent on them.
//   qkv = x Wqkv^T + b            [T, 3H]   one GEMM for Q, K and V
// (with bf16 weights, qkv, ctx and f are bf16 in memory; x stays f32)
//   ctx = attention(q, k, v [+ bias])  [T, H]  through the dispatcher, varlen views into qkv;
//                                 MPNet adds its relative-position bias there
//   x   = LN(x + ctx Wo^T + bo)   [T, H]
//   f   = gelu(x W1^T + b1)       [T, I]
//   x   = LN(x + f W2^T + b2)     [T, H]
// Biases, the GELU and the residual adds run in the GEMMs' epilogues
// (runtime/gemm.h, LinearEpilogue); only the LayerNorms are passes of their own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/config.h"
#include "model/weights.h"
#include "tessera/context.h"
#include "tessera/dispatcher.h"
#include "tessera/tensor.h"

namespace tessera::model {

// The packed batch: `count` sequences, sequence s owning rows cu_seqlens[s] ..
// cu_seqlens[s+1] of `tokens` rows.
struct PackedBatch {
  int64_t tokens = 0;
  int64_t count = 0;
  const int32_t* cu_seqlens = nullptr;  // [count + 1]
  // Optional additive attention bias shared by every layer, f32
  // [1, heads, S, S] with S the longest sequence: each sequence reads its
  // top-left block (the contract indexes a varlen bias by position within
  // the sequence).
  TensorView attention_bias;
};

// Working memory of one forward pass, reused by every layer.
struct LayerScratch {
  float* hidden = nullptr;  // [T, H]: the layer's input and output
  // Sized for f32; with bf16 weights these two hold bf16 values (run_encoder_layer).
  float* context = nullptr;        // [T, H]: attention output
  float* wide = nullptr;           // [T, max(3H, I)]: QKV, then the FFN's inner activations
  void* gemm_workspace = nullptr;  // linear()'s workspace, reused by every product
  size_t gemm_workspace_bytes = 0;
  static int64_t wide_width(const NetworkConfig& c) {
    return 3 * c.hidden_size > c.intermediate_size ? 3 * c.hidden_size : c.intermediate_size;
  }
};

// The GEMM workspace a layer with weights `w` needs for `tokens` rows on a
// pool of `threads` (runtime/gemm.h, linear_workspace_bytes).
Status encoder_layer_gemm_workspace(const LayerWeights& w, int64_t tokens, int threads,
                                    size_t* out);

Status run_encoder_layer(int index, const LayerWeights& w, const NetworkConfig& config,
                         const PackedBatch& batch, const LayerScratch& scratch,
                         Dispatcher& attention, Context& ctx);

}  // namespace tessera::model

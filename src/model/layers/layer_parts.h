// The parts every layer kind is assembled from (encoder_layer.h: post-norm;
// pre_norm_layer.h: pre-norm): the attention part and the FFN part, each
// adding its output to the residual stream `hidden` in its last product's
// epilogue, and the norms. The layer kinds differ only in where the norms
// sit.
//   attention part: qkv = x Wqkv^T (+b)  [T, (Hq + 2 Hkv) D]  one GEMM
//                   Q, K: per-head RMSNorm and rotary (rotary.h), one pass
//                   ctx = attention(q, k, v; the layer's mask [+ bias])  [T, Hq D]
//                   hidden += ctx Wo^T (+b)
//   FFN part:       dense: f = gelu(x W1^T + b1) (GELU in the epilogue)
//                   gated: [g | u] = x W1^T, f = act(g) * u (gated_activation.h)
//                   hidden += f W2^T (+b2)
// With bf16 weights, qkv, ctx and f are bf16 in memory (the products that
// write them round once after their epilogue); hidden, the norms and
// softmax's statistics stay f32.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/config.h"
#include "model/layers/rotary.h"
#include "model/stage_span.h"
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
  const int32_t* positions = nullptr;   // [tokens]: each token's position in its sequence
  // Optional additive attention bias shared by every layer, f32
  // [1, heads, S, S] with S the longest sequence: each sequence reads its
  // top-left block (the contract indexes a varlen bias by position within
  // the sequence).
  TensorView attention_bias;
};

// Working memory of one forward pass, reused by every layer.
struct LayerScratch {
  float* hidden = nullptr;  // [T, H]: the residual stream, the layer's input and output
  float* normed = nullptr;  // [T, H]: a pre-norm layer's normalized input (pre-norm only)
  // Sized for f32; with bf16 weights these hold bf16 values.
  void* context = nullptr;         // [T, context_width]: attention output, then a gated FFN's f
  void* wide = nullptr;            // [T, wide_width]: QKV, then the FFN's first product
  void* gemm_workspace = nullptr;  // linear()'s workspace, reused by every product
  size_t gemm_workspace_bytes = 0;
  static int64_t wide_width(const NetworkConfig& c) {
    return std::max<int64_t>(c.qkv_width(), c.ffn_in_rows());
  }
  static int64_t context_width(const NetworkConfig& c) {
    return c.gated_mlp ? std::max(c.attention_width(), c.intermediate_size) : c.attention_width();
  }
  // Floats per token of all the buffers above but the GEMM workspace.
  static int64_t floats_per_token(const NetworkConfig& c) {
    const int64_t normed = c.block == BlockKind::kPreNorm ? c.hidden_size : 0;
    return c.hidden_size + normed + context_width(c) + wide_width(c);
  }
};

// Everything one layer's forward reads.
struct LayerRun {
  int index = 0;
  const LayerWeights* weights = nullptr;
  const NetworkConfig* config = nullptr;
  const PackedBatch* batch = nullptr;
  const LayerScratch* scratch = nullptr;
  RotaryTable rope;  // this layer's (its theta); dim 0: none
  Dispatcher* attention = nullptr;
  Context* ctx = nullptr;
  // "model.layer3.<part>", merged across layers as "layer.<part>".
  StageName stage(const char* part) const {
    return {"model.layer" + std::to_string(index) + "." + part, std::string("layer.") + part};
  }
};

// The GEMM workspace a layer with weights `w` needs for `tokens` rows on a
// pool of `threads` (runtime/gemm.h, linear_workspace_bytes).
Status layer_gemm_workspace(const LayerWeights& w, const NetworkConfig& c, int64_t tokens,
                            int threads, size_t* out);

// hidden += attention(x) Wo^T (+ bo); x: [T, H] f32 (hidden itself or normed).
Status run_attention_part(const LayerRun& run, const float* x);
// hidden += FFN(x); x: [T, H] f32.
Status run_ffn_part(const LayerRun& run, const float* x);
// y = norm(x) over one row of hidden_size floats (y == x: in place): the
// config's norm kind (LayerNorm, with beta when not nullptr; RMSNorm) and eps.
void norm_row(const NetworkConfig& c, const float* x, float* y, const float* gamma,
              const float* beta);
// dst[t] = norm(src[t]) for every token (src == dst: in place), the
// config's norm kind, gamma and optional beta; profiled as `stage`.
void norm_rows(const LayerRun& run, const StageName& stage, const float* src, float* dst,
               const float* gamma, const float* beta);

}  // namespace tessera::model

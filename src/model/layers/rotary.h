// Rotary position embedding (RoPE) as HF's rotate_half form computes it, and
// Qwen3's per-head RMSNorm of Q and K, in one pass over the Q and K rows
// where they leave the QKV product (V is not touched): each head's values
// are read once, normalized, rotated and written back in the activations'
// type (f32 or bf16).
//   inv_freq[i] = 1 / theta^(2i / dim)  (f32 arithmetic, as torch), / linear factor
//   angle = position * inv_freq[i]      (rounded to f32 before cos/sin, as torch)
//   x'[i]       = x[i] cos - x[i + dim/2] sin
//   x'[i+dim/2] = x[i + dim/2] cos + x[i] sin        for i < dim/2
#pragma once

#include <cstdint>

#include "model/config.h"
#include "tessera/dtype.h"
#include "tessera/thread_pool.h"

namespace tessera::model {

// cos and sin of every position < positions, [positions, dim/2] each.
struct RotaryTable {
  const float* cos = nullptr;
  const float* sin = nullptr;
  int dim = 0;  // 0: no rotation
};

// Fills cos and sin ([positions, dim / 2] floats each) for a layer's theta and factor.
void fill_rotary_table(int dim, const LayerAttention& a, int64_t positions, float* cos, float* sin);

// What to do to the Q and K heads of a [tokens, (hq + 2 hkv) * d] QKV block.
struct QkPrepare {
  int hq = 0, hkv = 0, d = 0;
  const float* q_norm = nullptr;  // [d] RMSNorm weights, or nullptr for no norm
  const float* k_norm = nullptr;
  float eps = 1e-6f;
  RotaryTable rope;
  bool active() const { return q_norm != nullptr || rope.dim > 0; }
};

// positions[t]: token t's position within its sequence (< the table's).
void prepare_qk(ThreadPool& pool, const QkPrepare& p, DType type, void* qkv, int64_t tokens,
                const int32_t* positions);

}  // namespace tessera::model

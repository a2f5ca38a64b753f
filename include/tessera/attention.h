// The attention contract: what every backend computes, as the reference
// backend (src/backends/reference/) defines it and the conformance suite
// checks on every backend (docs/CONFORMANCE.md).
//
//   out[b, i, h, :] = sum_j softmax_j(s[b, h, i, j]) * v[b, j, h / (Hq/Hkv), :]
//   s = scale * q.k ; s = softcap * tanh(s / softcap) if softcap > 0 ;
//   s += bias ; s = -inf where masked
//   lse[b, h, i] = log(sum_j exp(s[b, h, i, j]))   (natural log)
//
// Every backend also honours:
//   - a row with no visible key writes zeros to out and -inf to lse;
//   - NaN in an input row gives NaN in that output row, never a crash or hang;
//   - bad shapes, strides, dtypes or lengths are an error Status naming the
//     field and the values (validate()), and nothing is written to out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tessera/status.h"
#include "tessera/tensor.h"

namespace tessera {

enum class MaskKind : uint8_t { kNone, kCausal, kWindow };

// Masks are aligned bottom-right when Sq != Sk (FlashAttention 2): query i
// sits at key position p = i + Sk - Sq.
//   causal:            key j is visible iff j <= p
//   window(left,right): visible iff p - left <= j <= p + right; -1 = unbounded
struct Mask {
  MaskKind kind = MaskKind::kNone;
  int64_t window_left = -1;
  int64_t window_right = -1;

  static Mask none() { return {}; }
  static Mask causal() { return {MaskKind::kCausal, -1, 0}; }
  static Mask window(int64_t left, int64_t right) { return {MaskKind::kWindow, left, right}; }
  // Is key j visible to query i of a sequence with sq queries and sk keys?
  bool visible(int64_t i, int64_t j, int64_t sq, int64_t sk) const {
    if (kind == MaskKind::kNone) return true;
    const int64_t p = i + sk - sq;
    if (kind == MaskKind::kCausal) return j <= p;
    if (window_left >= 0 && j < p - window_left) return false;
    if (window_right >= 0 && j > p + window_right) return false;
    return true;
  }
  std::string describe() const;  // "none", "causal", "window(16,0)"
};

// Packed variable-length batches (THD layout): q is [1, total_q, Hq, D] and
// sequence b owns rows cu_seqlens_q[b] .. cu_seqlens_q[b+1]; likewise k/v.
// Both arrays hold batch+1 non-decreasing int32, host memory, starting at 0.
struct Varlen {
  const int32_t* cu_seqlens_q = nullptr;
  const int32_t* cu_seqlens_k = nullptr;
  int64_t batch = 0;
};

struct AttentionArgs {
  TensorView q;                // [B, Sq, Hq, D]
  TensorView k;                // [B, Sk, Hkv, D]
  TensorView v;                // [B, Sk, Hkv, Dv]
  TensorView out;              // [B, Sq, Hq, Dv], dtype of q
  TensorView lse;              // optional f32 [B, Hq, Sq]
  std::optional<float> scale;  // default 1/sqrt(D)
  Mask mask;
  TensorView bias;  // optional f32, broadcastable to [B, Hq, Sq, Sk]
  std::optional<Varlen> varlen;
  float softcap = 0.0f;  // > 0 enables tanh soft-capping

  float effective_scale() const;
};

// Sizes read from validated args (varlen: per-sequence maxima).
struct AttentionDims {
  int64_t batch = 0, sq = 0, sk = 0, hq = 0, hkv = 0, d = 0, dv = 0;
  int64_t total_q = 0, total_k = 0;  // rows in the tensors (varlen: packed)
};

// Checks every field against the contract. Messages name the field and the
// values. Nothing is read from the tensors' data.
Status validate(const AttentionArgs& args);
AttentionDims dims_of(const AttentionArgs& args);  // args must be valid
// Query and key row range of sequence b (varlen aware).
struct SeqRange {
  int64_t q_begin, q_len, k_begin, k_len;
};
SeqRange seq_range(const AttentionArgs& args, int64_t b);

// "B=2,Sq=128,Sk=128,Hq=8,Hkv=8,D=64,dtype=bf16,mask=causal" (the shape
// syntax the CLI's `backends --explain`, `bench` and `tune` read back).
std::string describe_shape(const AttentionArgs& args);
// FLOPs of the two products actually needed: 4*Sq*Sk*D per head, counting
// only visible (query, key) pairs, summed over sequences.
double attention_flops(const AttentionArgs& args);
// Bytes a perfect kernel moves: q, k, v read once, out (and lse) written once.
double attention_bytes(const AttentionArgs& args);

}  // namespace tessera

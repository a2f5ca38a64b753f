// AttentionCase: one conformance problem, described by value (no memory).
// The case grid (grid.h) lists them; materialize.h turns one into tracked
// buffers; its name() is the gtest parameter name and the failure label.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/attention.h"
#include "tessera/dtype.h"

namespace tessera::verify {

enum class BiasKind : uint8_t {
  kNone,
  kFull,       // f32 [B, Hq, Sq, Sk]
  kBroadcast,  // f32 [B, 1, 1, Sk] (a key-padding style bias)
  kShared,     // f32 [1, Hq, Sq, Sk]: one bias for the whole batch (shape strings' bias=1)
  kPerHead,    // f32 [B, Hq, 1, Sk]: one row per head, broadcast over queries
  // f32 [B, 1, 1, Sk] viewed as [B, Hq, Sq, Sk] through stride-0 dims, with
  // key 1 of batch 0 at -inf (a masked key).
  kKeyStride0,
};

// Memory layout of q, k, v, out (and lse, bias). Every layout is viewed as the
// contract's [B, S, H, D]; the padded ones leave gaps that hold sentinels.
enum class Layout : uint8_t {
  kBSHD,        // contiguous [B, S, H, D]
  kBSHDPadded,  // [B, S, H, D] with odd padding after every row at each level
  kBHSD,        // memory order [B, H, S, D], padded, viewed through strides
  kDStride2,    // kBSHDPadded with D read at stride 2 (a gap after every element)
};

struct AttentionCase {
  int64_t batch = 1;
  int64_t sq = 1;  // varlen: the longest query sequence
  int64_t sk = 1;  // varlen: the longest key sequence
  int64_t hq = 1;
  int64_t hkv = 1;
  int64_t d = 16;
  int64_t dv = 16;
  DType dtype = DType::kF32;
  Mask mask;
  BiasKind bias = BiasKind::kNone;
  // Varlen (packed THD) when non-empty: per-sequence lengths, batch of them.
  std::vector<int32_t> seqlens_q;
  std::vector<int32_t> seqlens_k;
  float softcap = 0.0f;
  std::optional<float> scale;
  bool lse = false;
  Layout layout = Layout::kBSHD;
  int nan_rows = 0;  // query rows (spread over the batch and heads) set to NaN
  uint64_t seed = 0;
  std::string text;  // the shape string it was parsed from (case_text.h), for reports

  bool varlen() const { return !seqlens_q.empty(); }
  int64_t total_q() const;  // rows of the q tensor (varlen: packed)
  int64_t total_k() const;
  int64_t rows_batch() const { return varlen() ? 1 : batch; }  // tensors' shape[0]
  // "B3_Sq113_Sk129_Hq4_Hkv2_D59_bf16_causal_bias_lse_bhsd": letters, digits
  // and '_' only, so it is also a valid gtest parameter name.
  std::string name() const;
  // Sets seq lengths (and batch, sq, sk) of a varlen case.
  void set_varlen(std::vector<int32_t> q_lens, std::vector<int32_t> k_lens);
};

std::string_view layout_name(Layout layout);
std::string_view bias_name(BiasKind bias);

// FNV-1a of the text: a stable seed from a case name.
uint64_t stable_hash(std::string_view text);

}  // namespace tessera::verify

// The attention problem as a StableHLO program (MLIR text), for one tile of
// queries against all keys of a batch of equal-length sequences:
//
//   inputs:  q    [B, Tq, Hq, D]   dtype          (query rows of the tile)
//            k    [B, Sk, Hkv, D]  dtype          (keys, zero-padded to Sk)
//            v    [B, Sk, Hkv, Dv] dtype
//            bias [B, Hq, Tq, Sk]  f32            (only when has_bias)
//            q_offset, q_len, k_len: i32 scalars  (tile start row, true lengths)
//   outputs: out  [B, Tq, Hq, Dv]  dtype
//            lse  [B, Hq, Tq]      f32
//
// Scores are f32 [B, Hkv, G, Tq, Sk] (G = Hq / Hkv, so GQA/MQA need no copy
// of k or v); the lengths are run-time values so that one executable serves
// every tile and every sequence padded into the same bucket.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/attention.h"

namespace tessera::xla {

struct ProgramKey {
  DType dtype = DType::kF32;
  int64_t batch = 1, tq = 1, sk = 1, hq = 1, hkv = 1, d = 1, dv = 1;
  MaskKind mask = MaskKind::kNone;
  int64_t window_left = -1, window_right = -1;
  float scale = 1.0f;
  float softcap = 0.0f;  // 0: off
  bool has_bias = false;

  bool operator==(const ProgramKey&) const = default;
  // Every field, for the executable cache and the trace.
  std::string describe() const;
  // Bytes of f32 score-sized intermediates one execution may hold live
  // (scores, exponentials and, with a bias, the bias tile).
  size_t score_bytes() const;
};

struct ProgramKeyHash {
  size_t operator()(const ProgramKey& k) const;
};

inline constexpr int kProgramOutputs = 2;  // out, lse

std::string attention_program(const ProgramKey& key);

}  // namespace tessera::xla

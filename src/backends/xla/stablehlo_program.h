// The attention problem as a StableHLO program (MLIR text), for one tile of
// queries against all keys of a batch of equal-length sequences:
//
//   inputs:  q    [B, Tq, Hq, D]   dtype          (query rows of the tile)
//            k    [B, Sk, Hkv, D]  dtype          (keys, zero-padded to Sk)
//            v    [B, Sk, Hkv, Dv] dtype
//            bias [B, Hq, Tq, Sk]  f32            (only when has_bias)
//            q_offset, q_len, k_len: i32 scalars  (tile start row, true lengths)
//            left, right: i32 scalars   (visible keys p-left .. p+right; -1 unbounded)
//            scale, softcap: f32 scalars
//   outputs: out  [B, Tq, Hq, Dv]  dtype
//            lse  [B, Hq, Tq]      f32
//
// Scores are f32 [B, Hkv, G, Tq, Sk] (G = Hq / Hkv, so GQA/MQA need no copy
// of k or v); the lengths are run-time values so that one executable serves
// every tile and every sequence padded into the same bucket; the mask (none,
// causal and window are all a (left, right) window), the scale and the
// softcap are run-time values too, so that they do not multiply compiles.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/attention.h"

namespace tessera::xla {

struct ProgramKey {
  DType dtype = DType::kF32;
  int64_t batch = 1, tq = 1, sk = 1, hq = 1, hkv = 1, d = 1, dv = 1;
  bool has_softcap = false;
  bool has_bias = false;

  bool operator==(const ProgramKey&) const = default;
  // Every field, for the executable cache and the trace.
  std::string describe() const;
  // Bytes of f32 intermediates one execution may hold on the device (an
  // upper bound of what the compiler reports; xla_plugin_test checks it).
  size_t temp_bytes() const;
  // The part that grows with tq (what query tiling bounds).
  size_t tile_temp_bytes() const;
};

struct ProgramKeyHash {
  size_t operator()(const ProgramKey& k) const;
};

inline constexpr int kProgramOutputs = 2;  // out, lse

// The run-time values of one execution, in parameter order after the tensors.
struct ProgramScalars {
  int32_t q_offset = 0, q_len = 0, k_len = 0;
  int32_t left = -1, right = -1;
  float scale = 1.0f, softcap = 0.0f;
};
// The mask as the program's (left, right) window.
void mask_window(const Mask& mask, int32_t* left, int32_t* right);

std::string attention_program(const ProgramKey& key);

}  // namespace tessera::xla

// Plain data handed from the host to the cuda.flash kernel: pointers and
// explicit element strides, so BSHD, BHSD and packed (varlen) layouts all
// work. Shared by the host (.cc) and device (.cu) sides; no CUDA types.
#pragma once

#include <cstdint>

namespace tessera::cuda_flash {

enum class MaskKind : int { kNone = 0, kCausal = 1, kWindow = 2 };

struct FlashParams {
  const void* q;  // [B, Sq, Hq, D]   (varlen: [1, total_q, Hq, D])
  const void* k;  // [B, Sk, Hkv, D]
  const void* v;  // [B, Sk, Hkv, D]
  void* out;      // [B, Sq, Hq, D]
  float* lse;     // [B, Hq, Sq] or null
  const float* bias;  // broadcast to [B, Hq, Sq, Sk] by zero strides, or null
  int64_t q_stride[4], k_stride[4], v_stride[4], out_stride[4];
  int64_t lse_stride[3];
  int64_t bias_stride[4];
  const int32_t* cu_seqlens_q;  // device, batch+1 entries; null: fixed lengths
  const int32_t* cu_seqlens_k;
  int batch, hq, hkv, d;
  int sq, sk;  // fixed lengths, or the per-sequence maxima with varlen
  float scale;
  float softcap;  // 0: off
  MaskKind mask;
  int64_t window_left, window_right;  // -1: unbounded
};

enum class ElementType : int { kF16 = 0, kBF16 = 1 };

}  // namespace tessera::cuda_flash

// One unit of cpu.gemm's work: the query heads of one sequence that share one
// KV head (all of them for MHA, Hq/Hkv for GQA, Hq for MQA), stacked into one
// matrix so K and V are read once for the whole group:
//   Qg[g*Sq, D] (row hh*Sq + i = query i of head hh of the group)
//   S  = scale * Qg K^T       [g*Sq, Sk]   GEMM
//   P  = masked softmax(S)    in place, with lse
//   O  = P V / rowsum         [g*Sq, Dv]   GEMM, then stored to out
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu_gemm/row_kernels.h"
#include "tessera/attention.h"

namespace tessera::cpu_gemm {

// Rows per GEMM when a mask hides part of the score matrix: each block of
// query rows multiplies only the key columns some row of it can see, which
// skips about half the work of a causal mask. Smaller blocks skip more but
// run the GEMM at a smaller, less efficient M.
inline constexpr int64_t kMaskedRowBlock = 128;

// From this many stacked query rows on, K and V are copied into contiguous f32
// tiles even when the GEMM could read them in place: a BSHD view's row stride
// (Hkv*D floats, often a multiple of 4 KiB) makes the GEMM's K/V reads alias
// in cache (S3 f32 ran at 53 GFLOP/s in place vs 74 for bf16, which is copied),
// and the copy costs 1/rows of the GEMM. Decode (few rows) reads in place.
inline constexpr int64_t kCopyKvMinRows = 64;

// The working memory of one unit, in floats, sized for the largest sequence.
// K and V get an f32 copy when they cannot feed the GEMM as they are (not f32,
// or not unit-stride along D) or when kCopyKvMinRows says the copy pays.
struct UnitLayout {
  int64_t group = 1;  // g = Hq / Hkv
  int64_t scores = 0, q = 0, k = 0, v = 0, out = 0, rows = 0;
  bool convert_k = false, convert_v = false;

  static UnitLayout of(const AttentionArgs& args);
  size_t bytes() const;
};

// One thread's pointers into its slice of the workspace.
struct Scratch {
  float* scores = nullptr;     // [g*Sq, Sk]
  float* q = nullptr;          // [g*Sq, D]
  float* k = nullptr;          // [Sk, D] when convert_k
  float* v = nullptr;          // [Sk, Dv] when convert_v
  float* out = nullptr;        // [g*Sq, Dv]
  RowSoftmax* rows = nullptr;  // [g*Sq]
};
Scratch carve(const UnitLayout& layout, void* base);

// Computes out (and lse) for the query heads kv_head*g .. kv_head*g + g - 1 of
// sequence b. Runs its GEMMs on the calling thread's GEMM thread setting.
Status run_head_group(const AttentionArgs& args, const UnitLayout& layout, int64_t b,
                      int64_t kv_head, const Scratch& scratch);

}  // namespace tessera::cpu_gemm

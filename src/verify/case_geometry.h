// The shapes and strides of an AttentionCase's tensors: the one place a case
// becomes tensor geometry, for the guarded conformance tensors
// (materialize.h) and the plain ones of bench, tune and explain
// (plain_case.h). Every tensor is seen as the contract's:
//   q [R, Tq, Hq, D], k [R, Tk, Hkv, D], v [R, Tk, Hkv, Dv], out [R, Tq, Hq, Dv],
//   lse [R, Hq, Tq], bias as its BiasKind says,
// where R = rows_batch() (1 when varlen) and Tq, Tk the rows per batch entry.
#pragma once

#include <array>
#include <cstdint>

#include "tessera/tensor.h"
#include "verify/case.h"

namespace tessera::verify {

inline constexpr int64_t kLayoutPad = 3;  // odd: padded rows start misaligned

enum class Packing : uint8_t {
  // The case's layout as it says: padding after every row, transposed lse
  // and bias for kBHSD, D at stride 2 for kDStride2 (the conformance suite).
  kAsCase,
  // The layout's memory order of q, k, v, out ([B, S, H, D] or [B, H, S, D])
  // with no padding; lse and bias row-major (bench, tune, explain).
  kDense,
};

// One tensor as stored: a view of `shape` through `strides` (elements).
struct TensorGeometry {
  int rank = 0;  // 0: the case has no such tensor
  DType dtype = DType::kF32;
  std::array<int64_t, kMaxRank> shape{};
  std::array<int64_t, kMaxRank> strides{};

  bool present() const { return rank > 0; }
  int64_t numel() const;
  // Elements from the first to one past the last (0 when any dim is 0).
  int64_t span() const;
  TensorView view(void* data) const;
};

struct CaseGeometry {
  TensorGeometry q, k, v, out, lse, bias;
};

CaseGeometry case_geometry(const AttentionCase& c, Packing packing);

// The bias as the backend sees it: `stored` itself, or for kKeyStride0 the
// stored [B, 1, 1, Sk] widened to [B, Hq, Sq, Sk] through stride-0 dims.
TensorView bias_view(const AttentionCase& c, const TensorView& stored);

}  // namespace tessera::verify

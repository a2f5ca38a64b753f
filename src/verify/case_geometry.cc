#include "verify/case_geometry.h"

#include "verify/guarded_tensor.h"

namespace tessera::verify {

namespace {

using Shape = std::array<int64_t, kMaxRank>;
using Order = std::array<int, kMaxRank>;

constexpr Order kRowMajor{0, 1, 2, 3};

TensorGeometry make(int rank, DType dtype, const Shape& shape, const Shape& strides) {
  TensorGeometry g;
  g.rank = rank;
  g.dtype = dtype;
  g.shape = shape;
  g.strides = strides;
  return g;
}

// q, k, v, out: [R, T, H, D].
Shape rows_strides(Layout layout, Packing packing, const Shape& shape) {
  const int64_t pad = packing == Packing::kAsCase ? kLayoutPad : 0;
  switch (layout) {
    case Layout::kBSHD:
      return padded_strides(4, shape, kRowMajor, 0);
    case Layout::kBSHDPadded:
      return padded_strides(4, shape, kRowMajor, pad);
    case Layout::kBHSD:
      return padded_strides(4, shape, {0, 2, 1, 3}, pad);
    case Layout::kDStride2: {
      if (packing == Packing::kDense) return padded_strides(4, shape, kRowMajor, 0);
      Shape s = padded_strides(4, {shape[0], shape[1], shape[2], 2 * shape[3]}, kRowMajor, pad);
      s[3] = 2;
      return s;
    }
  }
  return {};
}

// lse [R, Hq, Tq] (rank 3) and bias [B, Hq|1, Sq|1, Sk]: row-major, padded,
// or (kBHSD) stored in the memory order `bhsd_order`.
Shape side_strides(Layout layout, Packing packing, int rank, const Shape& shape,
                   const Order& bhsd_order) {
  if (packing == Packing::kDense) return padded_strides(rank, shape, kRowMajor, 0);
  switch (layout) {
    case Layout::kBSHD:
      return padded_strides(rank, shape, kRowMajor, 0);
    case Layout::kBSHDPadded:
    case Layout::kDStride2:
      return padded_strides(rank, shape, kRowMajor, kLayoutPad);
    case Layout::kBHSD:
      return padded_strides(rank, shape, bhsd_order, kLayoutPad);
  }
  return {};
}

Shape bias_shape(const AttentionCase& c) {
  switch (c.bias) {
    case BiasKind::kNone:
      return {};
    case BiasKind::kFull:
      return {c.batch, c.hq, c.sq, c.sk};
    case BiasKind::kBroadcast:
    case BiasKind::kKeyStride0:
      return {c.batch, 1, 1, c.sk};
    case BiasKind::kShared:
      return {1, c.hq, c.sq, c.sk};
    case BiasKind::kPerHead:
      return {c.batch, c.hq, 1, c.sk};
  }
  return {};
}

}  // namespace

int64_t TensorGeometry::numel() const {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= shape[d];
  return n;
}

int64_t TensorGeometry::span() const {
  if (numel() == 0) return 0;
  int64_t span = 1;
  for (int d = 0; d < rank; ++d) span += (shape[d] - 1) * strides[d];
  return span;
}

TensorView TensorGeometry::view(void* data) const {
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.rank = rank;
  v.shape = shape;
  v.strides = strides;
  return v;
}

CaseGeometry case_geometry(const AttentionCase& c, Packing packing) {
  const int64_t r = c.rows_batch(), tq = c.total_q(), tk = c.total_k();
  const auto rows = [&](const Shape& shape) {
    return make(4, c.dtype, shape, rows_strides(c.layout, packing, shape));
  };
  CaseGeometry g;
  g.q = rows({r, tq, c.hq, c.d});
  g.k = rows({r, tk, c.hkv, c.d});
  g.v = rows({r, tk, c.hkv, c.dv});
  g.out = rows({r, tq, c.hq, c.dv});
  if (c.lse) {
    // kBHSD stores lse as [R, Tq, Hq].
    const Shape shape{r, c.hq, tq, 0};
    g.lse = make(3, DType::kF32, shape, side_strides(c.layout, packing, 3, shape, {0, 2, 1, 0}));
  }
  if (c.bias != BiasKind::kNone) {
    // kBHSD stores bias as [B, Hq, Sk, Sq].
    const Shape shape = bias_shape(c);
    g.bias = make(4, DType::kF32, shape, side_strides(c.layout, packing, 4, shape, {0, 1, 3, 2}));
  }
  return g;
}

TensorView bias_view(const AttentionCase& c, const TensorView& stored) {
  if (c.bias != BiasKind::kKeyStride0 || !stored.present()) return stored;
  TensorView v = stored;
  v.shape = {c.batch, c.hq, c.sq, c.sk};
  v.strides[1] = v.strides[2] = 0;
  return v;
}

}  // namespace tessera::verify

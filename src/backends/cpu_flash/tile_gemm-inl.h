// cpu.flash per-target code: the register-tiled product both halves of the
// attention loop use,
//   C[m x n] = (C * row_scale) + A[m x k] * B[k x n]     (kScaleC)
//   C[m x n] = A[m x k] * B[k x n]                         (otherwise)
// A is read one element at a time and broadcast, so it may have any strides
// (a K tile straight from a strided tensor; P^T read as P). B rows are
// contiguous vectors; n is a multiple of the vector length.
//   scores:  S^T[keys x rows] = K[keys x D] * Q^T[D x rows]
//   output:  O[rows x Dv] = O * alpha + P[rows x keys] * V[keys x Dv]
#if defined(TESSERA_CPU_FLASH_TILE_GEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_TILE_GEMM_INL_H_
#undef TESSERA_CPU_FLASH_TILE_GEMM_INL_H_
#else
#define TESSERA_CPU_FLASH_TILE_GEMM_INL_H_
#endif

#include <cstdint>

#include "cpu_flash/flash_params.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A strided view of the broadcast operand: element (i, kk) is
// base[i * row + kk * col].
struct StridedA {
  const float* base;
  int64_t row;
  int64_t col;
};

// One register tile: C[MR x NV vectors]. The accumulators live in registers
// for the whole k loop; C is touched once.
template <int MR, int NV, bool kScaleC, class DF>
HWY_INLINE void MicroTile(DF df, StridedA a, const float* HWY_RESTRICT b, int64_t ldb, int64_t k,
                          float* HWY_RESTRICT c, int64_t ldc, const float* HWY_RESTRICT row_scale) {
  using V = hn::Vec<DF>;
  const size_t lanes = hn::Lanes(df);
  const float* arow[MR];
  for (int i = 0; i < MR; ++i) arow[i] = a.base + i * a.row;
  V acc[MR][NV];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NV; ++j) acc[i][j] = hn::Zero(df);
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* bk = b + kk * ldb;
    V bv[NV];
    for (int j = 0; j < NV; ++j) bv[j] = hn::LoadU(df, bk + j * lanes);
    const int64_t ak = kk * a.col;
    for (int i = 0; i < MR; ++i) {
      const V ai = hn::Set(df, arow[i][ak]);
      for (int j = 0; j < NV; ++j) acc[i][j] = hn::MulAdd(ai, bv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    float* ci = c + i * ldc;
    if constexpr (kScaleC) {
      const V s = hn::Set(df, row_scale[i]);
      for (int j = 0; j < NV; ++j) {
        hn::Store(hn::MulAdd(hn::Load(df, ci + j * lanes), s, acc[i][j]), df, ci + j * lanes);
      }
    } else {
      for (int j = 0; j < NV; ++j) hn::Store(acc[i][j], df, ci + j * lanes);
    }
  }
}

// Picks the register tile for the last rows (m % kMicroRows) at run time.
template <int NV, bool kScaleC, class DF>
HWY_INLINE void MicroTileRows(DF df, int64_t mr, StridedA a, const float* HWY_RESTRICT b,
                              int64_t ldb, int64_t k, float* HWY_RESTRICT c, int64_t ldc,
                              const float* HWY_RESTRICT row_scale) {
  static_assert(kMicroRows == 6, "the switch below lists 1..kMicroRows");
  switch (mr) {
    case 6:
      return MicroTile<6, NV, kScaleC>(df, a, b, ldb, k, c, ldc, row_scale);
    case 5:
      return MicroTile<5, NV, kScaleC>(df, a, b, ldb, k, c, ldc, row_scale);
    case 4:
      return MicroTile<4, NV, kScaleC>(df, a, b, ldb, k, c, ldc, row_scale);
    case 3:
      return MicroTile<3, NV, kScaleC>(df, a, b, ldb, k, c, ldc, row_scale);
    case 2:
      return MicroTile<2, NV, kScaleC>(df, a, b, ldb, k, c, ldc, row_scale);
    default:
      return MicroTile<1, NV, kScaleC>(df, a, b, ldb, k, c, ldc, row_scale);
  }
}

// C[m x n] (=|+=) A[m x k] * B[k x n]; n % Lanes(df) == 0, C rows aligned.
// Row blocks outside, column blocks inside: the A panel (MR columns of A
// over k: for P^T that is one cache line per key) and the C rows stay in L1
// while B (one K/V tile, 16 KiB at D = 64) is swept from L1; A is read once.
template <bool kScaleC, class DF>
HWY_NOINLINE void TileGemm(DF df, int64_t m, int64_t n, int64_t k, StridedA a,
                           const float* HWY_RESTRICT b, int64_t ldb, float* HWY_RESTRICT c,
                           int64_t ldc, const float* HWY_RESTRICT row_scale) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  static_assert(kMicroVecs == 2, "the column loop below handles 2- and 1-vector blocks");
  for (int64_t row = 0; row < m; row += kMicroRows) {
    const int64_t mr = m - row < kMicroRows ? m - row : kMicroRows;
    const StridedA ar{a.base + row * a.row, a.row, a.col};
    const float* scale = kScaleC ? row_scale + row : nullptr;
    for (int64_t col = 0; col < n;) {
      float* cr = c + row * ldc + col;
      if (col + 2 * lanes <= n) {
        MicroTileRows<2, kScaleC>(df, mr, ar, b + col, ldb, k, cr, ldc, scale);
        col += 2 * lanes;
      } else {
        MicroTileRows<1, kScaleC>(df, mr, ar, b + col, ldb, k, cr, ldc, scale);
        col += lanes;
      }
    }
  }
}

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// cpu.flash per-target code: the hardware bf16 dot-product micro-kernel
// (AVX512_BF16 `vdpbf16ps`: 16 lanes x 2 products per instruction, twice
// the f32 FMA rate), for bf16 inputs on CPUs that report avx512_bf16.
//
// Highway 1.0.3 has no target with AVX512_BF16 (its bf16 multiply-add is
// emulated), so these few functions use the intrinsics directly, compiled
// for the AVX3 targets with avx512bf16 added to the function's target
// attribute; the host takes this path only when the CPU has the instruction
// and the product-path table (product_paths.h) ranks it first for this CPU
// kind, or cpu.flash:bf16dot forces it (it measured slower than the f32
// products on the Intel Xeon it was built on, faster on a Zen 5; see
// docs/DECISIONS.md). Other targets get kHasBf16Dot = false and no code.
//
// Operands are bf16 pairs packed in 32-bit words (low half the even element):
//   C[m x n] (= or += with row_scale) sum_kk A[i, kk] . B[kk, j]
// where A[i, kk] is one broadcast pair and B row kk holds n pairs, so one
// instruction adds a[2kk] b[2kk] + a[2kk+1] b[2kk+1] to 16 f32 lanes.
//   scores:  S^T[keys x rows] = Kpairs[keys x D/2] . Qpairs[D/2 x rows]
//   output:  O[rows x Dv] = O * alpha + Ppairs[rows x keys/2] . Vpairs[keys/2 x Dv]
#if defined(TESSERA_CPU_FLASH_BF16_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_BF16_DOT_INL_H_
#undef TESSERA_CPU_FLASH_BF16_DOT_INL_H_
#else
#define TESSERA_CPU_FLASH_BF16_DOT_INL_H_
#endif

#include <cstdint>

#include "cpu_flash/flash_params.h"
#include "hwy/highway.h"

#if TESSERA_CPU_FLASH_AVX512_TARGET
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {

// A strided view of the broadcast pairs: pair (i, kk) is base[i * row + kk * col].
struct PairA {
  const uint32_t* base;
  int64_t row;
  int64_t col;
};

#if TESSERA_CPU_FLASH_AVX512_TARGET

inline constexpr bool kHasBf16Dot = true;

#define TESSERA_BF16_DOT_ATTR __attribute__((target(HWY_TARGET_STR ",avx512bf16")))

// Vector reinterpretations (__builtin_bit_cast: std::bit_cast would be an
// out-of-line template compiled without AVX-512).
// 8 broadcast rows x 2 vectors = 16 accumulators of the 32 zmm registers.
inline constexpr int kPairRows = 8;

template <int MR, int NV, bool kScaleC>
TESSERA_BF16_DOT_ATTR inline void PairMicroTile(PairA a, const uint32_t* HWY_RESTRICT b,
                                                int64_t ldb, int64_t k, float* HWY_RESTRICT c,
                                                int64_t ldc, const float* HWY_RESTRICT row_scale) {
  __m512 acc[MR][NV];
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    const uint32_t* bk = b + kk * ldb;
    __m512bh bv[NV];
    for (int j = 0; j < NV; ++j)
      bv[j] = __builtin_bit_cast(__m512bh, _mm512_loadu_si512(bk + 16 * j));
    const uint32_t* ak = a.base + kk * a.col;
    for (int i = 0; i < MR; ++i) {
      const __m512bh ai =
          __builtin_bit_cast(__m512bh, _mm512_set1_epi32(static_cast<int>(ak[i * a.row])));
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], ai, bv[j]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    float* ci = c + i * ldc;
    if constexpr (kScaleC) {
      const __m512 s = _mm512_set1_ps(row_scale[i]);
      for (int j = 0; j < NV; ++j) {
        _mm512_store_ps(ci + 16 * j, _mm512_fmadd_ps(_mm512_load_ps(ci + 16 * j), s, acc[i][j]));
      }
    } else {
      for (int j = 0; j < NV; ++j) _mm512_store_ps(ci + 16 * j, acc[i][j]);
    }
  }
}

template <int NV, bool kScaleC>
TESSERA_BF16_DOT_ATTR inline void PairMicroTileRows(int64_t mr, PairA a,
                                                    const uint32_t* HWY_RESTRICT b, int64_t ldb,
                                                    int64_t k, float* HWY_RESTRICT c, int64_t ldc,
                                                    const float* HWY_RESTRICT row_scale) {
  static_assert(kPairRows == 8, "the switch below lists 1..kPairRows");
  switch (mr) {
    case 8:
      return PairMicroTile<8, NV, kScaleC>(a, b, ldb, k, c, ldc, row_scale);
    case 7:
      return PairMicroTile<7, NV, kScaleC>(a, b, ldb, k, c, ldc, row_scale);
    case 6:
      return PairMicroTile<6, NV, kScaleC>(a, b, ldb, k, c, ldc, row_scale);
    case 5:
      return PairMicroTile<5, NV, kScaleC>(a, b, ldb, k, c, ldc, row_scale);
    case 4:
      return PairMicroTile<4, NV, kScaleC>(a, b, ldb, k, c, ldc, row_scale);
    case 3:
      return PairMicroTile<3, NV, kScaleC>(a, b, ldb, k, c, ldc, row_scale);
    case 2:
      return PairMicroTile<2, NV, kScaleC>(a, b, ldb, k, c, ldc, row_scale);
    default:
      return PairMicroTile<1, NV, kScaleC>(a, b, ldb, k, c, ldc, row_scale);
  }
}

// C[m x n] (=|= C * row_scale +) A . B over k pairs; n % 16 == 0, C rows
// 64-byte aligned. Row blocks outside, as TileGemm (tile_gemm-inl.h).
template <bool kScaleC>
TESSERA_BF16_DOT_ATTR HWY_NOINLINE void PairGemm(int64_t m, int64_t n, int64_t k, PairA a,
                                                 const uint32_t* HWY_RESTRICT b, int64_t ldb,
                                                 float* HWY_RESTRICT c, int64_t ldc,
                                                 const float* HWY_RESTRICT row_scale) {
  for (int64_t row = 0; row < m; row += kPairRows) {
    const int64_t mr = m - row < kPairRows ? m - row : kPairRows;
    const PairA ar{a.base + row * a.row, a.row, a.col};
    const float* scale = kScaleC ? row_scale + row : nullptr;
    for (int64_t col = 0; col < n;) {
      float* cr = c + row * ldc + col;
      if (col + 32 <= n) {
        PairMicroTileRows<2, kScaleC>(mr, ar, b + col, ldb, k, cr, ldc, scale);
        col += 32;
      } else {
        PairMicroTileRows<1, kScaleC>(mr, ar, b + col, ldb, k, cr, ldc, scale);
        col += 16;
      }
    }
  }
}

// P^T [key_count x ld] f32 (st) -> P pairs [ceil(key_count / 2) x ld] in place, columns
// [0, cols) (a multiple of 16): word
// (q, c) = bf16(P^T[2q][c]) | bf16(P^T[2q + 1][c]) << 16, round to nearest
// even; an odd key_count's last pair gets 0 for its missing key. Row q is written
// after rows 2q and 2q + 1 are read, and later steps read rows > q only.
TESSERA_BF16_DOT_ATTR HWY_NOINLINE void ProbabilitiesToPairs(float* HWY_RESTRICT st, int64_t ld,
                                                             int64_t cols, int64_t key_count) {
  // Interleaves [lo0..lo15, hi0..hi15] into [lo0, hi0, lo1, hi1, ...].
  const __m512i interleave =
      _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                       21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  auto* pairs = reinterpret_cast<uint32_t*>(st);
  for (int64_t q = 0; 2 * q < key_count; ++q) {
    const float* lo = st + 2 * q * ld;
    const float* hi = 2 * q + 1 < key_count ? lo + ld : nullptr;
    for (int64_t c = 0; c < cols; c += 16) {
      const __m512 l = _mm512_load_ps(lo + c);
      const __m512 h = hi != nullptr ? _mm512_load_ps(hi + c) : _mm512_setzero_ps();
      const __m512i both = __builtin_bit_cast(__m512i, _mm512_cvtne2ps_pbh(h, l));
      _mm512_store_si512(pairs + q * ld + c, _mm512_permutexvar_epi16(interleave, both));
    }
  }
}

// V rows [j0, j0 + key_count) (bf16, element stride `stride`) -> V pairs
// [ceil(key_count / 2) x ld_dv]: word (q, d) = V[2q][d] | V[2q + 1][d] << 16,
// zero in the padding columns d >= dv and for an odd key_count's missing key.
TESSERA_BF16_DOT_ATTR HWY_NOINLINE void PackValuePairs(const uint16_t* const* rows, int64_t stride,
                                                       int64_t key_count, int64_t dv, int64_t ld_dv,
                                                       uint32_t* HWY_RESTRICT out) {
  for (int64_t q = 0; 2 * q < key_count; ++q) {
    const uint16_t* lo = rows[2 * q];
    const uint16_t* hi = 2 * q + 1 < key_count ? rows[2 * q + 1] : nullptr;
    uint32_t* o = out + q * ld_dv;
    if (stride == 1) {
      for (int64_t d = 0; d < ld_dv; d += 16) {
        const int64_t left = dv - d;
        const __mmask16 mask = left >= 16 ? 0xFFFF : left <= 0 ? 0 : (1u << left) - 1;
        const __m512i l = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, lo + d));
        const __m512i h = hi != nullptr
                              ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, hi + d))
                              : _mm512_setzero_si512();
        _mm512_store_si512(o + d, _mm512_or_si512(l, _mm512_slli_epi32(h, 16)));
      }
    } else {
      for (int64_t d = 0; d < ld_dv; ++d) {
        const uint32_t l = d < dv ? lo[d * stride] : 0u;
        const uint32_t h = d < dv && hi != nullptr ? hi[d * stride] : 0u;
        o[d] = l | h << 16;
      }
    }
  }
}

#undef TESSERA_BF16_DOT_ATTR

#else  // targets without the instruction: the path is not compiled here

inline constexpr bool kHasBf16Dot = false;

#endif

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

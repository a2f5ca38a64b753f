// cpu.flash per-target code: the two products on Intel AMX tiles, for bf16
// inputs with D % 32 == 0 on CPUs with AMX-BF16 whose kernel granted the
// tile state (flash_params.cc). One tdpbf16ps adds a 16 x 32 bf16 by
// 32 x 16 bf16 product to a 16 x 16 f32 tile: measured 3.8 TFLOP/s on one
// core of the Xeon this was built on, against 0.25 for the f32 FMA ports,
// so the products stop being the bottleneck and the f32 softmax becomes it.
//
// Layouts (u16 = one bf16; u32 = a bf16 pair, the low half the even element;
// AMX's B operand wants its reduced dim in such pairs):
//   scores:  S^T [keys x cols] = K [keys x D] . Qpairs [D/2 x cols]
//            A = the K rows as they are (copied bf16), B = the Q pairs of
//            the bf16 dot path (PackQPairs), C stored to st as before.
//   output:  O^T [Dv x cols] += V^T [Dv x keys] . Ppairs [keys/2 x cols]
//            A = V^T (PackValueTransposed, once per K/V tile), B = P^T
//            rounded to pairs in place (ProbabilitiesToPairs), C loaded
//            from and stored to the block's O^T, which the caller scaled
//            by alpha first.
// All eight tile registers are configured 16 rows x 64 bytes; C is blocked
// 2 x 2 tiles (tmm0-3), A in tmm4-5, B in tmm6-7. Key counts are padded to
// 32 (the caller zeroes the padding), column counts are multiples of 16,
// D and the padded Dv multiples of 32 (kAmxDvStep).
//
// Highway 1.0.3 has no AMX target, so these use the intrinsics directly in
// the AVX3 targets with the AMX features added to the function attribute,
// as bf16_dot-inl.h does. GCC's tile intrinsics are asm statements without a
// memory clobber (tile numbers are spliced into the instruction text, hence
// the literal 0-7 below), so each kernel is bracketed by compiler barriers:
// the stores that fill its operands and the loads of its results are not
// moved across it.
// AMX-BF16 treats bf16 denormal inputs as zero and flushes denormal
// results; the conformance bound covers that (it is below the bf16 rounding
// of P).
#if defined(TESSERA_CPU_FLASH_AMX_TILES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_AMX_TILES_INL_H_
#undef TESSERA_CPU_FLASH_AMX_TILES_INL_H_
#else
#define TESSERA_CPU_FLASH_AMX_TILES_INL_H_
#endif

#include <cstdint>

#include "cpu_flash/bf16_dot-inl.h"
#include "cpu_flash/flash_params.h"
#include "hwy/highway.h"

#if TESSERA_CPU_FLASH_AVX512_TARGET
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {

#if TESSERA_CPU_FLASH_AVX512_TARGET

inline constexpr bool kHasAmx = true;

#define TESSERA_AMX_ATTR __attribute__((target(HWY_TARGET_STR ",avx512bf16,amx-tile,amx-bf16")))

inline void AmxCompilerBarrier() { asm volatile("" ::: "memory"); }

// The LDTILECFG operand (palette 1).
struct alignas(64) AmxTileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tile state is per thread: every work item configures it and releases it
// (so a thread that ran AMX does not carry 8 KiB of live tile state into
// context switches after the call).
TESSERA_AMX_ATTR inline void AmxBegin() {
  AmxTileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  // Not _tile_loadconfig: GCC's version names only the first 8 bytes as
  // its memory operand, so the rest of cfg's stores can be dropped.
  asm volatile("ldtilecfg %0" ::"m"(cfg));
}
TESSERA_AMX_ATTR inline void AmxEnd() { _tile_release(); }

// C [m x n] (= or, kAccumulate, +=) A . B, the one tile GEMM of both
// products: A [m x k] bf16 rows (lda elements apart), B [k/2 x n] pairs
// (ldb words apart), C f32 (ldc floats apart). m % 32 == 0, k % 32 == 0,
// n % 16 == 0.
//   scores:  C = S^T, A = K (kt), B = Q pairs (qt)
//   output:  C = O^T (ot), A = V^T (vt), B = P pairs (st)
template <bool kAccumulate>
TESSERA_AMX_ATTR HWY_NOINLINE void AmxGemm(int64_t m, int64_t n, int64_t k,
                                           const uint16_t* HWY_RESTRICT a, int64_t lda,
                                           const uint32_t* HWY_RESTRICT b, int64_t ldb,
                                           float* HWY_RESTRICT c, int64_t ldc) {
  AmxCompilerBarrier();
  const int64_t a_stride = lda * 2, b_stride = ldb * 4, c_stride = ldc * 4;
  for (int64_t i = 0; i < m; i += 32) {
    const uint16_t* a0 = a + i * lda;
    const uint16_t* a1 = a0 + 16 * lda;
    float* c0 = c + i * ldc;
    float* c1 = c0 + 16 * ldc;
    int64_t j = 0;
    for (; j + 32 <= n; j += 32) {  // a 2 x 2 block of C tiles
      if constexpr (kAccumulate) {
        _tile_loadd(0, c0 + j, c_stride);
        _tile_loadd(1, c0 + j + 16, c_stride);
        _tile_loadd(2, c1 + j, c_stride);
        _tile_loadd(3, c1 + j + 16, c_stride);
      } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
      }
      for (int64_t x = 0; x < k; x += 32) {
        const uint32_t* bx = b + x / 2 * ldb + j;
        _tile_loadd(4, a0 + x, a_stride);
        _tile_loadd(5, a1 + x, a_stride);
        _tile_loadd(6, bx, b_stride);
        _tile_loadd(7, bx + 16, b_stride);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      _tile_stored(0, c0 + j, c_stride);
      _tile_stored(1, c0 + j + 16, c_stride);
      _tile_stored(2, c1 + j, c_stride);
      _tile_stored(3, c1 + j + 16, c_stride);
    }
    if (j < n) {  // one column of C tiles left
      if constexpr (kAccumulate) {
        _tile_loadd(0, c0 + j, c_stride);
        _tile_loadd(2, c1 + j, c_stride);
      } else {
        _tile_zero(0);
        _tile_zero(2);
      }
      for (int64_t x = 0; x < k; x += 32) {
        _tile_loadd(4, a0 + x, a_stride);
        _tile_loadd(5, a1 + x, a_stride);
        _tile_loadd(6, b + x / 2 * ldb + j, b_stride);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(2, 5, 6);
      }
      _tile_stored(0, c0 + j, c_stride);
      _tile_stored(2, c1 + j, c_stride);
    }
  }
  AmxCompilerBarrier();
}

// Transposes 16 x 16 32-bit words in registers: r[j] becomes column j
// (32-bit, then 64-bit interleaves, then two rounds of 128-bit lane moves).
TESSERA_AMX_ATTR inline void Transpose16x16(__m512i r[16]) {
  __m512i t[16], u[16], v[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // u[4g + c], 128-bit lane k: rows 4g..4g+3 at column 4k + c.
  for (int g = 0; g < 4; ++g) {
    u[4 * g + 0] = _mm512_unpacklo_epi64(t[4 * g + 0], t[4 * g + 2]);
    u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g + 0], t[4 * g + 2]);
    u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
    u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
  }
  // Lane k of the four row groups side by side: column 4k + c.
  for (int c = 0; c < 4; ++c) {
    v[c] = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x88);           // lanes 0, 2 of groups 0, 1
    v[4 + c] = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xdd);       // lanes 1, 3
    v[8 + c] = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x88);  // groups 2, 3
    v[12 + c] = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xdd);
  }
  for (int c = 0; c < 4; ++c) {
    r[0 + c] = _mm512_shuffle_i32x4(v[c], v[8 + c], 0x88);
    r[8 + c] = _mm512_shuffle_i32x4(v[c], v[8 + c], 0xdd);
    r[4 + c] = _mm512_shuffle_i32x4(v[4 + c], v[12 + c], 0x88);
    r[12 + c] = _mm512_shuffle_i32x4(v[4 + c], v[12 + c], 0xdd);
  }
}

// V rows [key_count x dv] bf16 (unit stride; rows[j] is key j's) straight to V^T
// pairs [dvp x kBlockKeys / 2], word (d, q) = V[2q][d] | V[2q + 1][d] << 16,
// 16 pairs x 16 columns at a time: the pairs are formed in registers and
// transposed there, with no V-pairs block in between (PackValuePairs then
// TransposeValuePairs wrote and re-read one). Keys past key_count and rows d >= dv
// are 0 (P is 0 there, and 0 * a stale NaN would not be). vt is 64-byte
// aligned.
TESSERA_AMX_ATTR HWY_NOINLINE void PackValueTiles(const uint16_t* const* rows, int64_t key_count,
                                                  int64_t dv, int64_t dvp,
                                                  uint32_t* HWY_RESTRICT vt) {
  constexpr int64_t kPairsPerRow = kBlockKeys / 2;
  static_assert(kPairsPerRow % 16 == 0, "whole 16 x 16 blocks per V^T row");
  for (int64_t d = 0; d < dvp; d += 16) {
    const int64_t left = dv - d;
    const __mmask16 mask = left >= 16 ? 0xFFFF : left <= 0 ? 0 : (1u << left) - 1;
    for (int64_t q = 0; q < kPairsPerRow; q += 16) {
      __m512i r[16];
      for (int64_t i = 0; i < 16; ++i) {
        const int64_t lo = 2 * (q + i), hi = lo + 1;
        r[i] = _mm512_setzero_si512();
        if (mask == 0 || lo >= key_count) continue;
        r[i] = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, rows[lo] + d));
        if (hi < key_count) {
          const __m512i h = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, rows[hi] + d));
          r[i] = _mm512_or_si512(r[i], _mm512_slli_epi32(h, 16));
        }
      }
      Transpose16x16(r);
      for (int64_t j = 0; j < 16; ++j) _mm512_store_si512(vt + (d + j) * kPairsPerRow + q, r[j]);
    }
  }
}

// V pairs [ceil(key_count/2) x ld_vp] (PackValuePairs) -> V^T [dvp x kBlockKeys]
// bf16, i.e. as pairs word (d, q) = V[2q][d] | V[2q + 1][d] << 16: a 32-bit
// transpose, one gather per 16 words. Keys past key_count and rows d >= dv are 0
// (P is 0 there, and 0 * a stale NaN would not be).
TESSERA_AMX_ATTR HWY_NOINLINE void TransposeValuePairs(const uint32_t* HWY_RESTRICT vp,
                                                       int64_t ld_vp, int64_t key_count, int64_t dv,
                                                       int64_t dvp, uint32_t* HWY_RESTRICT vt) {
  constexpr int64_t kPairsPerRow = kBlockKeys / 2;
  static_assert(kPairsPerRow % 16 == 0, "whole gathers per V^T row");
  const int64_t pairs = (key_count + 1) / 2;
  const __m512i rows =
      _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                         _mm512_set1_epi32(static_cast<int>(ld_vp)));
  for (int64_t d = 0; d < dvp; ++d) {
    uint32_t* out = vt + d * kPairsPerRow;
    for (int64_t q = 0; q < kPairsPerRow; q += 16) {
      const int64_t left = d < dv ? pairs - q : 0;
      const __mmask16 mask = left >= 16 ? 0xFFFF : left <= 0 ? 0 : (1u << left) - 1;
      const __m512i words = mask == 0 ? _mm512_setzero_si512()
                                      : _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask,
                                                                    rows, vp + q * ld_vp + d, 4);
      _mm512_store_si512(out + q, words);
    }
  }
}

#undef TESSERA_AMX_ATTR

#else  // targets without AMX: the path is not compiled here

inline constexpr bool kHasAmx = false;

#endif

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

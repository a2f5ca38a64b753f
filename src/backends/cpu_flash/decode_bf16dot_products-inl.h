// cpu.flash per-target code: the decode loop's products on the bf16 dot
// product (AVX512_BF16 vdpbf16ps; decode-inl.h), for bf16 inputs on the
// bf16dot path. Compiled for the AVX-512 targets only.
#if defined(TESSERA_CPU_FLASH_DECODE_BF16DOT_PRODUCTS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_DECODE_BF16DOT_PRODUCTS_INL_H_
#undef TESSERA_CPU_FLASH_DECODE_BF16DOT_PRODUCTS_INL_H_
#else
#define TESSERA_CPU_FLASH_DECODE_BF16DOT_PRODUCTS_INL_H_
#endif

#include <cstdint>

#include "cpu_flash/decode_fma_products-inl.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/horizontal_sums-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if TESSERA_CPU_FLASH_AVX512_TARGET
// As bf16_dot-inl.h: the AVX3 target plus the instruction (Highway 1.0.3 has
// no target with AVX512_BF16).
#define TESSERA_DECODE_DOT_ATTR __attribute__((target(HWY_TARGET_STR ",avx512bf16")))

// One step of 32 elements (`mask`: which of them exist) for DotTileBf16.
template <int kKeys, int kHeads, class V>
TESSERA_DECODE_DOT_ATTR HWY_INLINE void DotStepBf16(V* acc, const hwy::bfloat16_t* k_row,
                                                    int64_t k_stride, const hwy::bfloat16_t* q,
                                                    int64_t d_len, int64_t d, __mmask32 mask) {
  __m512bh k[kKeys];
  for (int j = 0; j < kKeys; ++j) {
    k[j] = __builtin_bit_cast(__m512bh, _mm512_maskz_loadu_epi16(mask, k_row + j * k_stride + d));
  }
  for (int i = 0; i < kHeads; ++i) {
    const __m512bh qi =
        __builtin_bit_cast(__m512bh, _mm512_maskz_loadu_epi16(mask, q + i * d_len + d));
    for (int j = 0; j < kKeys; ++j) {
      acc[j * kHeads + i].raw = _mm512_dpbf16_ps(acc[j * kHeads + i].raw, k[j], qi);
    }
  }
}

// The bf16dot path's scores (bf16 q and K): DotTile on the bf16 dot product,
// 32 elements of a row per instruction instead of 16 per FMA, and no
// widening of K. A product of two bf16 values is exact in f32, so only the
// order of the additions differs from DotTile. D % 32 is a masked load of
// the tail (zeros add nothing). At most 8 accumulators (kKeys * kHeads).
template <int kKeys, int kHeads, class DF>
TESSERA_DECODE_DOT_ATTR HWY_INLINE void DotTileBf16(DF df,
                                                    const hwy::bfloat16_t* HWY_RESTRICT k_row,
                                                    int64_t k_stride,
                                                    const hwy::bfloat16_t* HWY_RESTRICT q,
                                                    int64_t d_len, float mul,
                                                    float* HWY_RESTRICT out, int64_t ld_out) {
  static_assert(kKeys * kHeads <= 8);
  hn::Vec<DF> acc[8];
  for (int a = 0; a < 8; ++a) acc[a] = hn::Zero(df);
  int64_t d = 0;
  for (; d + 32 <= d_len; d += 32) {
    DotStepBf16<kKeys, kHeads>(acc, k_row, k_stride, q, d_len, d, ~__mmask32{0});
  }
  if (d < d_len) {
    const __mmask32 tail = (__mmask32{1} << (d_len - d)) - __mmask32{1};
    DotStepBf16<kKeys, kHeads>(acc, k_row, k_stride, q, d_len, d, tail);
  }
  const hn::Half<DF> dh;
  alignas(32) float sums[8];
  hn::Store(hn::Mul(SumsOf8Wide(df, acc), hn::Set(dh, mul)), dh, sums);
  for (int j = 0; j < kKeys; ++j) {
    for (int i = 0; i < kHeads; ++i) out[j * ld_out + i] = sums[j * kHeads + i];
  }
}

template <int kKeys, class DF>
TESSERA_DECODE_DOT_ATTR HWY_INLINE void DotTileBf16Heads(DF df, int64_t heads,
                                                         const hwy::bfloat16_t* k_row,
                                                         int64_t k_stride, const hwy::bfloat16_t* q,
                                                         int64_t d_len, float mul, float* out,
                                                         int64_t ld_out) {
  switch (heads) {
    case 4:
      return DotTileBf16<kKeys, 4>(df, k_row, k_stride, q, d_len, mul, out, ld_out);
    case 3:
      return DotTileBf16<kKeys, 3>(df, k_row, k_stride, q, d_len, mul, out, ld_out);
    case 2:
      return DotTileBf16<kKeys, 2>(df, k_row, k_stride, q, d_len, mul, out, ld_out);
    default:
      return DotTileBf16<kKeys, 1>(df, k_row, k_stride, q, d_len, mul, out, ld_out);
  }
}

// ScoreKeys on the bf16 dot product: the same tiles of keys and heads.
template <class DF>
TESSERA_DECODE_DOT_ATTR inline void ScoreKeysBf16(DF df, int64_t heads, int64_t keys,
                                                  const hwy::bfloat16_t* k_row, int64_t k_stride,
                                                  const hwy::bfloat16_t* q, int64_t d_len,
                                                  float mul, float* s, int64_t ld_s) {
  int64_t j = 0;
  if (heads == 1) {
    for (; j + 8 <= keys; j += 8) {
      DotTileBf16<8, 1>(df, k_row + j * k_stride, k_stride, q, d_len, mul, s + j * ld_s, ld_s);
    }
  } else if (heads == 2) {
    for (; j + 4 <= keys; j += 4) {
      DotTileBf16<4, 2>(df, k_row + j * k_stride, k_stride, q, d_len, mul, s + j * ld_s, ld_s);
    }
  }
  for (; j + 2 <= keys; j += 2) {
    DotTileBf16Heads<2>(df, heads, k_row + j * k_stride, k_stride, q, d_len, mul, s + j * ld_s,
                        ld_s);
  }
  if (j < keys) {
    DotTileBf16Heads<1>(df, heads, k_row + j * k_stride, k_stride, q, d_len, mul, s + j * ld_s,
                        ld_s);
  }
}

// The bf16dot path's P V, on the bf16 dot product over pairs of keys: P of
// a step is rounded to bf16 pairs of consecutive keys (as the bf16dot tile
// loop rounds P), and each V row pair is interleaved word by word, so one
// vdpbf16ps adds p[2jp] v[2jp][d] + p[2jp+1] v[2jp+1][d] to 16 columns:
// half the multiply instructions of the f32 FMAs and no widening of V.

// pp[jp * hp + h] = p[2jp][h] (low half) and p[2jp + 1][h], as bf16, for
// `pairs` pairs; s is the step's p [kDecodeStep x hp], hp a multiple of 16.
TESSERA_DECODE_DOT_ATTR inline void ProbabilityPairs(int64_t hp, int64_t pairs,
                                                     const float* HWY_RESTRICT s,
                                                     uint32_t* HWY_RESTRICT pp) {
  // Word 2i of the result is word i (the even key's), word 2i + 1 word
  // 16 + i (the odd key's) of cvtne2ps_pbh(odd, even).
  alignas(64) static constexpr uint16_t kInterleave[32] = {
      0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
      8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i interleave = _mm512_load_si512(kInterleave);
  for (int64_t jp = 0; jp < pairs; ++jp) {
    for (int64_t hv = 0; hv < hp; hv += 16) {
      const __m512 even = _mm512_loadu_ps(s + 2 * jp * hp + hv);
      const __m512 odd = _mm512_loadu_ps(s + (2 * jp + 1) * hp + hv);
      const __m512i both = __builtin_bit_cast(__m512i, _mm512_cvtne2ps_pbh(odd, even));
      _mm512_storeu_si512(pp + jp * hp + hv, _mm512_permutexvar_epi16(interleave, both));
    }
  }
}

// O[h .. h + kHeads)[0, 32) += sum over `pairs` key pairs (v_row: the first
// key's row at column 0). An interleaved V pair's f32 lane 4k + t holds
// column 8k + t (unpacklo) or 8k + 4 + t (unpackhi), so O's 32 columns are
// held as those two vectors and put back in order at the end.
template <int kHeads>
TESSERA_DECODE_DOT_ATTR HWY_INLINE void AccumulatePairs32(const hwy::bfloat16_t* HWY_RESTRICT v_row,
                                                          int64_t v_stride, int64_t pairs,
                                                          const uint32_t* HWY_RESTRICT pp,
                                                          int64_t ld_p, float* HWY_RESTRICT o,
                                                          int64_t ld_dv) {
  alignas(64) static constexpr int32_t kToLo[16] = {0,  1,  2,  3,  8,  9,  10, 11,
                                                    16, 17, 18, 19, 24, 25, 26, 27};
  alignas(64) static constexpr int32_t kToHi[16] = {4,  5,  6,  7,  12, 13, 14, 15,
                                                    20, 21, 22, 23, 28, 29, 30, 31};
  alignas(64) static constexpr int32_t kBack0[16] = {0, 1, 2, 3, 16, 17, 18, 19,
                                                     4, 5, 6, 7, 20, 21, 22, 23};
  alignas(64) static constexpr int32_t kBack1[16] = {8,  9,  10, 11, 24, 25, 26, 27,
                                                     12, 13, 14, 15, 28, 29, 30, 31};
  const __m512i to_lo = _mm512_load_si512(kToLo), to_hi = _mm512_load_si512(kToHi);
  __m512 lo[kHeads], hi[kHeads];
  for (int i = 0; i < kHeads; ++i) {
    const __m512 o0 = _mm512_loadu_ps(o + i * ld_dv), o1 = _mm512_loadu_ps(o + i * ld_dv + 16);
    lo[i] = _mm512_permutex2var_ps(o0, to_lo, o1);
    hi[i] = _mm512_permutex2var_ps(o0, to_hi, o1);
  }
  for (int64_t jp = 0; jp < pairs; ++jp) {
    const __m512i a = _mm512_loadu_si512(v_row + 2 * jp * v_stride);
    const __m512i b = _mm512_loadu_si512(v_row + (2 * jp + 1) * v_stride);
    const __m512bh v_lo = __builtin_bit_cast(__m512bh, _mm512_unpacklo_epi16(a, b));
    const __m512bh v_hi = __builtin_bit_cast(__m512bh, _mm512_unpackhi_epi16(a, b));
    for (int i = 0; i < kHeads; ++i) {
      const __m512bh w =
          __builtin_bit_cast(__m512bh, _mm512_set1_epi32(static_cast<int>(pp[jp * ld_p + i])));
      lo[i] = _mm512_dpbf16_ps(lo[i], v_lo, w);
      hi[i] = _mm512_dpbf16_ps(hi[i], v_hi, w);
    }
  }
  const __m512i back0 = _mm512_load_si512(kBack0), back1 = _mm512_load_si512(kBack1);
  for (int i = 0; i < kHeads; ++i) {
    _mm512_storeu_ps(o + i * ld_dv, _mm512_permutex2var_ps(lo[i], back0, hi[i]));
    _mm512_storeu_ps(o + i * ld_dv + 16, _mm512_permutex2var_ps(lo[i], back1, hi[i]));
  }
}

// AccumulateHeads for the bf16dot path: columns in blocks of 32 on the dot
// product over the step's key pairs (and an odd last key on the f32
// FMAs), the columns past the last block on the f32 FMAs for every key.
template <class DF>
TESSERA_DECODE_DOT_ATTR inline void AccumulateHeadsBf16(DF df, int64_t heads,
                                                        const hwy::bfloat16_t* v_row,
                                                        int64_t v_stride, int64_t dv,
                                                        int64_t key_count, const float* p_rows,
                                                        const uint32_t* pp, int64_t ld_p, float* o,
                                                        int64_t ld_dv) {
  const int64_t pairs = key_count / 2, blocks_end = dv / 32 * 32;
  for (int64_t d = 0; d < blocks_end; d += 32) {
    switch (heads) {
      case 4:
        AccumulatePairs32<4>(v_row + d, v_stride, pairs, pp, ld_p, o + d, ld_dv);
        break;
      case 3:
        AccumulatePairs32<3>(v_row + d, v_stride, pairs, pp, ld_p, o + d, ld_dv);
        break;
      case 2:
        AccumulatePairs32<2>(v_row + d, v_stride, pairs, pp, ld_p, o + d, ld_dv);
        break;
      default:
        AccumulatePairs32<1>(v_row + d, v_stride, pairs, pp, ld_p, o + d, ld_dv);
        break;
    }
  }
  if (key_count % 2 != 0 && blocks_end > 0) {
    AccumulateHeads(df, heads, v_row + (key_count - 1) * v_stride, v_stride, blocks_end, 1,
                    p_rows + (key_count - 1) * ld_p, ld_p, o, ld_dv);
  }
  if (blocks_end < dv) {
    AccumulateHeads(df, heads, v_row + blocks_end, v_stride, dv - blocks_end, key_count, p_rows,
                    ld_p, o + blocks_end, ld_dv);
  }
}

// The decode loop's products on this path (decode-inl.h, DecodeItemOf): q
// kept bf16, scores on the dot product, each step's p rounded to bf16 pairs
// of keys for P V (m, l and O stay f32).
struct DecodeBf16DotProducts {
  using Element = hwy::bfloat16_t;
  hwy::bfloat16_t* q;  // [Hq x D], in the q scratch's first half
  uint32_t* pairs;     // the step's p as bf16 key pairs [kDecodeStep / 2 x hp]

  DecodeBf16DotProducts(const DecodeLayout& lay, float* scratch)
      : q(reinterpret_cast<hwy::bfloat16_t*>(scratch + lay.q)),
        pairs(reinterpret_cast<uint32_t*>(scratch + lay.pp)) {}

  template <class DF>
  HWY_INLINE void LoadQuery(DF /*df*/, const FlashParams& p, const UnitGeom& g) {
    for (int64_t h = 0; h < p.hq; ++h) {
      const auto* row = static_cast<const hwy::bfloat16_t*>(p.q) + q_offset(p, g, h);
      for (int64_t i = 0; i < p.d; ++i) q[h * p.d + i] = row[i * p.qs[3]];
    }
  }
  template <class DF>
  HWY_INLINE void Score(DF df, int64_t heads, int64_t keys, const Element* k_row, int64_t k_stride,
                        int64_t head, int64_t d, float mul, float* s, int64_t ld_s) const {
    ScoreKeysBf16(df, heads, keys, k_row, k_stride, q + head * d, d, mul, s, ld_s);
  }
  HWY_INLINE void PrepareProbabilities(int64_t hp, int64_t keys, const float* s) const {
    ProbabilityPairs(hp, keys / 2, s, pairs);
  }
  template <class DF>
  HWY_INLINE void Accumulate(DF df, int64_t heads, const Element* v_row, int64_t v_stride,
                             int64_t dv, int64_t keys, int64_t head, const float* p_rows,
                             int64_t ld_p, float* o, int64_t ld_dv) const {
    AccumulateHeadsBf16(df, heads, v_row, v_stride, dv, keys, p_rows, pairs + head, ld_p, o, ld_dv);
  }
};

#undef TESSERA_DECODE_DOT_ATTR
#endif  // AVX3 targets

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// cpu.flash per-target code: the decode form of the f32-products path, for
// one query position per sequence (Sq = 1), where attention is a stream over
// K and V and the only goal is to read them at memory speed.
//
// Why a loop of its own: the tile loop (attention_unit-inl.h) takes one KV
// head per unit, so with the usual [B, S, H, D] layout it reads D elements
// of K, jumps Hkv * D elements (4 KiB for Hkv = 8, D = 128) to the next key,
// and touches a new page on every key: hardware prefetchers stop at page
// boundaries, so each K and V row waited for memory (S4 f32 ran at 18-25% of
// the triad bandwidth). Here a work item is (sequence, key range) over every
// head, so K and V are read key after key, each key's whole [Hkv, D] row,
// and the scores, probabilities and outputs of all Hq heads stay in L1/L2:
//   for each step of kDecodeStep keys:
//     s[j][h] = (q_h . k_j) * scale * log2(e)   (the K and V rows
//                                                kDecodePrefetchBytes ahead
//                                                are prefetched meanwhile)
//     online softmax over the step, vectors across heads: m, l, O *= alpha
//     O[h] += p[j][h] * v_j                      keys in order, per KV head
//   out = O / l, lse = m ln 2 + ln l (or the split's partial O, m, l)
// Masks are a key range (one query position sees a contiguous range of keys
// under causal and window masks), so no per-element mask test is needed.
// docs/DECISIONS.md "cpu.flash decode: steps of 16 keys, prefetch spread
// over the products" has the measurements behind the shape of this loop.
#if defined(TESSERA_CPU_FLASH_DECODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_DECODE_INL_H_
#undef TESSERA_CPU_FLASH_DECODE_INL_H_
#else
#define TESSERA_CPU_FLASH_DECODE_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cpu_flash/attention_unit-inl.h"
#include "cpu_flash/bf16_dot-inl.h"
#include "cpu_flash/convert-inl.h"
#include "cpu_flash/exp2-inl.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/flash_unit.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// The bf16dot path's functions below: as bf16_dot-inl.h, the AVX3 target
// plus the instruction (Highway 1.0.3 has no target with AVX512_BF16).
#define TESSERA_DECODE_DOT_ATTR __attribute__((target(HWY_TARGET_STR ",avx512bf16")))
#endif

// One K or V vector at `row + i` as f32; T is float or hwy::bfloat16_t.
template <typename T, class DF>
HWY_INLINE hn::Vec<DF> LoadAsF32(DF df, const T* HWY_RESTRICT row, int64_t i) {
  if constexpr (hwy::IsSame<T, float>()) {
    return hn::LoadU(df, row + i);
  } else {
    const hn::Rebind<T, DF> dt;
    return hn::PromoteTo(df, hn::LoadU(dt, row + i));
  }
}

template <typename T>
HWY_INLINE float ScalarAsF32(const T* row, int64_t i) {
  if constexpr (hwy::IsSame<T, float>()) {
    return row[i];
  } else {
    return hwy::F32FromBF16(row[i]);
  }
}

// The sequence `seq` of the batch: where its rows are and which keys its one
// query sees. rows = Hq (row r is query head r).
inline UnitGeom DecodeGeom(const FlashParams& p, int64_t seq, int64_t* key_lo, int64_t* key_hi) {
  UnitGeom g;
  g.b = seq;
  if (p.cu_q != nullptr) {
    g.q_begin = p.cu_q[seq];
    g.q_len = p.cu_q[seq + 1] - g.q_begin;
    g.k_begin = p.cu_k[seq];
    g.k_len = p.cu_k[seq + 1] - g.k_begin;
  } else {
    g.tb = seq;
    g.q_len = p.sq;
    g.k_len = p.sk;
  }
  g.npos = std::min<int64_t>(g.q_len, 1);
  g.nh = p.hq;
  g.rows = g.npos * p.hq;
  // The one query's visible keys [lo, hi] (position 0).
  int64_t lo = 0, hi = 0;
  visible_keys(p, g, 0, &lo, &hi);
  *key_lo = lo;
  *key_hi = hi + 1;
  return g;
}

// Pins v to a register. GCC folds the load of a vector that several FMAs
// read into each of them (DotTile's q: once per key), which doubles the
// loads of a loop that is then bound by its loads, not its FMAs.
template <class V>
HWY_INLINE void KeepInRegister(V& v) {
#if HWY_ARCH_X86 && defined(__GNUC__) && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  if constexpr (sizeof(v.raw) == 64) {
    asm("" : "+v"(v.raw));
  } else {
    asm("" : "+x"(v.raw));
  }
#else
  (void)v;
#endif
}

// The sums of 8 vectors, in order, as one vector (8 lanes only): a
// transpose-add (pairs of lanes, pairs of pairs within each 128-bit block,
// then the two blocks) instead of 8 horizontal sums.
#if HWY_TARGET != HWY_SCALAR
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE V SumsOf8(DF df, const V* a) {
  const hn::Repartition<double, DF> dd;
  const auto pairs = [&](V x, V y) {
    return hn::Add(hn::InterleaveLower(df, x, y), hn::InterleaveUpper(df, x, y));
  };
  const auto quads = [&](V xy, V zw) {
    const auto x = hn::BitCast(dd, xy), y = hn::BitCast(dd, zw);
    return hn::Add(hn::BitCast(df, hn::InterleaveLower(dd, x, y)),
                   hn::BitCast(df, hn::InterleaveUpper(dd, x, y)));
  };
  const V lo = quads(pairs(a[0], a[1]), pairs(a[2], a[3]));
  const V hi = quads(pairs(a[4], a[5]), pairs(a[6], a[7]));
  return hn::Add(hn::ConcatLowerLower(df, hi, lo), hn::ConcatUpperUpper(df, hi, lo));
}

// The same for 16-lane vectors (AVX-512): each folded to 8 lanes (its two
// 256-bit halves added), then the 8-lane transpose-add. About 37 256-bit
// operations for the 8 sums against ~64 512-bit ones for 8 horizontal sums,
// which cost as much as the dot products themselves in the decode loop
// (docs/DECISIONS.md, "16-lane transpose-add on AVX-512").
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE auto SumsOf8Wide(DF /*df: the type only*/, const V* a) {
  const hn::Half<DF> dh;
  hn::Vec<decltype(dh)> halves[8];
  for (int i = 0; i < 8; ++i) halves[i] = hn::Add(hn::LowerHalf(dh, a[i]), hn::UpperHalf(dh, a[i]));
  return SumsOf8(dh, halves);
}
#endif

// Dots of kKeys K rows with kHeads query rows (q + i * d_len): each K
// vector load feeds every head and each q vector load every key, with
// kKeys * kHeads independent accumulators (the counts are template
// arguments so the accumulators stay in registers).
// out[j * ld_out + i] = (q_i . k_j) * mul.
template <int kKeys, int kHeads, typename T, class DF>
HWY_INLINE void DotTile(DF df, const T* HWY_RESTRICT k_row, int64_t k_stride,
                        const float* HWY_RESTRICT q, int64_t d_len, float mul,
                        float* HWY_RESTRICT out, int64_t ld_out) {
  using V = hn::Vec<DF>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  V acc[kKeys * kHeads];
  for (int a = 0; a < kKeys * kHeads; ++a) acc[a] = hn::Zero(df);
  int64_t d = 0;
  for (; d + lanes <= d_len; d += lanes) {
    V k[kKeys];
    for (int j = 0; j < kKeys; ++j) k[j] = LoadAsF32(df, k_row + j * k_stride, d);
    for (int i = 0; i < kHeads; ++i) {
      V qi = hn::LoadU(df, q + i * d_len + d);
      if constexpr (kKeys > 1) KeepInRegister(qi);
      for (int j = 0; j < kKeys; ++j) {
        acc[j * kHeads + i] = hn::MulAdd(k[j], qi, acc[j * kHeads + i]);
      }
    }
  }
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kKeys * kHeads == 8 && (hn::MaxLanes(df) == 8 || hn::MaxLanes(df) == 16)) {
    if (d == d_len) {
      alignas(32) float sums[8];
      if constexpr (hn::MaxLanes(df) == 8) {
        hn::Store(hn::Mul(SumsOf8(df, acc), hn::Set(df, mul)), df, sums);
      } else {
        const hn::Half<DF> dh;
        hn::Store(hn::Mul(SumsOf8Wide(df, acc), hn::Set(dh, mul)), dh, sums);
      }
      for (int j = 0; j < kKeys; ++j) {
        for (int i = 0; i < kHeads; ++i) out[j * ld_out + i] = sums[j * kHeads + i];
      }
      return;
    }
  }
#endif
  for (int j = 0; j < kKeys; ++j) {
    for (int i = 0; i < kHeads; ++i) {
      float dot = hn::GetLane(hn::SumOfLanes(df, acc[j * kHeads + i]));
      for (int64_t t = d; t < d_len; ++t) {  // D not a multiple of the lanes
        dot += ScalarAsF32(k_row + j * k_stride, t) * q[i * d_len + t];
      }
      out[j * ld_out + i] = dot * mul;
    }
  }
}

// DotTile for `heads` (1..4) query heads.
template <int kKeys, typename T, class DF>
HWY_INLINE void DotTileHeads(DF df, int64_t heads, const T* k_row, int64_t k_stride, const float* q,
                             int64_t d_len, float mul, float* out, int64_t ld_out) {
  switch (heads) {
    case 4:
      return DotTile<kKeys, 4>(df, k_row, k_stride, q, d_len, mul, out, ld_out);
    case 3:
      return DotTile<kKeys, 3>(df, k_row, k_stride, q, d_len, mul, out, ld_out);
    case 2:
      return DotTile<kKeys, 2>(df, k_row, k_stride, q, d_len, mul, out, ld_out);
    default:
      return DotTile<kKeys, 1>(df, k_row, k_stride, q, d_len, mul, out, ld_out);
  }
}

// Keys per DotTile call for chunks of `heads` query heads: 8 accumulators
// (enough to hide the FMA latency on two FMA pipes) where they fit.
constexpr int64_t DecodeTileKeys(int64_t heads) { return heads == 1 ? 8 : heads == 2 ? 4 : 2; }

// s[j * ld_s + i] = (q_i . k_j) * mul for `keys` keys and `heads` heads.
template <typename T, class DF>
HWY_INLINE void ScoreKeys(DF df, int64_t heads, int64_t keys, const T* k_row, int64_t k_stride,
                          const float* q, int64_t d_len, float mul, float* s, int64_t ld_s) {
  int64_t j = 0;
  if (heads == 1) {
    for (; j + 8 <= keys; j += 8) {
      DotTile<8, 1>(df, k_row + j * k_stride, k_stride, q, d_len, mul, s + j * ld_s, ld_s);
    }
  } else if (heads == 2) {
    for (; j + 4 <= keys; j += 4) {
      DotTile<4, 2>(df, k_row + j * k_stride, k_stride, q, d_len, mul, s + j * ld_s, ld_s);
    }
  }
  for (; j + 2 <= keys; j += 2) {
    DotTileHeads<2>(df, heads, k_row + j * k_stride, k_stride, q, d_len, mul, s + j * ld_s, ld_s);
  }
  if (j < keys) {
    DotTileHeads<1>(df, heads, k_row + j * k_stride, k_stride, q, d_len, mul, s + j * ld_s, ld_s);
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

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
#else  // no bf16 dot product on this target: DecodeItem never asks for it
template <class DF>
inline void ScoreKeysBf16(DF, int64_t, int64_t, const hwy::bfloat16_t*, int64_t,
                          const hwy::bfloat16_t*, int64_t, float, float*, int64_t) {}
#endif

// O[h .. h + kHeads)[d, d + kVecs vectors) += sum_j p[j][h] * v_j[...] over
// kb keys, the O slice held in registers across the keys; p[j][i] at
// p_rows[j * ld_p + i].
template <int kHeads, int kVecs, typename T, class DF>
HWY_INLINE void AccumulateSlice(DF df, const T* HWY_RESTRICT v_row, int64_t v_stride, int64_t kb,
                                const float* HWY_RESTRICT p_rows, int64_t ld_p,
                                float* HWY_RESTRICT o, int64_t ld_dv) {
  using V = hn::Vec<DF>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  V acc[kHeads][kVecs];
  for (int i = 0; i < kHeads; ++i) {
    for (int c = 0; c < kVecs; ++c) acc[i][c] = hn::Load(df, o + i * ld_dv + c * lanes);
  }
  for (int64_t j = 0; j < kb; ++j) {
    V v[kVecs];
    for (int c = 0; c < kVecs; ++c) v[c] = LoadAsF32(df, v_row + j * v_stride, c * lanes);
    for (int i = 0; i < kHeads; ++i) {
      const V w = hn::Set(df, p_rows[j * ld_p + i]);
      for (int c = 0; c < kVecs; ++c) acc[i][c] = hn::MulAdd(w, v[c], acc[i][c]);
    }
  }
  for (int i = 0; i < kHeads; ++i) {
    for (int c = 0; c < kVecs; ++c) hn::Store(acc[i][c], df, o + i * ld_dv + c * lanes);
  }
}

template <int kVecs, typename T, class DF>
HWY_INLINE void AccumulateSliceHeads(DF df, int64_t heads, const T* v_row, int64_t v_stride,
                                     int64_t kb, const float* p_rows, int64_t ld_p, float* o,
                                     int64_t ld_dv) {
  switch (heads) {
    case 4:
      return AccumulateSlice<4, kVecs>(df, v_row, v_stride, kb, p_rows, ld_p, o, ld_dv);
    case 3:
      return AccumulateSlice<3, kVecs>(df, v_row, v_stride, kb, p_rows, ld_p, o, ld_dv);
    case 2:
      return AccumulateSlice<2, kVecs>(df, v_row, v_stride, kb, p_rows, ld_p, o, ld_dv);
    default:
      return AccumulateSlice<1, kVecs>(df, v_row, v_stride, kb, p_rows, ld_p, o, ld_dv);
  }
}

// O[h .. h + heads) += P V over Dv for kb keys: slices of 8 / heads vectors
// (8 accumulators where Dv allows), then narrower ones, then one column at a
// time. O's padding columns (up to ld_dv) stay 0: a slice past Dv would read
// V past its row.
template <typename T, class DF>
HWY_INLINE void AccumulateHeads(DF df, int64_t heads, const T* v_row, int64_t v_stride, int64_t dv,
                                int64_t kb, const float* p_rows, int64_t ld_p, float* o,
                                int64_t ld_dv) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t d = 0;
  if (heads == 1) {
    for (; d + 8 * lanes <= dv; d += 8 * lanes) {
      AccumulateSlice<1, 8>(df, v_row + d, v_stride, kb, p_rows, ld_p, o + d, ld_dv);
    }
  }
  if (heads <= 2) {
    for (; d + 4 * lanes <= dv; d += 4 * lanes) {
      AccumulateSliceHeads<4>(df, heads, v_row + d, v_stride, kb, p_rows, ld_p, o + d, ld_dv);
    }
  }
  for (; d + 2 * lanes <= dv; d += 2 * lanes) {
    AccumulateSliceHeads<2>(df, heads, v_row + d, v_stride, kb, p_rows, ld_p, o + d, ld_dv);
  }
  for (; d + lanes <= dv; d += lanes) {
    AccumulateSliceHeads<1>(df, heads, v_row + d, v_stride, kb, p_rows, ld_p, o + d, ld_dv);
  }
  for (; d < dv; ++d) {
    for (int64_t i = 0; i < heads; ++i) {
      float sum = o[i * ld_dv + d];
      for (int64_t j = 0; j < kb; ++j) {
        sum += p_rows[j * ld_p + i] * ScalarAsF32(v_row + j * v_stride, d);
      }
      o[i * ld_dv + d] = sum;
    }
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

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
                                                        int64_t v_stride, int64_t dv, int64_t kb,
                                                        const float* p_rows, const uint32_t* pp,
                                                        int64_t ld_p, float* o, int64_t ld_dv) {
  const int64_t pairs = kb / 2, blocks_end = dv / 32 * 32;
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
  if (kb % 2 != 0 && blocks_end > 0) {
    AccumulateHeads(df, heads, v_row + (kb - 1) * v_stride, v_stride, blocks_end, 1,
                    p_rows + (kb - 1) * ld_p, ld_p, o, ld_dv);
  }
  if (blocks_end < dv) {
    AccumulateHeads(df, heads, v_row + blocks_end, v_stride, dv - blocks_end, kb, p_rows, ld_p,
                    o + blocks_end, ld_dv);
  }
}
#else  // no bf16 dot product on this target: DecodeItem never asks for it
inline void ProbabilityPairs(int64_t, int64_t, const float*, uint32_t*) {}
template <class DF>
inline void AccumulateHeadsBf16(DF, int64_t, const hwy::bfloat16_t*, int64_t, int64_t, int64_t,
                                const float*, const uint32_t*, int64_t, float*, int64_t) {}
#endif

// The online softmax of one step of kb keys, vectors across the heads
// (s[j * hp + h], hp = Hq rounded up to the lanes, padding lanes 0): s
// becomes p, m and l move on, alpha[h] is the factor O[h] must be scaled by.
// Returns whether any alpha is not 1. A NaN score is skipped by the max and
// marked in nan_seen (where FastExp2 does not keep NaN).
template <class DF, class M>
HWY_INLINE bool StepSoftmax(DF df, int64_t hp, int64_t kb, float* HWY_RESTRICT s,
                            float* HWY_RESTRICT m, float* HWY_RESTRICT l, float* HWY_RESTRICT alpha,
                            M* nan_seen) {
  using V = hn::Vec<DF>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const V neg_inf = hn::Set(df, -std::numeric_limits<float>::infinity());
  const V one = hn::Set(df, 1.0f);
  bool rescale = false;
  for (int64_t hv = 0; hv < hp; hv += lanes) {
    const V m_old = hn::Load(df, m + hv);
    V mx = m_old;
    for (int64_t j = 0; j < kb; ++j) {
      const V sj = hn::Load(df, s + j * hp + hv);
      mx = hn::Max(sj, mx);  // NaN is skipped here (x86 keeps the second operand)
      if constexpr (!kExp2KeepsNaN) *nan_seen = hn::Or(*nan_seen, hn::IsNaN(sj));
    }
    // Nothing visible yet (every score -inf): subtract 0, so p = 2^-inf = 0.
    const V shift = hn::IfThenElseZero(hn::Ne(mx, neg_inf), mx);
    const V a = FastExp2(df, hn::Sub(m_old, shift));  // m_old = -inf: 0
    V sum = hn::Zero(df);
    for (int64_t j = 0; j < kb; ++j) {
      const V pj = FastExp2(df, hn::Sub(hn::Load(df, s + j * hp + hv), shift));
      hn::Store(pj, df, s + j * hp + hv);
      sum = hn::Add(sum, pj);
    }
    hn::Store(hn::MulAdd(hn::Load(df, l + hv), a, sum), df, l + hv);
    hn::Store(mx, df, m + hv);
    hn::Store(a, df, alpha + hv);
    rescale = rescale || !hn::AllTrue(df, hn::Eq(a, one));
  }
  return rescale;
}

// Item = seq * splits + split: keys of that split for every head. Writes
// the rows, or (splits > 1) the partial O, m, l to partials. kDot: the
// bf16dot path (T is bf16): q stays bf16, the scores take the bf16 dot
// product, and so does P V, with each step's p rounded to bf16 pairs of
// keys (the softmax's m, l and the O accumulators stay f32).
template <typename T, bool kDot, class DF>
HWY_NOINLINE void DecodeItemOf(DF df, const FlashParams& p, int64_t item, float* scratch,
                               float* partials) {
  using V = hn::Vec<DF>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const DecodeLayout lay = decode_layout(p.hq, p.d, p.dv);
  const int64_t hp = round_up(p.hq, lanes);  // heads padded to whole vectors
  float* q = scratch + lay.q;
  float* o = scratch + lay.o;
  float* m = scratch + lay.m;
  float* l = scratch + lay.l;
  float* s = scratch + lay.s;          // [kDecodeStep][hp]: scores, then p
  float* alpha = scratch + lay.alpha;  // [hp]
  // kDot: the step's p as bf16 pairs of keys [kDecodeStep / 2][hp].
  uint32_t* pp = reinterpret_cast<uint32_t*>(scratch + lay.pp);
  const int64_t seq = item / p.splits, split = item % p.splits;
  int64_t begin = 0, end = 0;
  const UnitGeom g = DecodeGeom(p, seq, &begin, &end);
  if (g.rows == 0) return;  // an empty varlen query: nothing to write
  split_keys(p, split, &begin, &end);
  std::fill(m, m + hp, -std::numeric_limits<float>::infinity());
  std::fill(l, l + hp, 0.0f);
  std::fill(s, s + kDecodeStep * hp, 0.0f);  // the padding heads' lanes stay 0
  std::fill(o, o + p.hq * lay.ld_dv, 0.0f);
  // kDot: q as bf16 [Hq x D] in the first half of the q scratch's bytes.
  hwy::bfloat16_t* q_bf16 = reinterpret_cast<hwy::bfloat16_t*>(q);
  if (begin < end) {
    for (int64_t h = 0; h < p.hq; ++h) {
      if constexpr (kDot) {
        const auto* row = static_cast<const hwy::bfloat16_t*>(p.q) + q_offset(p, g, h);
        for (int64_t i = 0; i < p.d; ++i) q_bf16[h * p.d + i] = row[i * p.qs[3]];
      } else {
        RowToF32(df, element(p.q, p.dtype, q_offset(p, g, h)), p.dtype, p.qs[3], p.d, q + h * p.d);
      }
    }
  }
  const float mul = p.scale * 1.44269504088896341f;  // scores in log2 units
  const T* k_seq = static_cast<const T*>(p.k) + g.tb * p.ks[0] + g.k_begin * p.ks[1];
  const T* v_seq = static_cast<const T*>(p.v) + g.tb * p.vs[0] + g.k_begin * p.vs[1];
  // Keys per score call, and how far ahead the K and V rows are asked for.
  const int64_t tile = DecodeTileKeys(std::min<int64_t>(p.group, 4));
  const int64_t row_bytes = p.hkv * p.d * static_cast<int64_t>(sizeof(T));
  const int64_t ahead =
      std::max<int64_t>(tile, kDecodePrefetchBytes / std::max<int64_t>(row_bytes, 1));
  auto nan_seen = hn::Lt(hn::Zero(df), hn::Zero(df));  // all false
  for (int64_t j0 = begin; j0 < end; j0 += kDecodeStep) {
    const int64_t kb = std::min(kDecodeStep, end - j0);
    // Scores, `tile` keys at a time in key order over every KV head, so K is
    // read as one stream; the rows `ahead` keys on are prefetched meanwhile,
    // spread over the products (a burst of prefetches would stall on full
    // line-fill buffers).
    for (int64_t j = 0; j < kb; j += tile) {
      const int64_t keys = std::min(tile, kb - j);
      const int64_t jp = j0 + j + ahead;
      const int64_t pf_keys = std::min(keys, end - jp);
      for (int64_t kvh = 0; kvh < p.hkv; ++kvh) {
        for (int64_t t = 0; t < pf_keys; ++t) {
          prefetch_to_l2(k_seq + (jp + t) * p.ks[1] + kvh * p.ks[2],
                         p.d * static_cast<int64_t>(sizeof(T)));
          prefetch_to_l2(v_seq + (jp + t) * p.vs[1] + kvh * p.vs[2],
                         p.dv * static_cast<int64_t>(sizeof(T)));
        }
        const T* k_row = k_seq + (j0 + j) * p.ks[1] + kvh * p.ks[2];
        for (int64_t h = kvh * p.group; h < (kvh + 1) * p.group; h += 4) {
          const int64_t heads = std::min<int64_t>(4, (kvh + 1) * p.group - h);
          if constexpr (kDot) {
            ScoreKeysBf16(df, heads, keys, k_row, p.ks[1], q_bf16 + h * p.d, p.d, mul,
                          s + j * hp + h, hp);
          } else {
            ScoreKeys(df, heads, keys, k_row, p.ks[1], q + h * p.d, p.d, mul, s + j * hp + h, hp);
          }
        }
      }
    }
    if (StepSoftmax(df, hp, kb, s, m, l, alpha, &nan_seen)) {
      for (int64_t h = 0; h < p.hq; ++h) {
        if (alpha[h] == 1.0f) continue;
        float* oh = o + h * lay.ld_dv;
        const V va = hn::Set(df, alpha[h]);
        for (int64_t d = 0; d < lay.ld_dv; d += lanes) {
          hn::Store(hn::Mul(hn::Load(df, oh + d), va), df, oh + d);
        }
      }
    }
    // O[h] += sum_j p[j][h] v_j, per KV head and group of heads.
    if constexpr (kDot) ProbabilityPairs(hp, kb / 2, s, pp);
    for (int64_t kvh = 0; kvh < p.hkv; ++kvh) {
      const T* v_row = v_seq + j0 * p.vs[1] + kvh * p.vs[2];
      for (int64_t h = kvh * p.group; h < (kvh + 1) * p.group; h += 4) {
        const int64_t heads = std::min<int64_t>(4, (kvh + 1) * p.group - h);
        if constexpr (kDot) {
          AccumulateHeadsBf16(df, heads, v_row, p.vs[1], p.dv, kb, s + h, pp + h, hp,
                              o + h * lay.ld_dv, lay.ld_dv);
        } else {
          AccumulateHeads(df, heads, v_row, p.vs[1], p.dv, kb, s + h, hp, o + h * lay.ld_dv,
                          lay.ld_dv);
        }
      }
    }
  }
  if constexpr (!kExp2KeepsNaN) {
    const V nan = hn::Set(df, std::numeric_limits<float>::quiet_NaN());
    for (int64_t hv = 0; hv < hp; hv += lanes) {
      hn::Store(hn::IfThenElse(nan_seen, nan, hn::Load(df, l + hv)), df, l + hv);
    }
  }
  if (p.splits == 1) {
    WriteRows(df, p, g, o, lay.ld_dv, m, l);
    return;
  }
  WritePartial(partials + item * p.partial_floats, p.hq, lay.ld_dv, o, m, l);
}

template <class DF>
HWY_INLINE void DecodeItem(DF df, const FlashParams& p, int64_t item, float* scratch,
                           float* partials) {
  if (p.dtype == DType::kBF16) {
    if (kHasBf16Dot && TargetProducts(p) == Products::kBf16Dot) {
      DecodeItemOf<hwy::bfloat16_t, kHasBf16Dot>(df, p, item, scratch, partials);
    } else {
      DecodeItemOf<hwy::bfloat16_t, false>(df, p, item, scratch, partials);
    }
  } else {
    DecodeItemOf<float, false>(df, p, item, scratch, partials);
  }
}

// Combines the splits of sequence `seq` (MergeRows, attention_unit-inl.h).
template <class DF>
HWY_NOINLINE void DecodeMerge(DF df, const FlashParams& p, int64_t seq, float* scratch,
                              const float* partials) {
  const DecodeLayout lay = decode_layout(p.hq, p.d, p.dv);
  int64_t begin = 0, end = 0;
  const UnitGeom g = DecodeGeom(p, seq, &begin, &end);
  if (g.rows == 0) return;
  const auto part_of = [&](int64_t split) {
    return partials + (seq * p.splits + split) * p.partial_floats;
  };
  float* o = scratch + lay.o;
  float* m = scratch + lay.m;
  float* l = scratch + lay.l;
  MergeRows(df, p.hq, lay.ld_dv, p.splits, part_of, o, m, l);
  WriteRows(df, p, g, o, lay.ld_dv, m, l);
}

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
#undef TESSERA_DECODE_DOT_ATTR
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

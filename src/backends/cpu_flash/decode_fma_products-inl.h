// cpu.flash per-target code: the decode loop's products on the FMAs
// (decode-inl.h): scores q . k and O += p v for one query per sequence, K
// and V read where they are (f32, or bf16 widened as they are loaded).
#if defined(TESSERA_CPU_FLASH_DECODE_FMA_PRODUCTS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_DECODE_FMA_PRODUCTS_INL_H_
#undef TESSERA_CPU_FLASH_DECODE_FMA_PRODUCTS_INL_H_
#else
#define TESSERA_CPU_FLASH_DECODE_FMA_PRODUCTS_INL_H_
#endif

#include <cstdint>

#include "cpu_flash/convert-inl.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/flash_unit.h"
#include "cpu_flash/horizontal_sums-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

// O[h .. h + kHeads)[d, d + kVecs vectors) += sum_j p[j][h] * v_j[...] over
// key_count keys, the O slice held in registers across the keys; p[j][i] at
// p_rows[j * ld_p + i].
template <int kHeads, int kVecs, typename T, class DF>
HWY_INLINE void AccumulateSlice(DF df, const T* HWY_RESTRICT v_row, int64_t v_stride,
                                int64_t key_count, const float* HWY_RESTRICT p_rows, int64_t ld_p,
                                float* HWY_RESTRICT o, int64_t ld_dv) {
  using V = hn::Vec<DF>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  V acc[kHeads][kVecs];
  for (int i = 0; i < kHeads; ++i) {
    for (int c = 0; c < kVecs; ++c) acc[i][c] = hn::Load(df, o + i * ld_dv + c * lanes);
  }
  for (int64_t j = 0; j < key_count; ++j) {
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
                                     int64_t key_count, const float* p_rows, int64_t ld_p, float* o,
                                     int64_t ld_dv) {
  switch (heads) {
    case 4:
      return AccumulateSlice<4, kVecs>(df, v_row, v_stride, key_count, p_rows, ld_p, o, ld_dv);
    case 3:
      return AccumulateSlice<3, kVecs>(df, v_row, v_stride, key_count, p_rows, ld_p, o, ld_dv);
    case 2:
      return AccumulateSlice<2, kVecs>(df, v_row, v_stride, key_count, p_rows, ld_p, o, ld_dv);
    default:
      return AccumulateSlice<1, kVecs>(df, v_row, v_stride, key_count, p_rows, ld_p, o, ld_dv);
  }
}

// O[h .. h + heads) += P V over Dv for key_count keys: slices of 8 / heads vectors
// (8 accumulators where Dv allows), then narrower ones, then one column at a
// time. O's padding columns (up to ld_dv) stay 0: a slice past Dv would read
// V past its row.
template <typename T, class DF>
HWY_INLINE void AccumulateHeads(DF df, int64_t heads, const T* v_row, int64_t v_stride, int64_t dv,
                                int64_t key_count, const float* p_rows, int64_t ld_p, float* o,
                                int64_t ld_dv) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t d = 0;
  if (heads == 1) {
    for (; d + 8 * lanes <= dv; d += 8 * lanes) {
      AccumulateSlice<1, 8>(df, v_row + d, v_stride, key_count, p_rows, ld_p, o + d, ld_dv);
    }
  }
  if (heads <= 2) {
    for (; d + 4 * lanes <= dv; d += 4 * lanes) {
      AccumulateSliceHeads<4>(df, heads, v_row + d, v_stride, key_count, p_rows, ld_p, o + d,
                              ld_dv);
    }
  }
  for (; d + 2 * lanes <= dv; d += 2 * lanes) {
    AccumulateSliceHeads<2>(df, heads, v_row + d, v_stride, key_count, p_rows, ld_p, o + d, ld_dv);
  }
  for (; d + lanes <= dv; d += lanes) {
    AccumulateSliceHeads<1>(df, heads, v_row + d, v_stride, key_count, p_rows, ld_p, o + d, ld_dv);
  }
  for (; d < dv; ++d) {
    for (int64_t i = 0; i < heads; ++i) {
      float sum = o[i * ld_dv + d];
      for (int64_t j = 0; j < key_count; ++j) {
        sum += p_rows[j * ld_p + i] * ScalarAsF32(v_row + j * v_stride, d);
      }
      o[i * ld_dv + d] = sum;
    }
  }
}

// The decode loop's products on the FMAs (decode-inl.h, DecodeItemOf): q
// converted to f32 once, K and V of element type T (float or bf16) widened
// as they are read.
template <typename T>
struct DecodeFmaProducts {
  using Element = T;
  float* q;  // [Hq x D] f32

  DecodeFmaProducts(const DecodeLayout& lay, float* scratch) : q(scratch + lay.q) {}

  template <class DF>
  HWY_INLINE void LoadQuery(DF df, const FlashParams& p, const UnitGeom& g) {
    for (int64_t h = 0; h < p.hq; ++h) {
      RowToF32(df, element(p.q, p.dtype, q_offset(p, g, h)), p.dtype, p.qs[3], p.d, q + h * p.d);
    }
  }
  template <class DF>
  HWY_INLINE void Score(DF df, int64_t heads, int64_t keys, const T* k_row, int64_t k_stride,
                        int64_t head, int64_t d, float mul, float* s, int64_t ld_s) const {
    ScoreKeys(df, heads, keys, k_row, k_stride, q + head * d, d, mul, s, ld_s);
  }
  HWY_INLINE void PrepareProbabilities(int64_t /*hp*/, int64_t /*keys*/, const float* /*s*/) const {
  }
  template <class DF>
  HWY_INLINE void Accumulate(DF df, int64_t heads, const T* v_row, int64_t v_stride, int64_t dv,
                             int64_t keys, int64_t /*head*/, const float* p_rows, int64_t ld_p,
                             float* o, int64_t ld_dv) const {
    AccumulateHeads(df, heads, v_row, v_stride, dv, keys, p_rows, ld_p, o, ld_dv);
  }
};

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

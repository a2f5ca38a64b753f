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
// head, so for each key the loop reads the key's whole [Hkv, D] row, K and V
// each one sequential stream, and the scores, probabilities and outputs of
// all Hq heads stay in L1/L2:
//   for each tile of kDecodeKeys keys:
//     S[h][j] = (q_h . k_j) * scale * log2(e)        keys in order, all heads
//     online softmax per head over the tile          m, l, O *= alpha
//     O[h] += p[h][j] * v_j                          keys in order, all heads
//   out = O / l, lse = m ln 2 + ln l (or the split's partial O, m, l)
// Masks are a key range (one query position sees a contiguous range of keys
// under causal and window masks), so no per-element mask test is needed.
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

#include "cpu_flash/convert-inl.h"
#include "cpu_flash/exp2-inl.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/flash_unit.h"
#include "hwy/cache_control.h"
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

// Asks for the cache lines of n elements from row: the other stream's
// rows are prefetched while this one is computed on (see DecodeItemOf).
template <typename T>
HWY_INLINE void PrefetchRow(const T* row, int64_t n) {
  const char* bytes = reinterpret_cast<const char*>(row);
  for (int64_t at = 0; at < n * static_cast<int64_t>(sizeof(T)); at += 64) {
    hwy::Prefetch(bytes + at);
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

// Dots of kKeys K rows with kHeads query rows (q + i * d_len): each K
// vector load feeds every head and each q vector load every key, with
// kKeys * kHeads independent accumulators (the counts are template
// arguments so the accumulators stay in registers).
// out[i * out_stride + j] = (q_i . k_j) * mul.
template <int kKeys, int kHeads, typename T, class DF>
HWY_INLINE void DotTile(DF df, const T* HWY_RESTRICT k_row, int64_t k_stride,
                        const float* HWY_RESTRICT q, int64_t d_len, float mul,
                        float* HWY_RESTRICT out, int64_t out_stride) {
  using V = hn::Vec<DF>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  V acc[kKeys][kHeads];
  for (int j = 0; j < kKeys; ++j) {
    for (int i = 0; i < kHeads; ++i) acc[j][i] = hn::Zero(df);
  }
  int64_t d = 0;
  for (; d + lanes <= d_len; d += lanes) {
    V k[kKeys];
    for (int j = 0; j < kKeys; ++j) k[j] = LoadAsF32(df, k_row + j * k_stride, d);
    for (int i = 0; i < kHeads; ++i) {
      const V qi = hn::LoadU(df, q + i * d_len + d);
      for (int j = 0; j < kKeys; ++j) acc[j][i] = hn::MulAdd(k[j], qi, acc[j][i]);
    }
  }
  for (int j = 0; j < kKeys; ++j) {
    for (int i = 0; i < kHeads; ++i) {
      float dot = hn::GetLane(hn::SumOfLanes(df, acc[j][i]));
      for (int64_t t = d; t < d_len; ++t) {  // D not a multiple of the lanes
        dot += ScalarAsF32(k_row + j * k_stride, t) * q[i * d_len + t];
      }
      out[i * out_stride + j] = dot * mul;
    }
  }
}

// DotTile for `heads` (1..4) query heads.
template <int kKeys, typename T, class DF>
HWY_INLINE void DotTileHeads(DF df, int64_t heads, const T* k_row, int64_t k_stride,
                             const float* q, int64_t d_len, float mul, float* out,
                             int64_t out_stride) {
  switch (heads) {
    case 4: return DotTile<kKeys, 4>(df, k_row, k_stride, q, d_len, mul, out, out_stride);
    case 3: return DotTile<kKeys, 3>(df, k_row, k_stride, q, d_len, mul, out, out_stride);
    case 2: return DotTile<kKeys, 2>(df, k_row, k_stride, q, d_len, mul, out, out_stride);
    default: return DotTile<kKeys, 1>(df, k_row, k_stride, q, d_len, mul, out, out_stride);
  }
}

// Scores of keys [j0, j0 + kb) for every head, two keys at a time in key
// order so K is read as one stream: s[h * kDecodeKeys + j - j0] =
// (q_h . k_j) * mul, q f32 [Hq x D]. The same keys' V rows are prefetched
// meanwhile, for DecodeAccumulate.
template <typename T, class DF>
HWY_INLINE void DecodeScores(DF df, const FlashParams& p, const UnitGeom& g, const float* q,
                             int64_t j0, int64_t kb, float mul, float* HWY_RESTRICT s) {
  const T* k_base = static_cast<const T*>(p.k) + g.tb * p.ks[0] + (g.k_begin + j0) * p.ks[1];
  const T* v_base = static_cast<const T*>(p.v) + g.tb * p.vs[0] + (g.k_begin + j0) * p.vs[1];
  for (int64_t j = 0; j < kb; j += 2) {
    const bool pair = j + 1 < kb;
    for (int64_t kvh = 0; kvh < p.hkv; ++kvh) {
      const T* k_row = k_base + j * p.ks[1] + kvh * p.ks[2];
      PrefetchRow(v_base + j * p.vs[1] + kvh * p.vs[2], p.dv);
      if (pair) PrefetchRow(v_base + (j + 1) * p.vs[1] + kvh * p.vs[2], p.dv);
      for (int64_t h = kvh * p.group; h < (kvh + 1) * p.group; h += 4) {
        const int64_t heads = std::min<int64_t>(4, (kvh + 1) * p.group - h);
        float* out = s + h * kDecodeKeys + j;
        if (pair) {
          DotTileHeads<2>(df, heads, k_row, p.ks[1], q + h * p.d, p.d, mul, out, kDecodeKeys);
        } else {
          DotTileHeads<1>(df, heads, k_row, p.ks[1], q + h * p.d, p.d, mul, out, kDecodeKeys);
        }
      }
    }
  }
}

// Online softmax of one head over the tile's kb scores (in place: s becomes
// p); returns alpha, the factor O must be scaled by.
template <class DF>
HWY_INLINE float DecodeSoftmax(DF df, float* HWY_RESTRICT s, int64_t kb, float* m, float* l) {
  using V = hn::Vec<DF>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const float neg_inf = -std::numeric_limits<float>::infinity();
  // Pad the last vector with -inf (p = 0); s has room up to kDecodeKeys.
  const int64_t kv = round_up(kb, lanes);
  for (int64_t j = kb; j < kv; ++j) s[j] = neg_inf;
  V mx = hn::Set(df, neg_inf);
  auto nan_seen = hn::Lt(hn::Zero(df), hn::Zero(df));  // all false
  for (int64_t j = 0; j < kv; j += lanes) {
    const V v = hn::Load(df, s + j);
    mx = hn::Max(v, mx);  // NaN is skipped here (x86 keeps the second operand)
    if constexpr (!kExp2KeepsNaN) nan_seen = hn::Or(nan_seen, hn::IsNaN(v));
  }
  const float m_old = *m;
  const float m_new = std::max(m_old, hn::GetLane(hn::MaxOfLanes(df, mx)));
  // Nothing visible yet (every score -inf): subtract 0, so p = 2^-inf = 0.
  const float shift = m_new == neg_inf ? 0.0f : m_new;
  const V neg_m = hn::Set(df, -shift);
  V sum = hn::Zero(df);
  for (int64_t j = 0; j < kv; j += lanes) {
    const V pj = FastExp2(df, hn::Add(hn::Load(df, s + j), neg_m));
    hn::Store(pj, df, s + j);
    sum = hn::Add(sum, pj);
  }
  const float alpha = m_old == neg_inf ? 0.0f : std::exp2(m_old - shift);
  float total = hn::GetLane(hn::SumOfLanes(df, sum));
  if (!hn::AllFalse(df, nan_seen)) total = std::numeric_limits<float>::quiet_NaN();
  *l = *l * alpha + total;
  *m = m_new;
  return alpha;
}

// O[h .. h + kHeads)[d, d + kVecs vectors) += sum_j p[h][j] * v_j[...] over
// the tile's kb keys, the O slice held in registers for the whole tile.
template <int kHeads, int kVecs, typename T, class DF>
HWY_INLINE void AccumulateSlice(DF df, const T* HWY_RESTRICT v_row, int64_t v_stride, int64_t kb,
                                const float* HWY_RESTRICT p_rows, float* HWY_RESTRICT o,
                                int64_t ld_dv) {
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
      const V w = hn::Set(df, p_rows[i * kDecodeKeys + j]);
      for (int c = 0; c < kVecs; ++c) acc[i][c] = hn::MulAdd(w, v[c], acc[i][c]);
    }
  }
  for (int i = 0; i < kHeads; ++i) {
    for (int c = 0; c < kVecs; ++c) hn::Store(acc[i][c], df, o + i * ld_dv + c * lanes);
  }
}

template <int kVecs, typename T, class DF>
HWY_INLINE void AccumulateSliceHeads(DF df, int64_t heads, const T* v_row, int64_t v_stride,
                                     int64_t kb, const float* p_rows, float* o, int64_t ld_dv) {
  switch (heads) {
    case 4: return AccumulateSlice<4, kVecs>(df, v_row, v_stride, kb, p_rows, o, ld_dv);
    case 3: return AccumulateSlice<3, kVecs>(df, v_row, v_stride, kb, p_rows, o, ld_dv);
    case 2: return AccumulateSlice<2, kVecs>(df, v_row, v_stride, kb, p_rows, o, ld_dv);
    default: return AccumulateSlice<1, kVecs>(df, v_row, v_stride, kb, p_rows, o, ld_dv);
  }
}

// O[h] += p[h][j] * v_j for the tile's keys (in L2: DecodeScores asked for
// them), per KV head and slice of Dv with the O slice in registers; the next
// tile's K rows are prefetched meanwhile. O's padding columns (up to ld_dv)
// stay 0: a slice past Dv would read V past its row, so the last columns
// go one vector, then one element, at a time.
template <typename T, class DF>
HWY_INLINE void DecodeAccumulate(DF df, const FlashParams& p, const UnitGeom& g, int64_t j0,
                                 int64_t kb, int64_t next_kb, const float* HWY_RESTRICT s,
                                 int64_t ld_dv, float* HWY_RESTRICT o) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const T* v_base = static_cast<const T*>(p.v) + g.tb * p.vs[0] + (g.k_begin + j0) * p.vs[1];
  const T* k_next = static_cast<const T*>(p.k) + g.tb * p.ks[0] + (g.k_begin + j0 + kb) * p.ks[1];
  for (int64_t kvh = 0; kvh < p.hkv; ++kvh) {
    for (int64_t j = 0; j < next_kb; ++j) PrefetchRow(k_next + j * p.ks[1] + kvh * p.ks[2], p.d);
    const T* v_row = v_base + kvh * p.vs[2];
    for (int64_t h = kvh * p.group; h < (kvh + 1) * p.group; h += 4) {
      const int64_t heads = std::min<int64_t>(4, (kvh + 1) * p.group - h);
      const float* p_rows = s + h * kDecodeKeys;
      float* oh = o + h * ld_dv;
      int64_t d = 0;
      for (; d + 2 * lanes <= p.dv; d += 2 * lanes) {
        AccumulateSliceHeads<2>(df, heads, v_row + d, p.vs[1], kb, p_rows, oh + d, ld_dv);
      }
      for (; d + lanes <= p.dv; d += lanes) {
        AccumulateSliceHeads<1>(df, heads, v_row + d, p.vs[1], kb, p_rows, oh + d, ld_dv);
      }
      for (; d < p.dv; ++d) {
        for (int64_t i = 0; i < heads; ++i) {
          float sum = oh[i * ld_dv + d];
          for (int64_t j = 0; j < kb; ++j) {
            sum += p_rows[i * kDecodeKeys + j] * ScalarAsF32(v_row + j * p.vs[1], d);
          }
          oh[i * ld_dv + d] = sum;
        }
      }
    }
  }
}

// Item = seq * splits + split: keys of that split for every head. Writes
// the rows, or (splits > 1) the partial O, m, l to partials.
template <typename T, class DF>
HWY_NOINLINE void DecodeItemOf(DF df, const FlashParams& p, int64_t item, float* scratch,
                               float* partials) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const DecodeLayout lay = decode_layout(p.hq, p.d, p.dv);
  float* q = scratch + lay.q;
  float* o = scratch + lay.o;
  float* m = scratch + lay.m;
  float* l = scratch + lay.l;
  float* s = scratch + lay.s;
  const int64_t seq = item / p.splits, split = item % p.splits;
  int64_t begin = 0, end = 0;
  const UnitGeom g = DecodeGeom(p, seq, &begin, &end);
  if (g.rows == 0) return;  // an empty varlen query: nothing to write
  split_keys(p, split, &begin, &end);
  std::fill(m, m + p.hq, -std::numeric_limits<float>::infinity());
  std::fill(l, l + p.hq, 0.0f);
  std::fill(o, o + p.hq * lay.ld_dv, 0.0f);
  if (begin < end) {
    for (int64_t h = 0; h < p.hq; ++h) {
      RowToF32(df, element(p.q, p.dtype, q_offset(p, g, h)), p.dtype, p.qs[3], p.d, q + h * p.d);
    }
  }
  const float mul = p.scale * 1.44269504088896341f;  // scores in log2 units
  for (int64_t j0 = begin; j0 < end; j0 += kDecodeKeys) {
    const int64_t kb = std::min(kDecodeKeys, end - j0);
    DecodeScores<T>(df, p, g, q, j0, kb, mul, s);
    for (int64_t h = 0; h < p.hq; ++h) {
      const float alpha = DecodeSoftmax(df, s + h * kDecodeKeys, kb, m + h, l + h);
      if (alpha != 1.0f) {
        float* oh = o + h * lay.ld_dv;
        const auto va = hn::Set(df, alpha);
        for (int64_t d = 0; d < lay.ld_dv; d += lanes) {
          hn::Store(hn::Mul(hn::Load(df, oh + d), va), df, oh + d);
        }
      }
    }
    const int64_t next_kb = std::min(kDecodeKeys, end - (j0 + kb));
    DecodeAccumulate<T>(df, p, g, j0, kb, next_kb, s, lay.ld_dv, o);
  }
  if (p.splits == 1) {
    WriteRows(df, p, g, o, lay.ld_dv, m, l);
    return;
  }
  float* part = partials + item * p.partial_floats;
  std::memcpy(part, o, sizeof(float) * p.hq * lay.ld_dv);
  std::memcpy(part + p.hq * lay.ld_dv, m, sizeof(float) * p.hq);
  std::memcpy(part + p.hq * lay.ld_dv + p.hq, l, sizeof(float) * p.hq);
}

template <class DF>
HWY_INLINE void DecodeItem(DF df, const FlashParams& p, int64_t item, float* scratch,
                           float* partials) {
  if (p.dtype == DType::kBF16) {
    DecodeItemOf<hwy::bfloat16_t>(df, p, item, scratch, partials);
  } else {
    DecodeItemOf<float>(df, p, item, scratch, partials);
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
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// cpu.flash per-target code: the decode loop, for one query position per
// sequence (Sq = 1), where attention is a stream over K and V and the only
// goal is to read them at memory speed. It serves the f32 products and the
// bf16dot path; the AMX path takes the tile loop (product_paths.h).
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
// The two products come from a Products type: DecodeFmaProducts
// (decode_fma_products-inl.h) or DecodeBf16DotProducts
// (decode_bf16dot_products-inl.h); the loop is the same for both.
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
#include <cstdint>
#include <limits>

#include "cpu_flash/bf16_dot-inl.h"
#include "cpu_flash/decode_bf16dot_products-inl.h"
#include "cpu_flash/decode_fma_products-inl.h"
#include "cpu_flash/exp2-inl.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/flash_unit.h"
#include "cpu_flash/unit_output-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

// The online softmax of one step of key_count keys, vectors across the heads
// (s[j * hp + h], hp = Hq rounded up to the lanes, padding lanes 0): s
// becomes p, m and l move on, alpha[h] is the factor O[h] must be scaled by.
// Returns whether any alpha is not 1. A NaN score is skipped by the max and
// marked in nan_seen (where FastExp2 does not keep NaN).
template <class DF, class M>
HWY_INLINE bool StepSoftmax(DF df, int64_t hp, int64_t key_count, float* HWY_RESTRICT s,
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
    for (int64_t j = 0; j < key_count; ++j) {
      const V sj = hn::Load(df, s + j * hp + hv);
      mx = hn::Max(sj, mx);  // NaN is skipped here (x86 keeps the second operand)
      if constexpr (!kExp2KeepsNaN) *nan_seen = hn::Or(*nan_seen, hn::IsNaN(sj));
    }
    // Nothing visible yet (every score -inf): subtract 0, so p = 2^-inf = 0.
    const V shift = hn::IfThenElseZero(hn::Ne(mx, neg_inf), mx);
    const V a = FastExp2(df, hn::Sub(m_old, shift));  // m_old = -inf: 0
    V sum = hn::Zero(df);
    for (int64_t j = 0; j < key_count; ++j) {
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
// the rows, or (splits > 1) the partial O, m, l to partials.
template <class Products, class DF>
HWY_NOINLINE void DecodeItemOf(DF df, const FlashParams& p, int64_t item, float* scratch,
                               float* partials) {
  using V = hn::Vec<DF>;
  using T = typename Products::Element;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const DecodeLayout lay = decode_layout(p.hq, p.d, p.dv);
  const int64_t hp = round_up(p.hq, lanes);  // heads padded to whole vectors
  Products products(lay, scratch);
  float* o = scratch + lay.o;
  float* m = scratch + lay.m;
  float* l = scratch + lay.l;
  float* s = scratch + lay.s;          // [kDecodeStep][hp]: scores, then p
  float* alpha = scratch + lay.alpha;  // [hp]
  const int64_t seq = item / p.splits, split = item % p.splits;
  int64_t begin = 0, end = 0;
  const UnitGeom g = DecodeGeom(p, seq, &begin, &end);
  if (g.rows == 0) return;  // an empty varlen query: nothing to write
  split_keys(p, split, &begin, &end);
  std::fill(m, m + hp, -std::numeric_limits<float>::infinity());
  std::fill(l, l + hp, 0.0f);
  std::fill(s, s + kDecodeStep * hp, 0.0f);  // the padding heads' lanes stay 0
  std::fill(o, o + p.hq * lay.ld_dv, 0.0f);
  if (begin < end) products.LoadQuery(df, p, g);
  const float mul = p.scale * 1.44269504088896341f;  // scores in log2 units
  const T* k_seq = static_cast<const T*>(p.k) + g.tb * p.ks[0] + g.k_begin * p.ks[1];
  const T* v_seq = static_cast<const T*>(p.v) + g.tb * p.vs[0] + g.k_begin * p.vs[1];
  // Keys per score call, and how far ahead the K and V rows are asked for.
  const int64_t tile = DecodeTileKeys(std::min<int64_t>(p.group, 4));
  const int64_t row_bytes = p.hkv * p.d * static_cast<int64_t>(sizeof(T));
  const int64_t ahead =
      std::max<int64_t>(tile, kDecodePrefetchBytes / std::max<int64_t>(row_bytes, 1));
  auto nan_seen = hn::Lt(hn::Zero(df), hn::Zero(df));  // all false
  for (int64_t step = begin; step < end; step += kDecodeStep) {
    const int64_t step_keys = std::min(kDecodeStep, end - step);
    // Scores, `tile` keys at a time in key order over every KV head, so K is
    // read as one stream; the rows `ahead` keys on are prefetched meanwhile,
    // spread over the products (a burst of prefetches would stall on full
    // line-fill buffers).
    for (int64_t j = 0; j < step_keys; j += tile) {
      const int64_t keys = std::min(tile, step_keys - j);
      const int64_t fetch_key = step + j + ahead;
      const int64_t fetch_keys = std::min(keys, end - fetch_key);
      for (int64_t kvh = 0; kvh < p.hkv; ++kvh) {
        for (int64_t t = 0; t < fetch_keys; ++t) {
          prefetch_to_l2(k_seq + (fetch_key + t) * p.ks[1] + kvh * p.ks[2],
                         p.d * static_cast<int64_t>(sizeof(T)));
          prefetch_to_l2(v_seq + (fetch_key + t) * p.vs[1] + kvh * p.vs[2],
                         p.dv * static_cast<int64_t>(sizeof(T)));
        }
        const T* k_row = k_seq + (step + j) * p.ks[1] + kvh * p.ks[2];
        for (int64_t h = kvh * p.group; h < (kvh + 1) * p.group; h += 4) {
          const int64_t heads = std::min<int64_t>(4, (kvh + 1) * p.group - h);
          products.Score(df, heads, keys, k_row, p.ks[1], h, p.d, mul, s + j * hp + h, hp);
        }
      }
    }
    if (StepSoftmax(df, hp, step_keys, s, m, l, alpha, &nan_seen)) {
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
    products.PrepareProbabilities(hp, step_keys, s);
    for (int64_t kvh = 0; kvh < p.hkv; ++kvh) {
      const T* v_row = v_seq + step * p.vs[1] + kvh * p.vs[2];
      for (int64_t h = kvh * p.group; h < (kvh + 1) * p.group; h += 4) {
        const int64_t heads = std::min<int64_t>(4, (kvh + 1) * p.group - h);
        products.Accumulate(df, heads, v_row, p.vs[1], p.dv, step_keys, h, s + h, hp,
                            o + h * lay.ld_dv, lay.ld_dv);
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
  if (p.dtype != DType::kBF16) {
    return DecodeItemOf<DecodeFmaProducts<float>>(df, p, item, scratch, partials);
  }
#if TESSERA_CPU_FLASH_AVX512_TARGET
  if (TargetProducts(p) == Products::kBf16Dot) {
    return DecodeItemOf<DecodeBf16DotProducts>(df, p, item, scratch, partials);
  }
#endif
  DecodeItemOf<DecodeFmaProducts<hwy::bfloat16_t>>(df, p, item, scratch, partials);
}

// Combines the splits of sequence `seq` (MergeRows, unit_output-inl.h).
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

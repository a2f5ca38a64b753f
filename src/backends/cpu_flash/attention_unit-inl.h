// cpu.flash per-target code: one work item = one unit (or one key split of
// it), the FlashAttention-2 loop over K/V tiles:
//   pack Q^T [D x rows] of each of the unit's query blocks once
//   for each K/V tile of kBlockKeys keys (fully masked tiles never visited):
//     pack K, V to f32 once
//     for each query block that sees a key of the tile:
//       S^T = K * Q^T            scores, keys as rows        (TileGemm)
//       online softmax           P^T in place, m, l, alpha   (SoftmaxTile)
//       O = O * alpha + P * V                                (TileGemm)
//   out = O / l, lse = m ln 2 + ln l  (or the partial O, m, l of a key split)
// The bf16 paths (FlashParams::products) run the same loop with other
// operand layouts: bf16 pairs (bf16_dot-inl.h) or AMX tiles (amx_tiles-inl.h,
// which accumulates O^T and transposes it into O at the end).
#if defined(TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_
#undef TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_
#else
#define TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cpu_flash/amx_tiles-inl.h"
#include "cpu_flash/bf16_dot-inl.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/flash_unit.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One query block: its geometry, visible keys and scratch.
struct Block {
  bool active = false;
  UnitGeom g;
  KeyRange keys;
  float* qt = nullptr;
  float* o = nullptr;
  float* ot = nullptr;  // AMX path: O^T
  float* m = nullptr;
  float* l = nullptr;
  float* alpha = nullptr;
  float* lo = nullptr;
  float* hi = nullptr;
  int64_t* bias_base = nullptr;
  int32_t* bias_index = nullptr;
  // The block's bias rows are consecutive elements (a bias laid out with
  // query stride 1, every row real): a score vector's bias is one load.
  bool bias_contiguous = false;
};

// The per-thread scratch, carved by scratch_layout for this target's lanes.
struct Scratch {
  ScratchLayout lay;
  float* kt;
  float* vt;
  float* vp;
  float* st;
  float* base;
};

// The products path this target runs: the host's choice where this target
// has the instructions, the f32 products elsewhere.
inline Products TargetProducts(const FlashParams& p) {
  if (p.products == Products::kAmx && kHasAmx) return Products::kAmx;
  if (p.products == Products::kBf16Dot && kHasBf16Dot) return Products::kBf16Dot;
  return Products::kF32;
}

inline Scratch CarveScratch(const FlashParams& p, int64_t lanes, float* base) {
  Scratch s;
  s.lay =
      scratch_layout(p.rows, p.d, p.dv, lanes, p.sub_blocks, TargetProducts(p) == Products::kAmx);
  s.kt = base + s.lay.kt;
  s.vt = base + s.lay.vt;
  s.vp = base + s.lay.vp;
  s.st = base + s.lay.st;
  s.base = base;
  return s;
}

inline void CarveBlock(const Scratch& s, int64_t sub, Block* b) {
  float* at = s.base + s.lay.sub + sub * s.lay.sub_stride;
  b->qt = at + s.lay.qt;
  b->o = at + s.lay.o;
  b->ot = at + s.lay.ot;
  b->m = at + s.lay.m;
  b->l = at + s.lay.l;
  b->alpha = at + s.lay.alpha;
  b->lo = at + s.lay.lo;
  b->hi = at + s.lay.hi;
  b->bias_base = reinterpret_cast<int64_t*>(at + s.lay.bias_base);
  b->bias_index = reinterpret_cast<int32_t*>(at + s.lay.bias_index);
}

// Byte offsets from the block's Q row 0 to rows [r, r + lanes), for a
// gather whose lane i reads row r + i: false when one is negative, not a
// multiple of 4 or, with the `reach` bytes read past it, beyond the
// gather's int32.
inline bool QRowOffsets(const FlashParams& p, const UnitGeom& g, int64_t r, int64_t lanes,
                        int64_t reach, int32_t* offsets) {
  const int64_t bytes_per = element_bytes(p.dtype);
  for (int64_t i = 0; i < lanes; ++i) {
    const int64_t bytes = (q_offset(p, g, r + i) - q_offset(p, g, 0)) * bytes_per;
    if (bytes % 4 != 0 || bytes < 0 || bytes > INT32_MAX - reach) return false;
    offsets[i] = static_cast<int32_t>(bytes);
  }
  return true;
}

// Q^T [D x ld_rows]: row r of the block becomes column r; padding columns
// 0. (The scale is applied to the scores, inside the softmax's exponent, not
// here: one rounding instead of one per q element.) Rows with unit stride
// are gathered a vector of rows at a time, f32 as is, bf16 as pairs (one
// 32-bit gather gives rows 2i and 2i + 1 of Q^T): a scalar transpose, one
// store per element, was a fifth of a short sequence's time (B=1, S=16,
// H=8, D=64). The rest is converted a row at a time through the block's o
// (cleared afterwards). Only the padding columns are zeroed: the rows'
// columns are all written.
template <class DF>
HWY_INLINE void PackQT(DF df, const FlashParams& p, int64_t ld, const Block& b) {
  const hn::RebindToSigned<DF> di;
  const hn::RebindToUnsigned<DF> du;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  HWY_ALIGN int32_t offsets[kMaxLanes];
  const void* row0 = element(p.q, p.dtype, q_offset(p, b.g, 0));
  int64_t r = 0;
  if (p.dtype == DType::kF32 && p.qs[3] == 1) {
    const auto* q = static_cast<const float*>(row0);
    for (; r + lanes <= b.g.rows && QRowOffsets(p, b.g, r, lanes, 4 * p.d, offsets); r += lanes) {
      const auto vo = hn::Load(di, offsets);
      for (int64_t d = 0; d < p.d; ++d) {
        hn::StoreU(hn::GatherOffset(df, q + d, vo), df, b.qt + d * ld + r);
      }
    }
  } else if (p.dtype == DType::kBF16 && p.qs[3] == 1 && p.d % 2 == 0 &&
             reinterpret_cast<uintptr_t>(row0) % 4 == 0) {
    const auto* words = static_cast<const uint32_t*>(row0);
    const auto high = hn::Set(du, 0xFFFF0000u);
    for (; r + lanes <= b.g.rows && QRowOffsets(p, b.g, r, lanes, 2 * p.d, offsets); r += lanes) {
      const auto vo = hn::Load(di, offsets);
      for (int64_t i = 0; i < p.d / 2; ++i) {
        const auto pair = hn::GatherOffset(du, words + i, vo);  // q[2i] low, q[2i+1] high
        hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(pair)), df, b.qt + 2 * i * ld + r);
        hn::StoreU(hn::BitCast(df, hn::And(pair, high)), df, b.qt + (2 * i + 1) * ld + r);
      }
    }
  }
  for (; r < b.g.rows; ++r) {
    RowToF32(df, element(p.q, p.dtype, q_offset(p, b.g, r)), p.dtype, p.qs[3], p.d, b.o);
    for (int64_t d = 0; d < p.d; ++d) b.qt[d * ld + r] = b.o[d];
  }
  if (b.g.rows == ld) return;
  for (int64_t d = 0; d < p.d; ++d) std::fill(b.qt + d * ld + b.g.rows, b.qt + (d + 1) * ld, 0.0f);
}

// K and V rows [j0, j0 + kb) converted to f32 in kt [kb x D] and vt
// [kb x ld_dv] (zero-padded columns). f32 tensors are copied too: their rows
// sit Hkv * D elements apart, often a multiple of 4 KiB that maps every row
// of a tile to the same L1 sets, so reading them in place evicts the tile
// while it is swept; the copy is one load and store per element against
// 2 * rows * sub-blocks FMA lanes of use.
template <class DF>
HWY_INLINE void PackKV(DF df, const FlashParams& p, const UnitGeom& g, const Scratch& s, int64_t j0,
                       int64_t kb) {
  const int64_t ld = s.lay.ld_dv;
  for (int64_t j = 0; j < kb; ++j) {
    RowToF32(df, element(p.k, p.dtype, k_offset(p, g, j0 + j)), p.dtype, p.ks[3], p.d,
             s.kt + j * p.d);
    float* row = s.vt + j * ld;
    RowToF32(df, element(p.v, p.dtype, v_offset(p, g, j0 + j)), p.dtype, p.vs[3], p.dv, row);
    std::fill(row + p.dv, row + ld, 0.0f);
  }
}

// The bf16 paths (Products::kBf16Dot and kAmx): the same tiles, with Q, K
// and V kept in bf16. Q pairs [D/2 x ld_rows] in the block's qt: column r
// holds row r's (q[2i], q[2i+1]); padding columns 0.
// Whole vectors of rows are gathered (lane i reads row r + i's pair) when
// the pairs are contiguous and the rows' byte offsets fit the gather's
// int32; the rest is scalar.
template <class DF>
HWY_INLINE void PackQPairs(DF df, const FlashParams& p, int64_t ld, const Block& b) {
  const hn::RebindToSigned<DF> di;
  const hn::RebindToUnsigned<DF> du;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  auto* qp = reinterpret_cast<uint32_t*>(b.qt);
  const int64_t d2 = p.d / 2, stride = p.qs[3];
  std::fill(qp, qp + d2 * ld, 0u);
  const auto* row0 = static_cast<const char*>(element(p.q, p.dtype, q_offset(p, b.g, 0)));
  int64_t r = 0;
  if (stride == 1 && reinterpret_cast<uintptr_t>(row0) % 4 == 0) {
    HWY_ALIGN int32_t offsets[kMaxLanes];
    for (; r + lanes <= b.g.rows && QRowOffsets(p, b.g, r, lanes, 4 * d2, offsets); r += lanes) {
      const auto vo = hn::Load(di, offsets);
      const auto* words = reinterpret_cast<const uint32_t*>(row0);
      for (int64_t i = 0; i < d2; ++i) {
        hn::StoreU(hn::GatherOffset(du, words + i, vo), du, qp + i * ld + r);
      }
    }
  }
  for (; r < b.g.rows; ++r) {
    const auto* q = static_cast<const uint16_t*>(element(p.q, p.dtype, q_offset(p, b.g, r)));
    for (int64_t i = 0; i < d2; ++i) {
      qp[i * ld + r] = uint32_t{q[2 * i * stride]} | uint32_t{q[(2 * i + 1) * stride]} << 16;
    }
  }
}

// K rows [j0, j0 + kb) copied as bf16 to kt [kb x D] (so a row is D/2
// pairs; copied for the same L1-aliasing reason as PackKV); the V rows'
// addresses to v_rows.
inline void CopyKeysBf16(const FlashParams& p, const UnitGeom& g, const Scratch& s, int64_t j0,
                         int64_t kb, const uint16_t** v_rows) {
  auto* kt = reinterpret_cast<uint16_t*>(s.kt);
  for (int64_t j = 0; j < kb; ++j) {
    const auto* k = static_cast<const uint16_t*>(element(p.k, p.dtype, k_offset(p, g, j0 + j)));
    uint16_t* row = kt + j * p.d;
    if (p.ks[3] == 1) {
      std::memcpy(row, k, sizeof(uint16_t) * p.d);
    } else {
      for (int64_t d = 0; d < p.d; ++d) row[d] = k[d * p.ks[3]];
    }
    v_rows[j] = static_cast<const uint16_t*>(element(p.v, p.dtype, v_offset(p, g, j0 + j)));
  }
}

// Bf16Dot: K as CopyKeysBf16, V rows packed in key pairs to vt
// [ceil(kb / 2) x ld_dv].
inline void PackKVPairs(const FlashParams& p, const UnitGeom& g, const Scratch& s, int64_t j0,
                        int64_t kb) {
  const uint16_t* v_rows[kBlockKeys];
  CopyKeysBf16(p, g, s, j0, kb, v_rows);
  PackValuePairs(v_rows, p.vs[3], kb, p.dv, s.lay.ld_dv, reinterpret_cast<uint32_t*>(s.vt));
}

// Amx: K as CopyKeysBf16 with rows up to the next 32 zeroed (the score
// tiles read them), unless the tiles read K in place; V^T [dv_tiles x
// kBlockKeys] bf16 to vt by way of the V pairs in vp.
inline void PackKVTiles(const FlashParams& p, const UnitGeom& g, const Scratch& s, int64_t j0,
                        int64_t kb, bool keys_in_place) {
  const uint16_t* v_rows[kBlockKeys];
  if (keys_in_place) {
    for (int64_t j = 0; j < kb; ++j) {
      v_rows[j] = static_cast<const uint16_t*>(element(p.v, p.dtype, v_offset(p, g, j0 + j)));
    }
  } else {
    CopyKeysBf16(p, g, s, j0, kb, v_rows);
    auto* kt = reinterpret_cast<uint16_t*>(s.kt);
    std::fill(kt + kb * p.d, kt + round_up(kb, 32) * p.d, uint16_t{0});
  }
  if (p.vs[3] == 1) {
    PackValueTiles(v_rows, kb, p.dv, s.lay.dv_tiles, reinterpret_cast<uint32_t*>(s.vt));
    return;
  }
  auto* vp = reinterpret_cast<uint32_t*>(s.vp);
  PackValuePairs(v_rows, p.vs[3], kb, p.dv, s.lay.ld_dv, vp);
  TransposeValuePairs(vp, s.lay.ld_dv, kb, p.dv, s.lay.dv_tiles, reinterpret_cast<uint32_t*>(s.vt));
}

// Amx, second product of one block: P^T (st, kb keys) to pairs, the rows
// up to the next 32 keys zeroed, O^T *= alpha (skipped when every alpha is
// 1, as the headroom makes it on most tiles), O^T += V^T . P pairs.
template <class DF>
HWY_INLINE void AccumulateTiles(DF df, const FlashParams& p, const Scratch& s, const Block& b,
                                int64_t kb) {
  const int64_t ld = s.lay.ld_rows, kp = round_up(kb, 32);
  ProbabilitiesToPairs(s.st, ld, kb);
  std::fill(s.st + (kb + 1) / 2 * ld, s.st + kp / 2 * ld, 0.0f);
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  auto rescale = hn::Lt(hn::Zero(df), hn::Zero(df));  // all false
  for (int64_t c = 0; c < ld; c += lanes) {
    rescale = hn::Or(rescale, hn::Ne(hn::Load(df, b.alpha + c), hn::Set(df, 1.0f)));
  }
  for (int64_t d = 0; d < p.dv && !hn::AllFalse(df, rescale); ++d) {
    float* row = b.ot + d * ld;
    for (int64_t c = 0; c < ld; c += lanes) {
      hn::Store(hn::Mul(hn::Load(df, row + c), hn::Load(df, b.alpha + c)), df, row + c);
    }
  }
  AmxGemm<true>(s.lay.dv_tiles, ld, kp, reinterpret_cast<const uint16_t*>(s.vt), kBlockKeys,
                reinterpret_cast<const uint32_t*>(s.st), ld, b.ot, ld);
}

// Sets up the unit's query blocks (blocks[sub]) for key split `split` and
// returns the keys [*begin, *end) any of them sees.
template <class DF>
HWY_INLINE void StartBlocks(DF df, const FlashParams& p, int64_t unit, int64_t split,
                            const Scratch& s, Block* blocks, int64_t* begin, int64_t* end) {
  const int64_t ld = s.lay.ld_rows;
  *begin = std::numeric_limits<int64_t>::max();
  *end = 0;
  for (int64_t sub = 0; sub < p.sub_blocks; ++sub) {
    Block& b = blocks[sub];
    b.active = decode_block(p, unit, sub, &b.g);
    if (!b.active) continue;
    CarveBlock(s, sub, &b);
    b.keys = row_bounds(p, b.g, ld, b.lo, b.hi);
    if (!b.keys.empty()) {
      *begin = std::min(*begin, b.keys.begin);
      *end = std::max(*end, b.keys.end);
    }
  }
  split_keys(p, split, begin, end);
  // The unit's Q rows and first K/V tile are cold: asked for all at once,
  // their misses overlap, where the packing loops below would wait for a
  // row or two at a time. Not for a problem small enough to be in cache
  // (FlashParams::prefetch).
  const UnitGeom* seen = nullptr;  // a block that sees keys (they share K/V)
  for (int64_t sub = 0; sub < p.sub_blocks && p.prefetch; ++sub) {
    const Block& b = blocks[sub];
    if (!b.active || b.keys.empty()) continue;
    prefetch_q_rows(p, b.g);
    if (p.splits == 1) prefetch_out_rows(p, b.g);
    seen = &b.g;
  }
  if (seen != nullptr && *begin < *end) {
    prefetch_kv_rows(p, *seen, *begin, std::min(kBlockKeys, *end - *begin));
  }
  for (int64_t sub = 0; sub < p.sub_blocks; ++sub) {
    Block& b = blocks[sub];
    if (!b.active) continue;
    b.keys.begin = std::max(b.keys.begin, *begin);
    b.keys.end = std::min(b.keys.end, *end);
    std::fill(b.m, b.m + ld, -std::numeric_limits<float>::infinity());
    std::fill(b.l, b.l + ld, 0.0f);
    if (!b.keys.empty()) {
      if (TargetProducts(p) != Products::kF32) {
        PackQPairs(df, p, ld, b);
      } else {
        PackQT(df, p, ld, b);
      }
      if (p.bias != nullptr) {
        for (int64_t r = 0; r < ld; ++r) {
          b.bias_base[r] = bias_row_offset(p, b.g, r < b.g.rows ? r : 0);
          if (p.bias_index32) b.bias_index[r] = static_cast<int32_t>(b.bias_base[r]);
        }
        b.bias_contiguous = b.g.rows == ld;
        for (int64_t r = 1; r < ld && b.bias_contiguous; ++r) {
          b.bias_contiguous = b.bias_base[r] == b.bias_base[0] + r;
        }
      }
    }
    std::fill(b.o, b.o + b.g.rows * s.lay.ld_dv, 0.0f);
    std::fill(b.ot, b.ot + s.lay.dv_tiles * ld, 0.0f);
  }
}

// The tile loop of one unit (or key split), leaving each block's O
// (unnormalised), m and l in its scratch. On the bf16 paths the two
// products run on bf16 operands, the online softmax in f32 as before, and P
// is rounded to bf16 for the second product (as FlashAttention does on
// GPUs; the conformance suite's naive bf16 formula rounds p the same way).
template <class DF>
HWY_NOINLINE void AttendUnit(DF df, const FlashParams& p, int64_t unit, int64_t split,
                             const Scratch& s, Block* blocks) {
  const Products path = TargetProducts(p);
  const bool pairs = path == Products::kBf16Dot, tiles = path == Products::kAmx;
  const int64_t ld = s.lay.ld_rows, ld_dv = s.lay.ld_dv, d2 = p.d / 2;
  int64_t begin = 0, end = 0;
  StartBlocks(df, p, unit, split, s, blocks, &begin, &end);
  // AMX rescales O in a pass of its own (the FMA path folds alpha into its
  // product), so there the max may lag: p <= 2^8 stays far from f32 limits
  // and rounds to bf16 with the same relative error.
  const ScoreTransform tf{p.scale, p.softcap, tiles ? 8.0f : 0.0f};
  // Decode-sized work (one block of at most kMicroRows rows, one vector of
  // columns; single queries without bias or softcap take the decode loop of
  // decode-inl.h instead) reads each f32 K and V element exactly once per
  // tile, so it
  // reads them where they are: the copy PackKV makes against L1 set
  // conflicts only pays when a tile is swept several times. The next tile
  // is prefetched into L2 (below); the same prefetch into L1 filled the
  // line-fill buffers, so the prefetches themselves waited for memory, and
  // ran 15-20% slower (docs/DECISIONS.md).
  const bool in_place = path == Products::kF32 && p.dtype == DType::kF32 && p.ks[3] == 1 &&
                        p.vs[3] == 1 && ld_dv == p.dv && p.sub_blocks == 1 &&
                        ld <= static_cast<int64_t>(hn::Lanes(df)) && blocks[0].g.rows <= kMicroRows;
  // The AMX path's score tiles load K rows where they are (tileloadd takes
  // the row stride) when the tile is whole 32-key steps, so nothing past the
  // tile's keys is read; the copy is kept for a short last tile. S4 bf16
  // 2.23 -> 1.73 ms; prefill S1/S2/S3/S5 bf16 2-7% faster (DECISIONS).
  const bool amx_keys_in_place = tiles && p.ks[3] == 1;
  bool keys_in_place = false;
  for (int64_t j0 = begin; j0 < end; j0 += kBlockKeys) {
    const int64_t j1 = std::min(j0 + kBlockKeys, end);
    bool packed = false;
    for (int64_t sub = 0; sub < p.sub_blocks; ++sub) {
      const Block& b = blocks[sub];
      const int64_t a = std::max(j0, b.keys.begin), z = std::min(j1, b.keys.end);
      if (!b.active || a >= z) continue;  // fully masked for this block
      if (!packed) {
        // The next tile's rows come into L2 while this one is worked on.
        if (p.prefetch && j1 < end) prefetch_kv_rows(p, b.g, j1, std::min(kBlockKeys, end - j1));
        if (tiles) {
          keys_in_place = amx_keys_in_place && (j1 - j0) % 32 == 0;
          PackKVTiles(p, b.g, s, j0, j1 - j0, keys_in_place);
        } else if (pairs) {
          PackKVPairs(p, b.g, s, j0, j1 - j0);
        } else if (!in_place) {
          PackKV(df, p, b.g, s, j0, j1 - j0);
        }
        packed = true;
      }
      // V pairs start at even tile offsets, so on that path an odd first
      // visible key takes its even neighbour along, and AMX tiles start at
      // the tile: keys before every row's first visible key, to which the
      // masked softmax gives p = 0.
      const int64_t off = tiles ? 0 : pairs ? (a - j0) & ~int64_t{1} : a - j0;
      const int64_t a0 = j0 + off, kb = z - a0;
      if (tiles) {
        if (keys_in_place) {
          AmxGemm<false>(round_up(kb, 32), ld, p.d,
                         static_cast<const uint16_t*>(element(p.k, p.dtype, k_offset(p, b.g, j0))),
                         p.ks[1], reinterpret_cast<const uint32_t*>(b.qt), ld, s.st, ld);
        } else {
          AmxGemm<false>(round_up(kb, 32), ld, p.d, reinterpret_cast<const uint16_t*>(s.kt), p.d,
                         reinterpret_cast<const uint32_t*>(b.qt), ld, s.st, ld);
        }
      } else if (pairs) {
        PairGemm<false>(kb, ld, d2,
                        PairA{reinterpret_cast<const uint32_t*>(s.kt) + off * d2, d2, 1},
                        reinterpret_cast<const uint32_t*>(b.qt), ld, s.st, ld, nullptr);
      } else {
        const StridedA k_rows =
            in_place
                ? StridedA{static_cast<const float*>(element(p.k, p.dtype, k_offset(p, b.g, a0))),
                           p.ks[1], 1}
                : StridedA{s.kt + off * p.d, p.d, 1};
        TileGemm<false>(df, kb, ld, p.d, k_rows, b.qt, ld, s.st, ld, nullptr);
      }
      BiasRows bias;
      if (p.bias != nullptr) {
        bias = {p.bias + b.g.b * p.bs[0], b.bias_base, p.bs[3],
                p.bias_index32 ? b.bias_index : nullptr, b.bias_contiguous};
      }
      const bool masked = a0 < b.keys.full_begin || z > b.keys.full_end;
      SoftmaxTileDispatch(df, p.softcap > 0.0f, p.bias != nullptr, masked, s.st, ld, kb, a0, tf,
                          bias, SoftmaxRows{b.m, b.l, b.alpha, b.lo, b.hi});
      if (tiles) {
        AccumulateTiles(df, p, s, b, kb);
      } else if (pairs) {
        ProbabilitiesToPairs(s.st, ld, kb);
        PairGemm<true>(
            b.g.rows, ld_dv, (kb + 1) / 2, PairA{reinterpret_cast<const uint32_t*>(s.st), 1, ld},
            reinterpret_cast<const uint32_t*>(s.vt) + off / 2 * ld_dv, ld_dv, b.o, ld_dv, b.alpha);
      } else {
        const float* v_rows =
            in_place ? static_cast<const float*>(element(p.v, p.dtype, v_offset(p, b.g, a0)))
                     : s.vt + off * ld_dv;
        TileGemm<true>(df, b.g.rows, ld_dv, kb, StridedA{s.st, 1, ld}, v_rows,
                       in_place ? p.vs[1] : ld_dv, b.o, ld_dv, b.alpha);
      }
    }
  }
  if (!tiles) return;
  // O = (O^T)^T, lane i of a vector gathering O^T row d + i. O's padding
  // columns (up to ld_dv) get O^T's zero rows (dv_tiles >= ld_dv).
  const hn::RebindToSigned<DF> di;
  const auto rows_apart = hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(ld)));
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  for (int64_t sub = 0; sub < p.sub_blocks; ++sub) {
    const Block& b = blocks[sub];
    if (!b.active) continue;
    for (int64_t r = 0; r < b.g.rows; ++r) {
      for (int64_t d = 0; d < ld_dv; d += lanes) {
        hn::Store(hn::GatherIndex(df, b.ot + d * ld + r, rows_apart), df, b.o + r * ld_dv + d);
      }
    }
  }
}

// out rows = O / l (zeros where no key was visible), lse = m ln 2 + ln l.
template <class DF>
HWY_INLINE void WriteRows(DF df, const FlashParams& p, const UnitGeom& g, const float* o,
                          int64_t ld_dv, const float* m, const float* l) {
  for (int64_t r = 0; r < g.rows; ++r) {
    void* dst = element(p.out, p.dtype, out_offset(p, g, r));
    if (l[r] == 0.0f) {
      for (int64_t d = 0; d < p.dv; ++d) store_from_f32(dst, d * p.os[3], p.dtype, 0.0f);
    } else {
      RowFromF32(df, o + r * ld_dv, 1.0f / l[r], dst, p.dtype, p.os[3], p.dv);
    }
    if (p.lse != nullptr) write_lse(p, g, r, m[r], l[r]);
  }
}

// One split's partial result, in the layout MergeRows reads: O [rows x
// ld_dv], then m [rows], then l [rows].
inline void WritePartial(float* part, int64_t rows, int64_t ld_dv, const float* o, const float* m,
                         const float* l) {
  std::memcpy(part, o, sizeof(float) * rows * ld_dv);
  std::memcpy(part + rows * ld_dv, m, sizeof(float) * rows);
  std::memcpy(part + rows * ld_dv + rows, l, sizeof(float) * rows);
}

// Item = unit * splits + split. Without splits the rows are written here;
// with splits each block's partial (O, m, l) goes to partials[item] for
// MergeSplits.
template <class DF>
HWY_NOINLINE void RunItem(DF df, const FlashParams& p, int64_t item, float* scratch,
                          float* partials) {
  const Scratch s = CarveScratch(p, static_cast<int64_t>(hn::Lanes(df)), scratch);
  Block blocks[kMaxSubBlocks];
  const bool tiles = TargetProducts(p) == Products::kAmx;
  if (tiles) AmxBegin();
  AttendUnit(df, p, item / p.splits, item % p.splits, s, blocks);
  if (tiles) AmxEnd();
  const int64_t ld_dv = s.lay.ld_dv;
  for (int64_t sub = 0; sub < p.sub_blocks; ++sub) {
    const Block& b = blocks[sub];
    if (!b.active) continue;
    if (p.splits == 1) {
      WriteRows(df, p, b.g, b.o, ld_dv, b.m, b.l);
      continue;
    }
    float* part = partials + item * p.partial_floats + sub * partial_block_floats(p.rows, p.dv);
    WritePartial(part, b.g.rows, ld_dv, b.o, b.m, b.l);
  }
}

// Combines `splits` partial results of `rows` rows by their log-sum-exp
// (m in log2 units):
//   m = max_s m_s ; w_s = 2^(m_s - m) ; l = sum w_s l_s ; O = sum w_s O_s
// part_of(s) points at split s's partial: O [rows x ld_dv], then m [rows],
// then l [rows]. Writes o [rows x ld_dv], m and l.
template <class DF, class PartOf>
HWY_INLINE void MergeRows(DF df, int64_t rows, int64_t ld_dv, int64_t splits, PartOf part_of,
                          float* o, float* m, float* l) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const int64_t o_floats = rows * ld_dv;
  for (int64_t r = 0; r < rows; ++r) {
    float mr = neg_inf, lr = 0.0f;
    for (int64_t sp = 0; sp < splits; ++sp) mr = std::max(mr, part_of(sp)[o_floats + r]);
    const float m_safe = mr == neg_inf ? 0.0f : mr;
    float* orow = o + r * ld_dv;
    std::fill(orow, orow + ld_dv, 0.0f);
    for (int64_t sp = 0; sp < splits; ++sp) {
      const float* part = part_of(sp);
      const float l_s = part[o_floats + rows + r];
      if (l_s == 0.0f) continue;  // nothing visible in this split (O_s is 0)
      const float w = std::exp2(part[o_floats + r] - m_safe);
      lr += w * l_s;  // NaN l_s stays NaN
      const auto vw = hn::Set(df, w);
      const float* o_s = part + r * ld_dv;
      for (int64_t d = 0; d < ld_dv; d += static_cast<int64_t>(hn::Lanes(df))) {
        hn::Store(hn::MulAdd(vw, hn::LoadU(df, o_s + d), hn::Load(df, orow + d)), df, orow + d);
      }
    }
    m[r] = mr;
    l[r] = lr;
  }
}

// Combines the key splits of each block of one unit (MergeRows).
template <class DF>
HWY_NOINLINE void MergeSplits(DF df, const FlashParams& p, int64_t unit, float* scratch,
                              const float* partials) {
  const Scratch s = CarveScratch(p, static_cast<int64_t>(hn::Lanes(df)), scratch);
  for (int64_t sub = 0; sub < p.sub_blocks; ++sub) {
    Block b;
    if (!decode_block(p, unit, sub, &b.g)) continue;
    CarveBlock(s, sub, &b);
    const auto part_of = [&](int64_t split) {
      return partials + (unit * p.splits + split) * p.partial_floats +
             sub * partial_block_floats(p.rows, p.dv);
    };
    MergeRows(df, b.g.rows, s.lay.ld_dv, p.splits, part_of, b.o, b.m, b.l);
    WriteRows(df, p, b.g, b.o, s.lay.ld_dv, b.m, b.l);
  }
}

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

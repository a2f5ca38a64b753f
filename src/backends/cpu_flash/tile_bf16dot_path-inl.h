// cpu.flash per-target code: the tile loop's bf16dot path
// (attention_unit-inl.h), and the bf16 packing it shares with the AMX path
// (tile_amx_path-inl.h). AVX-512 targets only: the others run every problem
// on the f32 products.
#if defined(TESSERA_CPU_FLASH_TILE_BF16DOT_PATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_TILE_BF16DOT_PATH_INL_H_
#undef TESSERA_CPU_FLASH_TILE_BF16DOT_PATH_INL_H_
#else
#define TESSERA_CPU_FLASH_TILE_BF16DOT_PATH_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "cpu_flash/bf16_dot-inl.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/flash_unit.h"
#include "cpu_flash/tile_fma_path-inl.h"
#include "cpu_flash/unit_blocks-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if TESSERA_CPU_FLASH_AVX512_TARGET

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

// K rows [j0, j0 + key_count) copied as bf16 to kt [key_count x D] (so a row is D/2
// pairs; copied for the same L1-aliasing reason as PackKV); the V rows'
// addresses to v_rows.
inline void CopyKeysBf16(const FlashParams& p, const UnitGeom& g, const Scratch& s, int64_t j0,
                         int64_t key_count, const uint16_t** v_rows) {
  auto* kt = reinterpret_cast<uint16_t*>(s.kt);
  for (int64_t j = 0; j < key_count; ++j) {
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
// [ceil(key_count / 2) x ld_dv].
inline void PackKVPairs(const FlashParams& p, const UnitGeom& g, const Scratch& s, int64_t j0,
                        int64_t key_count) {
  const uint16_t* v_rows[kBlockKeys];
  CopyKeysBf16(p, g, s, j0, key_count, v_rows);
  PackValuePairs(v_rows, p.vs[3], key_count, p.dv, s.lay.ld_dv, reinterpret_cast<uint32_t*>(s.vt));
}

// The bf16dot path (bf16 inputs, AVX512_BF16): Q, K and V kept bf16 in
// pairs, both products on vdpbf16ps (bf16_dot-inl.h); P is rounded to bf16
// pairs of keys for the second product.
struct Bf16DotTiles {
  static constexpr float kHeadroom = 0.0f;  // ScoreTransform: the exact max
  // No next-unit prefetch (prefetch_unit): half the bytes of f32 rows, and
  // the varlen embedding batches took 1.03x the time with it.
  static constexpr bool kPrefetchNextUnit = false;

  template <class DF>
  Bf16DotTiles(DF /*df*/, const FlashParams& p, const Scratch& s, const Block* /*blocks*/)
      : p(p), s(s) {}

  static void Begin() {}
  static void End() {}
  template <class DF>
  static HWY_INLINE void PackQuery(DF df, const FlashParams& p, int64_t ld, const Block& b) {
    PackQPairs(df, p, ld, b);
  }
  template <class DF>
  HWY_INLINE void PackTile(DF /*df*/, const UnitGeom& g, int64_t tile_begin, int64_t tile_keys) {
    PackKVPairs(p, g, s, tile_begin, tile_keys);
  }
  // S^T columns: the block's rows rounded up to 16 (PairGemm's step).
  static int64_t Columns(int64_t rows, int64_t ld, int64_t /*lanes*/) {
    return std::min(ld, round_up(rows, 16));
  }
  // V pairs start at even offsets in the tile, so an odd first visible key
  // takes its even neighbour along (the masked softmax gives it p = 0).
  static int64_t Skip(int64_t first_visible) { return first_visible & ~int64_t{1}; }
  template <class DF>
  HWY_INLINE void Scores(DF /*df*/, const Block& b, int64_t /*first*/, int64_t skip,
                         int64_t keys) const {
    const int64_t ld = s.lay.ld_rows, d2 = p.d / 2;
    PairGemm<false>(keys, b.cols, d2, PairA{reinterpret_cast<const uint32_t*>(s.kt) + skip * d2, d2, 1},
                    reinterpret_cast<const uint32_t*>(b.qt), ld, s.st, ld, nullptr);
  }
  template <class DF>
  HWY_INLINE void Accumulate(DF /*df*/, const Block& b, int64_t /*first*/, int64_t skip,
                             int64_t keys) const {
    const int64_t ld = s.lay.ld_rows, ld_dv = s.lay.ld_dv;
    ProbabilitiesToPairs(s.st, ld, b.cols, keys);
    PairGemm<true>(
        b.g.rows, ld_dv, (keys + 1) / 2, PairA{reinterpret_cast<const uint32_t*>(s.st), 1, ld},
        reinterpret_cast<const uint32_t*>(s.vt) + skip / 2 * ld_dv, ld_dv, b.o, ld_dv, b.alpha);
  }
  template <class DF>
  void Finish(DF /*df*/, const Block* /*blocks*/) const {}

  const FlashParams& p;
  const Scratch& s;
};

#endif  // AVX3 targets

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// cpu.flash per-target code: the tile loop's AMX path
// (attention_unit-inl.h). AVX-512 targets only; it runs where the CPU has
// AMX-BF16 and the OS granted the tile state (product_paths.h).
#if defined(TESSERA_CPU_FLASH_TILE_AMX_PATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_TILE_AMX_PATH_INL_H_
#undef TESSERA_CPU_FLASH_TILE_AMX_PATH_INL_H_
#else
#define TESSERA_CPU_FLASH_TILE_AMX_PATH_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "cpu_flash/amx_tiles-inl.h"
#include "cpu_flash/bf16_dot-inl.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/flash_unit.h"
#include "cpu_flash/tile_bf16dot_path-inl.h"
#include "cpu_flash/unit_blocks-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if TESSERA_CPU_FLASH_AVX512_TARGET

// Amx: K as CopyKeysBf16 with rows up to the next 32 zeroed (the score
// tiles read them), unless the tiles read K in place; V^T [dv_tiles x
// kBlockKeys] bf16 to vt by way of the V pairs in vp.
inline void PackKVTiles(const FlashParams& p, const UnitGeom& g, const Scratch& s, int64_t j0,
                        int64_t key_count, bool keys_in_place) {
  const uint16_t* v_rows[kBlockKeys];
  if (keys_in_place) {
    for (int64_t j = 0; j < key_count; ++j) {
      v_rows[j] = static_cast<const uint16_t*>(element(p.v, p.dtype, v_offset(p, g, j0 + j)));
    }
  } else {
    CopyKeysBf16(p, g, s, j0, key_count, v_rows);
    auto* kt = reinterpret_cast<uint16_t*>(s.kt);
    std::fill(kt + key_count * p.d, kt + round_up(key_count, 32) * p.d, uint16_t{0});
  }
  if (p.vs[3] == 1) {
    PackValueTiles(v_rows, key_count, p.dv, s.lay.dv_tiles, reinterpret_cast<uint32_t*>(s.vt));
    return;
  }
  auto* vp = reinterpret_cast<uint32_t*>(s.vp);
  PackValuePairs(v_rows, p.vs[3], key_count, p.dv, s.lay.ld_dv, vp);
  TransposeValuePairs(vp, s.lay.ld_dv, key_count, p.dv, s.lay.dv_tiles,
                      reinterpret_cast<uint32_t*>(s.vt));
}

// Amx, second product of one block: P^T (st, key_count keys) to pairs, the rows
// up to the next 32 keys zeroed, O^T *= alpha (skipped when every alpha is
// 1, as the headroom makes it on most tiles), O^T += V^T . P pairs.
template <class DF>
HWY_INLINE void AccumulateTiles(DF df, const FlashParams& p, const Scratch& s, const Block& b,
                                int64_t key_count) {
  const int64_t ld = s.lay.ld_rows, kp = round_up(key_count, 32);
  ProbabilitiesToPairs(s.st, ld, ld, key_count);
  std::fill(s.st + (key_count + 1) / 2 * ld, s.st + kp / 2 * ld, 0.0f);
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

// The AMX path (bf16 inputs, AMX-BF16): Q pairs as the bf16dot path, K rows
// and V^T in tiles, both products on tdpbf16ps (amx_tiles-inl.h); O is
// accumulated transposed (O^T) and turned back at the end.
struct AmxTiles {
  // O is rescaled in a pass of its own (the FMA paths fold alpha into
  // their product), so the running max may lag the true one by up to 8 in
  // log2 units: p <= 2^8 stays far from f32 limits and rounds to bf16 with
  // the same relative error, and most tiles then skip the rescale.
  static constexpr float kHeadroom = 8.0f;
  // No next-unit prefetch (prefetch_unit): not measured on AMX; the
  // bf16dot path was slower with it.
  static constexpr bool kPrefetchNextUnit = false;

  template <class DF>
  AmxTiles(DF /*df*/, const FlashParams& p, const Scratch& s, const Block* /*blocks*/)
      : p(p), s(s) {}

  static void Begin() { AmxBegin(); }
  static void End() { AmxEnd(); }
  template <class DF>
  static HWY_INLINE void PackQuery(DF df, const FlashParams& p, int64_t ld, const Block& b) {
    PackQPairs(df, p, ld, b);
  }
  // The score tiles load K rows where they are (tileloadd takes the row
  // stride) when the tile is whole 32-key steps, so nothing past the tile's
  // keys is read; a short last tile is copied. S4 bf16 2.23 -> 1.73 ms;
  // prefill S1/S2/S3/S5 bf16 2-7% faster (docs/DECISIONS.md).
  template <class DF>
  HWY_INLINE void PackTile(DF /*df*/, const UnitGeom& g, int64_t tile_begin, int64_t tile_keys) {
    keys_in_place = p.ks[3] == 1 && tile_keys % 32 == 0;
    PackKVTiles(p, g, s, tile_begin, tile_keys, keys_in_place);
  }
  // S^T columns: all of ld. The tiles' product and the O^T rescale run over
  // whole ld here; trimming them as the other paths do is unmeasured (no
  // AMX CPU in the session that trimmed those).
  static int64_t Columns(int64_t /*rows*/, int64_t ld, int64_t /*lanes*/) { return ld; }
  // Tiles start at the tile's first key: keys before a row's first visible
  // key get p = 0 from the masked softmax.
  static int64_t Skip(int64_t /*first_visible*/) { return 0; }
  template <class DF>
  HWY_INLINE void Scores(DF /*df*/, const Block& b, int64_t first, int64_t /*skip*/,
                         int64_t keys) const {
    const int64_t ld = s.lay.ld_rows;
    const auto* q_pairs = reinterpret_cast<const uint32_t*>(b.qt);
    if (keys_in_place) {
      AmxGemm<false>(round_up(keys, 32), ld, p.d,
                     static_cast<const uint16_t*>(element(p.k, p.dtype, k_offset(p, b.g, first))),
                     p.ks[1], q_pairs, ld, s.st, ld);
    } else {
      AmxGemm<false>(round_up(keys, 32), ld, p.d, reinterpret_cast<const uint16_t*>(s.kt), p.d,
                     q_pairs, ld, s.st, ld);
    }
  }
  template <class DF>
  HWY_INLINE void Accumulate(DF df, const Block& b, int64_t /*first*/, int64_t /*skip*/,
                             int64_t keys) const {
    AccumulateTiles(df, p, s, b, keys);
  }
  // O = (O^T)^T, lane i of a vector gathering O^T row d + i. O's padding
  // columns (up to ld_dv) get O^T's zero rows (dv_tiles >= ld_dv).
  template <class DF>
  HWY_INLINE void Finish(DF df, const Block* blocks) const {
    const int64_t ld = s.lay.ld_rows, ld_dv = s.lay.ld_dv;
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

  const FlashParams& p;
  const Scratch& s;
  bool keys_in_place = false;  // this tile's K is read in place (PackTile)
};

#endif  // AVX3 targets

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

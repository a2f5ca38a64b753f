// cpu.flash per-target code: the tile loop, FlashAttention-2's loop over
// K/V tiles for one work item (a unit, or one key split of it):
//   pack Q of each of the unit's query blocks once
//   for each K/V tile of kBlockKeys keys (fully masked tiles never visited):
//     pack K, V once
//     for each query block that sees a key of the tile:
//       S^T = K Q^T              scores, keys as rows
//       online softmax           P^T in place, m, l, alpha   (SoftmaxTile)
//       O = O * alpha + P V
//   out = O / l, lse = m ln 2 + ln l  (or the partial O, m, l of a key split)
// The loop is one template over a product path, which supplies the packing
// and the two products: FmaTiles (f32 operands, every target;
// tile_fma_path-inl.h), Bf16DotTiles (bf16 pairs; tile_bf16dot_path-inl.h)
// and AmxTiles (AMX tiles; tile_amx_path-inl.h). The online softmax is f32
// on every path.
#if defined(TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_
#undef TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_
#else
#define TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <limits>

#include "cpu_flash/flash_params.h"
#include "cpu_flash/flash_unit.h"
#include "cpu_flash/online_softmax-inl.h"
#include "cpu_flash/tile_amx_path-inl.h"
#include "cpu_flash/tile_bf16dot_path-inl.h"
#include "cpu_flash/tile_fma_path-inl.h"
#include "cpu_flash/unit_blocks-inl.h"
#include "cpu_flash/unit_output-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Sets up the unit's query blocks (blocks[sub]) for key split `split` and
// returns the keys [*begin, *end) any of them sees.
template <class Path, class DF>
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
    b.cols = Path::Columns(b.g.rows, ld, static_cast<int64_t>(hn::Lanes(df)));
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
      Path::PackQuery(df, p, ld, b);
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
    std::fill(b.ot, b.ot + s.lay.dv_tiles * ld, 0.0f);  // O^T: AMX only, else empty
  }
}

// The tile loop of one unit (or key split) on product path `Path`, leaving
// each block's O (unnormalised), m and l in its scratch.
template <class Path, class DF>
HWY_NOINLINE void AttendUnit(DF df, const FlashParams& p, int64_t unit, int64_t split,
                             const Scratch& s, Block* blocks) {
  const int64_t ld = s.lay.ld_rows;
  int64_t begin = 0, end = 0;
  StartBlocks<Path>(df, p, unit, split, s, blocks, &begin, &end);
  if (Path::kPrefetchNextUnit && p.prefetch && p.splits == 1) {
    prefetch_unit(p, unit + p.next_unit_ahead);
  }
  Path path(df, p, s, blocks);
  const ScoreTransform transform{p.scale, p.softcap, Path::kHeadroom};
  for (int64_t tile_begin = begin; tile_begin < end; tile_begin += kBlockKeys) {
    const int64_t tile_end = std::min(tile_begin + kBlockKeys, end);
    bool packed = false;
    for (int64_t sub = 0; sub < p.sub_blocks; ++sub) {
      const Block& b = blocks[sub];
      // The keys of the tile this block sees.
      const int64_t visible_begin = std::max(tile_begin, b.keys.begin);
      const int64_t visible_end = std::min(tile_end, b.keys.end);
      if (!b.active || visible_begin >= visible_end) continue;  // fully masked
      if (!packed) {
        // The next tile's rows come into L2 while this one is worked on.
        if (p.prefetch && tile_end < end) {
          prefetch_kv_rows(p, b.g, tile_end, std::min(kBlockKeys, end - tile_end));
        }
        path.PackTile(df, b.g, tile_begin, tile_end - tile_begin);
        packed = true;
      }
      // The products start `skip` keys into the tile, at `first`: the first
      // visible key, or before it where the path's layout needs.
      const int64_t skip = Path::Skip(visible_begin - tile_begin);
      const int64_t first = tile_begin + skip, keys = visible_end - first;
      path.Scores(df, b, first, skip, keys);
      BiasRows bias;
      if (p.bias != nullptr) {
        bias = {p.bias + b.g.b * p.bs[0], b.bias_base, p.bs[3],
                p.bias_index32 ? b.bias_index : nullptr, b.bias_contiguous};
      }
      const bool masked = first < b.keys.full_begin || visible_end > b.keys.full_end;
      SoftmaxTileDispatch(df, p.softcap > 0.0f, p.bias != nullptr, masked, s.st, ld, b.cols, keys,
                          first, transform, bias, SoftmaxRows{b.m, b.l, b.alpha, b.lo, b.hi});
      path.Accumulate(df, b, first, skip, keys);
    }
  }
  path.Finish(df, blocks);
}

// Item = unit * splits + split on product path `Path`. Without splits the
// rows are written here; with splits each block's partial (O, m, l) goes to
// partials[item] for MergeSplits.
template <class Path, class DF>
HWY_INLINE void RunItemOn(DF df, const FlashParams& p, int64_t item, float* scratch,
                          float* partials) {
  const Scratch s = CarveScratch(p, static_cast<int64_t>(hn::Lanes(df)), scratch);
  Block blocks[kMaxSubBlocks];
  Path::Begin();
  AttendUnit<Path>(df, p, item / p.splits, item % p.splits, s, blocks);
  Path::End();
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

// The item on the path this target runs for p (TargetProducts).
template <class DF>
HWY_NOINLINE void RunItem(DF df, const FlashParams& p, int64_t item, float* scratch,
                          float* partials) {
#if TESSERA_CPU_FLASH_AVX512_TARGET
  switch (TargetProducts(p)) {
    case Products::kAmx:
      return RunItemOn<AmxTiles>(df, p, item, scratch, partials);
    case Products::kBf16Dot:
      return RunItemOn<Bf16DotTiles>(df, p, item, scratch, partials);
    case Products::kF32:
      break;
  }
#endif
  RunItemOn<FmaTiles>(df, p, item, scratch, partials);
}

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

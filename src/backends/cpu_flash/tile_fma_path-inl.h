// cpu.flash per-target code: the tile loop's f32 products path
// (attention_unit-inl.h): how Q, K and V are packed as f32 and which
// micro-kernel calls make the two products.
#if defined(TESSERA_CPU_FLASH_TILE_FMA_PATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_TILE_FMA_PATH_INL_H_
#undef TESSERA_CPU_FLASH_TILE_FMA_PATH_INL_H_
#else
#define TESSERA_CPU_FLASH_TILE_FMA_PATH_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "cpu_flash/convert-inl.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/flash_unit.h"
#include "cpu_flash/tile_gemm-inl.h"
#include "cpu_flash/unit_blocks-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

// K and V rows [j0, j0 + key_count) converted to f32 in kt [key_count x D] and vt
// [key_count x ld_dv] (zero-padded columns). f32 tensors are copied too: their rows
// sit Hkv * D elements apart, often a multiple of 4 KiB that maps every row
// of a tile to the same L1 sets, so reading them in place evicts the tile
// while it is swept; the copy is one load and store per element against
// 2 * rows * sub-blocks FMA lanes of use.
template <class DF>
HWY_INLINE void PackKV(DF df, const FlashParams& p, const UnitGeom& g, const Scratch& s, int64_t j0,
                       int64_t key_count) {
  const int64_t ld = s.lay.ld_dv;
  for (int64_t j = 0; j < key_count; ++j) {
    RowToF32(df, element(p.k, p.dtype, k_offset(p, g, j0 + j)), p.dtype, p.ks[3], p.d,
             s.kt + j * p.d);
    float* row = s.vt + j * ld;
    RowToF32(df, element(p.v, p.dtype, v_offset(p, g, j0 + j)), p.dtype, p.vs[3], p.dv, row);
    std::fill(row + p.dv, row + ld, 0.0f);
  }
}

// The f32 products (every target, every dtype): Q^T, K and V as f32, both
// products on the FMA micro-kernel (tile_gemm-inl.h).
struct FmaTiles {
  static constexpr float kHeadroom = 0.0f;  // ScoreTransform: the exact max
  // The next unit's first rows are asked for while this one runs
  // (prefetch_unit): embedding-sized varlen batches (B=120,S=136,H=12,D=32)
  // 0.95x the time.
  static constexpr bool kPrefetchNextUnit = true;

  // Decode-sized work (one block of at most kMicroRows rows, one vector of
  // columns; single queries without bias or softcap take decode-inl.h
  // instead) reads each f32 K and V element exactly once per tile, so it
  // reads them where they are: the copy PackKV makes against L1 set
  // conflicts only pays when a tile is swept several times. The next tile
  // is prefetched into L2 by the loop; the same prefetch into L1 filled the
  // line-fill buffers and ran 15-20% slower (docs/DECISIONS.md).
  template <class DF>
  FmaTiles(DF df, const FlashParams& p, const Scratch& s, const Block* blocks)
      : p(p),
        s(s),
        in_place(p.dtype == DType::kF32 && p.ks[3] == 1 && p.vs[3] == 1 && s.lay.ld_dv == p.dv &&
                 p.sub_blocks == 1 && s.lay.ld_rows <= static_cast<int64_t>(hn::Lanes(df)) &&
                 blocks[0].g.rows <= kMicroRows) {}

  static void Begin() {}
  static void End() {}
  template <class DF>
  static HWY_INLINE void PackQuery(DF df, const FlashParams& p, int64_t ld, const Block& b) {
    PackQT(df, p, ld, b);
  }
  template <class DF>
  HWY_INLINE void PackTile(DF df, const UnitGeom& g, int64_t tile_begin, int64_t tile_keys) {
    if (!in_place) PackKV(df, p, g, s, tile_begin, tile_keys);
  }
  // S^T columns: the block's rows rounded up to a vector (TileGemm's step).
  static int64_t Columns(int64_t rows, int64_t ld, int64_t lanes) {
    return std::min(ld, round_up(rows, lanes));
  }
  // The products start at the block's first visible key of the tile.
  static int64_t Skip(int64_t first_visible) { return first_visible; }
  // S^T [keys x rows] = K Q^T for keys [first, first + keys).
  template <class DF>
  HWY_INLINE void Scores(DF df, const Block& b, int64_t first, int64_t skip, int64_t keys) const {
    const int64_t ld = s.lay.ld_rows;
    const StridedA k_rows =
        in_place
            ? StridedA{static_cast<const float*>(element(p.k, p.dtype, k_offset(p, b.g, first))),
                       p.ks[1], 1}
            : StridedA{s.kt + skip * p.d, p.d, 1};
    TileGemm<false>(df, keys, b.cols, p.d, k_rows, b.qt, ld, s.st, ld, nullptr);
  }
  // O = O * alpha + P V.
  template <class DF>
  HWY_INLINE void Accumulate(DF df, const Block& b, int64_t first, int64_t skip,
                             int64_t keys) const {
    const int64_t ld_dv = s.lay.ld_dv;
    const float* v_rows =
        in_place ? static_cast<const float*>(element(p.v, p.dtype, v_offset(p, b.g, first)))
                 : s.vt + skip * ld_dv;
    TileGemm<true>(df, b.g.rows, ld_dv, keys, StridedA{s.st, 1, s.lay.ld_rows}, v_rows,
                   in_place ? p.vs[1] : ld_dv, b.o, ld_dv, b.alpha);
  }
  template <class DF>
  void Finish(DF /*df*/, const Block* /*blocks*/) const {}

  const FlashParams& p;
  const Scratch& s;
  const bool in_place;
};

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

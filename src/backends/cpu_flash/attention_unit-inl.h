// cpu.flash per-target code: one work item = one unit (or one key split of
// it), the FlashAttention-2 loop over K/V tiles:
//   pack Q^T [D x rows] once
//   for each K/V tile of kBlockKeys keys (fully masked tiles never visited):
//     S^T = K * Q^T            scores, keys as rows        (TileGemm)
//     online softmax           P^T in place, m, l, alpha   (SoftmaxTile)
//     O = O * alpha + P * V                                (TileGemm)
//   out = O / l, lse = m + log l  (or the partial O, m, l of a key split)
#if defined(TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_
#undef TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_
#else
#define TESSERA_CPU_FLASH_ATTENTION_UNIT_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cpu_flash/flash_params.h"
#include "cpu_flash/flash_unit.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The per-thread scratch, carved by scratch_layout for this target's lanes.
struct Scratch {
  ScratchLayout lay;
  float* qt;
  float* kt;
  float* vt;
  float* st;
  float* o;
  float* m;
  float* l;
  float* alpha;
  float* lo;
  float* hi;
  int64_t* bias_base;
};

inline Scratch CarveScratch(const FlashParams& p, int64_t lanes, float* base) {
  Scratch s;
  s.lay = scratch_layout(p.rows, p.d, p.dv, lanes);
  s.qt = base + s.lay.qt;
  s.kt = base + s.lay.kt;
  s.vt = base + s.lay.vt;
  s.st = base + s.lay.st;
  s.o = base + s.lay.o;
  s.m = base + s.lay.m;
  s.l = base + s.lay.l;
  s.alpha = base + s.lay.alpha;
  s.lo = base + s.lay.lo;
  s.hi = base + s.lay.hi;
  s.bias_base = reinterpret_cast<int64_t*>(base + s.lay.bias_base);
  return s;
}

// Q^T [D x ld_rows]: row r of the unit becomes column r; padding columns 0.
// The o region is free here and holds one converted row at a time.
template <class DF>
HWY_INLINE void PackQT(DF df, const FlashParams& p, const UnitGeom& g, const Scratch& s) {
  const int64_t ld = s.lay.ld_rows;
  std::fill(s.qt, s.qt + p.d * ld, 0.0f);
  for (int64_t r = 0; r < g.rows; ++r) {
    RowToF32(df, element(p.q, p.dtype, q_offset(p, g, r)), p.dtype, p.qs[3], p.d, s.o);
    for (int64_t d = 0; d < p.d; ++d) s.qt[d * ld + r] = s.o[d];
  }
}

// The K tile as the broadcast operand of the score product: f32 tensors are
// read in place (any strides); bf16/f16 rows are converted into kt first.
template <class DF>
HWY_INLINE StridedA KTile(DF df, const FlashParams& p, const UnitGeom& g, const Scratch& s,
                          int64_t j0, int64_t kb) {
  if (p.dtype == DType::kF32) {
    return {static_cast<const float*>(p.k) + k_offset(p, g, j0), p.ks[1], p.ks[3]};
  }
  for (int64_t j = 0; j < kb; ++j) {
    RowToF32(df, element(p.k, p.dtype, k_offset(p, g, j0 + j)), p.dtype, p.ks[3], p.d,
             s.kt + j * p.d);
  }
  return {s.kt, p.d, 1};
}

// The V tile as rows of vectors: f32 rows with unit stride and whole
// vectors are read in place; otherwise converted into vt, zero-padded.
template <class DF>
HWY_INLINE const float* VTile(DF df, const FlashParams& p, const UnitGeom& g, const Scratch& s,
                              int64_t j0, int64_t kb, int64_t* ldb) {
  if (p.dtype == DType::kF32 && p.vs[3] == 1 && p.dv == s.lay.ld_dv) {
    *ldb = p.vs[1];
    return static_cast<const float*>(p.v) + v_offset(p, g, j0);
  }
  const int64_t ld = s.lay.ld_dv;
  for (int64_t j = 0; j < kb; ++j) {
    float* row = s.vt + j * ld;
    RowToF32(df, element(p.v, p.dtype, v_offset(p, g, j0 + j)), p.dtype, p.vs[3], p.dv, row);
    std::fill(row + p.dv, row + ld, 0.0f);
  }
  *ldb = ld;
  return s.vt;
}

// Runs the tile loop of `g` over `keys`, leaving O (unnormalised), m, l in s.
template <class DF>
HWY_NOINLINE void AttendUnit(DF df, const FlashParams& p, const UnitGeom& g, const KeyRange& keys,
                             const Scratch& s) {
  const int64_t ld = s.lay.ld_rows, ld_dv = s.lay.ld_dv;
  std::fill(s.m, s.m + ld, -std::numeric_limits<float>::infinity());
  std::fill(s.l, s.l + ld, 0.0f);
  if (keys.end > keys.begin) PackQT(df, p, g, s);  // uses o as a temporary
  std::fill(s.o, s.o + g.rows * ld_dv, 0.0f);
  if (keys.end <= keys.begin) return;
  BiasRows bias;
  if (p.bias != nullptr) {
    for (int64_t r = 0; r < ld; ++r) s.bias_base[r] = bias_row_offset(p, g, r < g.rows ? r : 0);
    bias = {p.bias + g.b * p.bs[0], s.bias_base, p.bs[3]};
  }
  const ScoreTransform tf{p.scale, p.softcap};
  const SoftmaxRows rows{s.m, s.l, s.alpha, s.lo, s.hi};
  for (int64_t j0 = keys.begin; j0 < keys.end; j0 += kBlockKeys) {
    const int64_t kb = std::min(kBlockKeys, keys.end - j0);
    const StridedA k_tile = KTile(df, p, g, s, j0, kb);
    TileGemm<false>(df, kb, ld, p.d, k_tile, s.qt, ld, s.st, ld, nullptr);
    const bool masked = j0 < keys.full_begin || j0 + kb > keys.full_end;
    SoftmaxTileDispatch(df, p.softcap > 0.0f, p.bias != nullptr, masked, s.st, ld, kb, j0, tf,
                        bias, rows);
    int64_t ldb = 0;
    const float* v_tile = VTile(df, p, g, s, j0, kb, &ldb);
    TileGemm<true>(df, g.rows, ld_dv, kb, StridedA{s.st, 1, ld}, v_tile, ldb, s.o, ld_dv,
                   s.alpha);
  }
}

// out rows = O / l (zeros where no key was visible), lse = m + log l.
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
    write_lse(p, g, r, m[r], l[r]);
  }
}

// Item = unit * splits + split. Without splits the rows are written here;
// with splits the partial (O, m, l) goes to partials[item] for MergeSplits.
template <class DF>
HWY_NOINLINE void RunItem(DF df, const FlashParams& p, int64_t item, float* scratch,
                          float* partials) {
  UnitGeom g;
  if (!decode_unit(p, item / p.splits, &g)) return;
  const Scratch s = CarveScratch(p, static_cast<int64_t>(hn::Lanes(df)), scratch);
  const KeyRange keys = row_bounds(p, g, item % p.splits, s.lay.ld_rows, s.lo, s.hi);
  AttendUnit(df, p, g, keys, s);
  if (p.splits == 1) return WriteRows(df, p, g, s.o, s.lay.ld_dv, s.m, s.l);
  float* part = partials + item * p.partial_floats;
  const int64_t o_floats = g.rows * s.lay.ld_dv;
  std::memcpy(part, s.o, sizeof(float) * o_floats);
  std::memcpy(part + o_floats, s.m, sizeof(float) * g.rows);
  std::memcpy(part + o_floats + g.rows, s.l, sizeof(float) * g.rows);
}

// Combines the key splits of one unit by their log-sum-exp:
//   m = max_s m_s ; w_s = exp(m_s - m) ; l = sum w_s l_s ; O = sum w_s O_s
template <class DF>
HWY_NOINLINE void MergeSplits(DF df, const FlashParams& p, int64_t unit, float* scratch,
                              const float* partials) {
  UnitGeom g;
  if (!decode_unit(p, unit, &g)) return;
  const Scratch s = CarveScratch(p, static_cast<int64_t>(hn::Lanes(df)), scratch);
  const int64_t ld_dv = s.lay.ld_dv, o_floats = g.rows * ld_dv;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < g.rows; ++r) {
    float m = neg_inf, l = 0.0f;
    for (int64_t sp = 0; sp < p.splits; ++sp) {
      const float* part = partials + (unit * p.splits + sp) * p.partial_floats;
      m = std::max(m, part[o_floats + r]);
    }
    const float m_safe = m == neg_inf ? 0.0f : m;
    float* o = s.o + r * ld_dv;
    std::fill(o, o + ld_dv, 0.0f);
    for (int64_t sp = 0; sp < p.splits; ++sp) {
      const float* part = partials + (unit * p.splits + sp) * p.partial_floats;
      const float l_s = part[o_floats + g.rows + r];
      if (l_s == 0.0f) continue;  // nothing visible in this split (O_s is 0)
      const float w = std::exp(part[o_floats + r] - m_safe);
      l += w * l_s;  // NaN l_s stays NaN
      const auto vw = hn::Set(df, w);
      const float* o_s = part + r * ld_dv;
      for (int64_t d = 0; d < ld_dv; d += static_cast<int64_t>(hn::Lanes(df))) {
        hn::Store(hn::MulAdd(vw, hn::LoadU(df, o_s + d), hn::Load(df, o + d)), df, o + d);
      }
    }
    s.m[r] = m;
    s.l[r] = l;
  }
  WriteRows(df, p, g, s.o, ld_dv, s.m, s.l);
}

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

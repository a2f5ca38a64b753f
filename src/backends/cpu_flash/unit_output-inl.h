// cpu.flash per-target code: a unit's results leave the scratch here, as
// output rows (O / l, lse) or, for key splits, as partial results that the
// merge combines by their log-sum-exp. Used by the tile loop
// (attention_unit-inl.h) and the decode loop (decode-inl.h).
#if defined(TESSERA_CPU_FLASH_UNIT_OUTPUT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_UNIT_OUTPUT_INL_H_
#undef TESSERA_CPU_FLASH_UNIT_OUTPUT_INL_H_
#else
#define TESSERA_CPU_FLASH_UNIT_OUTPUT_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cpu_flash/convert-inl.h"
#include "cpu_flash/flash_params.h"
#include "cpu_flash/flash_unit.h"
#include "cpu_flash/unit_blocks-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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

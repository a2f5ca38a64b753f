// Scalar bookkeeping of a cpu.flash work unit (see flash_unit.h).
#include "cpu_flash/flash_unit.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera::cpu_flash {

bool decode_block(const FlashParams& p, int64_t unit, int64_t sub, UnitGeom* g) {
  int64_t rest = unit;
  const int64_t q_unit = rest % p.q_units;
  rest /= p.q_units;
  const int64_t chunk = rest % p.head_chunks;
  rest /= p.head_chunks;
  g->kvh = rest % p.hkv;
  g->b = rest / p.hkv;
  if (p.cu_q != nullptr) {
    g->tb = 0;
    g->q_begin = p.cu_q[g->b];
    g->q_len = p.cu_q[g->b + 1] - g->q_begin;
    g->k_begin = p.cu_k[g->b];
    g->k_len = p.cu_k[g->b + 1] - g->k_begin;
  } else {
    g->tb = g->b;
    g->q_begin = g->k_begin = 0;
    g->q_len = p.sq;
    g->k_len = p.sk;
  }
  g->p0 = (q_unit * p.sub_blocks + sub) * p.block_q;
  if (sub >= p.sub_blocks || g->p0 >= g->q_len) return false;
  g->npos = std::min(p.block_q, g->q_len - g->p0);
  g->h0 = g->kvh * p.group + chunk * p.heads_per_unit;
  g->nh = std::min(p.heads_per_unit, p.group - chunk * p.heads_per_unit);
  g->rows = g->npos * g->nh;
  return g->rows > 0;
}

void visible_keys(const FlashParams& p, const UnitGeom& g, int64_t pos, int64_t* lo, int64_t* hi) {
  const int64_t key_pos = pos + g.k_len - g.q_len;  // bottom-right aligned
  *lo = 0;
  *hi = g.k_len - 1;
  if (p.mask.kind == MaskKind::kCausal) {
    *hi = std::min(*hi, key_pos);
  } else if (p.mask.kind == MaskKind::kWindow) {
    if (p.mask.window_left >= 0) *lo = std::max(*lo, key_pos - p.mask.window_left);
    if (p.mask.window_right >= 0) *hi = std::min(*hi, key_pos + p.mask.window_right);
  }
}

KeyRange row_bounds(const FlashParams& p, const UnitGeom& g, int64_t ld, float* lo, float* hi) {
  KeyRange kr;
  int64_t begin = std::numeric_limits<int64_t>::max(), end = 0;
  int64_t max_lo = 0, min_hi = g.k_len - 1;
  for (int64_t r = 0; r < g.rows; ++r) {
    int64_t first = 0, last = 0;  // the row's visible keys, inclusive
    visible_keys(p, g, g.pos(r), &first, &last);
    lo[r] = static_cast<float>(first);
    hi[r] = static_cast<float>(last);
    max_lo = std::max(max_lo, first);
    min_hi = std::min(min_hi, last);
    if (first <= last) {
      begin = std::min(begin, first);
      end = std::max(end, last + 1);
    }
  }
  for (int64_t r = g.rows; r < ld; ++r) {  // padding columns see nothing
    lo[r] = 1.0f;
    hi[r] = 0.0f;
  }
  if (end <= begin) return kr;  // every row fully masked
  kr.begin = begin;
  kr.end = end;
  kr.full_begin = max_lo;
  kr.full_end = min_hi + 1;
  return kr;
}

void split_keys(const FlashParams& p, int64_t split, int64_t* begin, int64_t* end) {
  if (*end <= *begin) return;
  const int64_t tiles = (*end - *begin + kBlockKeys - 1) / kBlockKeys;
  const int64_t per_split = (tiles + p.splits - 1) / p.splits;
  const int64_t b = std::min(*end, *begin + split * per_split * kBlockKeys);
  *end = std::min(*end, b + per_split * kBlockKeys);
  *begin = b;
}

void write_lse(const FlashParams& p, const UnitGeom& g, int64_t r, float m, float l) {
  // m is in log2 units (the kernel's scores are scaled by log2 e).
  constexpr float kLn2 = 0.693147180559945309f;
  const float value = l == 0.0f ? -std::numeric_limits<float>::infinity() : m * kLn2 + std::log(l);
  p.lse[g.tb * p.ls[0] + g.head(r) * p.ls[1] + (g.q_begin + g.pos(r)) * p.ls[2]] = value;
}

void prefetch_unit(const FlashParams& p, int64_t unit) {
  if (unit >= p.units()) return;
  UnitGeom first;
  bool any = false;
  for (int64_t sub = 0; sub < p.sub_blocks; ++sub) {
    UnitGeom g;
    if (!decode_block(p, unit, sub, &g)) continue;
    prefetch_q_rows(p, g);
    if (!any) first = g;
    any = true;
  }
  if (!any) return;
  int64_t lo = 0, hi = 0;
  visible_keys(p, first, first.pos(0), &lo, &hi);
  if (lo <= hi) prefetch_kv_rows(p, first, lo, std::min(kBlockKeys, first.k_len - lo));
}

}  // namespace tessera::cpu_flash

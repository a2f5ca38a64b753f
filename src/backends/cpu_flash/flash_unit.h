// cpu.flash: the scalar bookkeeping of one work unit, shared by every SIMD
// target: which rows it owns, where they live in the tensors, and which keys
// each row may see (masks), so fully masked K/V tiles are never touched.
#pragma once

#include <cstdint>

#include "cpu_flash/flash_params.h"

namespace tessera::cpu_flash {

// Unit u = (b, kv head, head chunk, query unit), query unit fastest; query
// unit qu holds query blocks qu * sub_blocks + sub. Row r of a block is
// query position p0 + r / nh of head h0 + r % nh.
struct UnitGeom {
  int64_t b = 0;        // sequence index
  int64_t tb = 0;       // batch index in the tensors (0 when varlen-packed)
  int64_t kvh = 0;      // KV head
  int64_t q_begin = 0;  // first row of the sequence in q/out (varlen offset)
  int64_t k_begin = 0;
  int64_t q_len = 0, k_len = 0;
  int64_t p0 = 0, npos = 0;  // query positions [p0, p0 + npos) of the sequence
  int64_t h0 = 0, nh = 0;    // query heads [h0, h0 + nh)
  int64_t rows = 0;          // npos * nh
  // One head (every MHA unit): no division, which costs ~15 cycles a row
  // where the rows' offsets are taken (bookkeeping, packing, writing out).
  int64_t pos(int64_t r) const { return nh == 1 ? p0 + r : p0 + r / nh; }
  int64_t head(int64_t r) const { return nh == 1 ? h0 : h0 + r % nh; }
};

// Block `sub` of unit `unit`; false when it has no query rows (past the end
// of a short varlen sequence, or of the last unit).
bool decode_block(const FlashParams& p, int64_t unit, int64_t sub, UnitGeom* g);

// Keys [begin, end) (sequence-local) some row of a block sees, and the range
// [full_begin, full_end) every row sees (tiles inside need no mask test).
struct KeyRange {
  int64_t begin = 0, end = 0;
  int64_t full_begin = 0, full_end = 0;
  bool empty() const { return end <= begin; }
};

// The first and last key (sequence-local) query position `pos` of the
// block's sequence sees under p.mask (bottom-right aligned); lo > hi when
// none.
void visible_keys(const FlashParams& p, const UnitGeom& g, int64_t pos, int64_t* lo, int64_t* hi);

// Writes each row's first/last visible key (f32, sequence-local) to lo/hi
// for `ld` columns (padding columns get an empty range) and returns the
// block's key range.
KeyRange row_bounds(const FlashParams& p, const UnitGeom& g, int64_t ld, float* lo, float* hi);

// Split `split` of p.splits of [begin, end): whole kBlockKeys tiles from
// begin, as even as tiles allow; empty when there are more splits than tiles.
void split_keys(const FlashParams& p, int64_t split, int64_t* begin, int64_t* end);

// Offset in elements of q/out row (r) and of k/v row (key j, sequence-local).
inline int64_t q_offset(const FlashParams& p, const UnitGeom& g, int64_t r) {
  return g.tb * p.qs[0] + (g.q_begin + g.pos(r)) * p.qs[1] + g.head(r) * p.qs[2];
}
inline int64_t out_offset(const FlashParams& p, const UnitGeom& g, int64_t r) {
  return g.tb * p.os[0] + (g.q_begin + g.pos(r)) * p.os[1] + g.head(r) * p.os[2];
}
inline int64_t k_offset(const FlashParams& p, const UnitGeom& g, int64_t j) {
  return g.tb * p.ks[0] + (g.k_begin + j) * p.ks[1] + g.kvh * p.ks[2];
}
inline int64_t v_offset(const FlashParams& p, const UnitGeom& g, int64_t j) {
  return g.tb * p.vs[0] + (g.k_begin + j) * p.vs[1] + g.kvh * p.vs[2];
}
// Bias row of (row r) relative to p.bias + b * bs[0]; key j adds j * bs[3].
inline int64_t bias_row_offset(const FlashParams& p, const UnitGeom& g, int64_t r) {
  return g.head(r) * p.bs[1] + g.pos(r) * p.bs[2];
}

// Writes row r's lse = m ln 2 + ln l (m is the running max in log2 units);
// a row that saw no key (l == 0) gets -inf, l = NaN gives NaN. The SIMD
// side writes out. Only where lse was asked for (p.lse set): the caller
// tests that, so a problem without lse pays no call per row.
void write_lse(const FlashParams& p, const UnitGeom& g, int64_t r, float m, float l);

// Bytes per element of the kernel's dtypes (f32, f16, bf16), inline:
// tessera::dtype_size is out of line in the runtime library (a call per row
// at S=16; P1 f32 0.92-0.95x the time with this). The prefetch helpers below
// size their rows with dtype_size on purpose: with this inline size there
// too, GCC 12.2 emitted none of the prefill loop's prefetches, and S5 f32
// took ~1.2x (docs/DECISIONS.md, "cpu.flash runs small problems on the
// calling thread").
inline int64_t element_bytes(DType dtype) { return dtype == DType::kF32 ? 4 : 2; }

// Element pointer arithmetic on a tensor of `dtype`.
inline const void* element(const void* base, DType dtype, int64_t offset) {
  return static_cast<const char*>(base) + offset * element_bytes(dtype);
}
inline void* element(void* base, DType dtype, int64_t offset) {
  return static_cast<char*>(base) + offset * element_bytes(dtype);
}

// Asks for the cache lines of [start, start + bytes) into L2 (locality 1:
// prefetcht2 on x86; with kWrite, prefetchw), not L1: an L1 prefetch holds
// one of the core's few L1 miss buffers until its line arrives, which capped
// the decode loop's stream at ~11 GB/s per core on a Zen 4; an L2 prefetch
// is queued at L2, which has many more (Zen 4, S4: f32 2.78-2.97 -> 1.90-2.34
// ms, bf16 1.69-1.99 -> 1.23-1.26; docs/DECISIONS.md, "Prefetch into L2, not
// L1"). A line every 64 bytes from start covers an aligned range; an
// unaligned one also needs its last byte's line.
template <int kWrite = 0>
inline void prefetch_to_l2(const void* start, int64_t bytes) {
  const char* at = static_cast<const char*>(start);
  for (int64_t i = 0; i < bytes; i += 64) __builtin_prefetch(at + i, kWrite, /*locality=*/1);
  if (bytes > 0 && reinterpret_cast<uintptr_t>(at) % 64 != 0) {
    __builtin_prefetch(at + bytes - 1, kWrite, /*locality=*/1);
  }
}

// The prefill tile loop's cold reads, asked for before they are needed: the
// Q rows of block g, and the K and V rows [j0, j0 + key_count) of its sequence.
// Rows whose elements are not contiguous are left to the hardware.
inline void prefetch_q_rows(const FlashParams& p, const UnitGeom& g) {
  if (p.qs[3] != 1) return;
  const int64_t bytes = p.d * static_cast<int64_t>(dtype_size(p.dtype));
  for (int64_t r = 0; r < g.rows; ++r) {
    prefetch_to_l2(element(p.q, p.dtype, q_offset(p, g, r)), bytes);
  }
}
// The out rows of block g, for writing (prefetchw): the unit writes them at
// its end, and a store that misses holds the write until its line arrives.
inline void prefetch_out_rows(const FlashParams& p, const UnitGeom& g) {
  if (p.os[3] != 1) return;
  const int64_t bytes = p.dv * static_cast<int64_t>(dtype_size(p.dtype));
  for (int64_t r = 0; r < g.rows; ++r) {
    prefetch_to_l2</*kWrite=*/1>(element(p.out, p.dtype, out_offset(p, g, r)), bytes);
  }
}
inline void prefetch_kv_rows(const FlashParams& p, const UnitGeom& g, int64_t j0,
                             int64_t key_count) {
  const auto size = static_cast<int64_t>(dtype_size(p.dtype));
  for (int64_t j = j0; j < j0 + key_count; ++j) {
    if (p.ks[3] == 1) prefetch_to_l2(element(p.k, p.dtype, k_offset(p, g, j)), p.d * size);
    if (p.vs[3] == 1) prefetch_to_l2(element(p.v, p.dtype, v_offset(p, g, j)), p.dv * size);
  }
}

// The cold rows of unit `unit` (none past the last unit): the Q rows of its
// blocks and the K and V rows of the first key tile its first block sees.
// Asked for while the thread works on the unit before it: a short sequence's
// unit is over before the next tile's prefetch could help, and its first
// reads (Q, K and V rows of one head, a QKV row apart) otherwise wait for
// memory one row at a time.
void prefetch_unit(const FlashParams& p, int64_t unit);

}  // namespace tessera::cpu_flash

// cpu.flash: the tile configuration (derived here, in one place) and the plain
// data the host side hands to the SIMD kernel.
//
// Shapes, with G = Hq / Hkv query heads per KV head:
//   q   [B, Sq, Hq, D]   k [B, Sk, Hkv, D]   v [B, Sk, Hkv, Dv]
//   out [B, Sq, Hq, Dv]  lse [B, Hq, Sq]     bias broadcastable to [B, Hq, Sq, Sk]
// A query block is (batch b, KV head, chunk of the G heads, block of query
// positions): its `rows` query rows (positions x heads) share every K/V
// tile. A work unit is up to sub_blocks consecutive query blocks of one
// (b, KV head, chunk), so each K/V tile is loaded once for all of them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "tessera/attention.h"

namespace tessera::cpu_flash {

// In the per-target code (-inl.h), `#if TESSERA_CPU_FLASH_AVX512_TARGET`:
// whether the Highway target being compiled is an AVX-512 one, the only
// targets that carry the bf16dot and AMX paths (Highway 1.0.3 has no
// AVX512_BF16 or AMX target; those paths add their instructions to these
// targets by target attribute). HWY_TARGET is read where it is used.
#define TESSERA_CPU_FLASH_AVX512_TARGET (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL)

// Cache sizes the tiles are sized for (per core; Zen 3 / Zen 4 / most x86).
inline constexpr int64_t kL1Bytes = int64_t{32} * 1024;
inline constexpr int64_t kL2Bytes = int64_t{512} * 1024;

// The SIMD kernel uses at most this many f32 lanes (hn::CappedTag), so the
// workspace can be sized before the target is known: 16 lanes = 64 bytes, one
// cache line and the allocator's alignment.
inline constexpr int64_t kMaxLanes = 16;

// Register tile of the micro-kernel: kMicroRows broadcast rows x kMicroVecs
// vectors = 12 accumulators, leaving 4 of the 16 AVX2/AVX-512-VL registers
// for the B loads and the broadcast.
inline constexpr int kMicroRows = 6;
inline constexpr int kMicroVecs = 2;

// Query rows per block (positions x heads of one GQA group). 64 rows make
// each K/V element feed 64 FMAs per product, enough to keep the FMA ports
// busy while the K/V tile streams from L2; the Q^T panel of one column
// block (D x 2 vectors) stays in L1.
inline constexpr int64_t kBlockRows = 64;
// Keys per K/V tile. The V panel of one column block (64 x 2 vectors = 8 KiB
// at 16 lanes) stays in L1 while the micro-kernel sweeps it.
inline constexpr int64_t kBlockKeys = 64;
// A work unit runs up to this many query blocks against each K/V tile it
// loads (their Q^T and O stay in L2), so K and V are read from memory once
// per kMaxSubBlocks * kBlockRows query rows instead of once per block.
inline constexpr int64_t kMaxSubBlocks = 4;
// L2 share for the sub-blocks' Q^T and O (the rest holds the K/V tiles).
inline constexpr int64_t kSubBlocksBytes = int64_t{256} * 1024;
// Largest head dim (D and Dv): the per-thread working set below must fit L2.
inline constexpr int64_t kMaxHeadDim = 256;
// f32 indices of keys in the mask test are exact below 2^24.
inline constexpr int64_t kMaxKeys = int64_t{1} << 24;

// AMX tiles (amx_tiles-inl.h) take 32 bf16 of the reduced dim per step and
// are blocked 2 x 2: D must be a multiple of this, Dv is padded to it.
inline constexpr int64_t kAmxDvStep = 32;

constexpr int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Hands out consecutive scratch regions, each rounded up to kMaxLanes floats
// so every region starts 64-byte aligned.
struct ScratchCarver {
  int64_t at = 0;
  constexpr int64_t take(int64_t floats) {
    const int64_t here = at;
    at += round_up(floats, kMaxLanes);
    return here;
  }
};

// Query blocks a unit can hold in L2 for this shape.
constexpr int64_t sub_blocks_for(int64_t rows, int64_t d, int64_t dv) {
  const int64_t bytes = rows * (d + dv) * 4;
  const int64_t fit = kSubBlocksBytes / (bytes > 0 ? bytes : 1);
  return fit < 1 ? 1 : fit > kMaxSubBlocks ? kMaxSubBlocks : fit;
}

// Offsets (in f32 elements, each a multiple of kMaxLanes so every region is
// 64-byte aligned) of one thread's scratch for a SIMD width of `lanes` f32.
// Shared by the unit's query blocks:
//   kt [keys x D]         K tile converted to f32
//   vt [keys x ld_dv]     V tile converted to f32, columns zero-padded
//   st [keys x ld_rows]   scores S^T, then probabilities P^T, in place
// Per query block b, at sub + b * sub_stride (offsets below relative):
//   qt [D x ld_rows]      Q^T of the block's rows (query rows are columns)
//   o  [rows x ld_dv]     unnormalised output accumulator
//   m, l, alpha, lo, hi   per query row: running max, running sum, rescale
//                         factor, first and last visible key
//   bias_base             per query row: int64 offset of its bias row
//   bias_index            the same as int32, when every bias offset fits
//                         (FlashParams::bias_index32): one vector gather per
//                         score vector instead of a scalar loop
// The AMX path (`amx`) keeps V^T [dv_tiles x keys] bf16 in vt, V pairs
// [keys/2 x ld_dv] on their way there in vp, and per block O^T
// [dv_tiles x ld_rows] in ot (o receives it transposed at the end).
struct ScratchLayout {
  int64_t ld_rows = 0, ld_dv = 0, dv_tiles = 0;
  int64_t kt = 0, vt = 0, vp = 0, st = 0, sub = 0, sub_stride = 0;
  int64_t qt = 0, o = 0, ot = 0, m = 0, l = 0, alpha = 0, lo = 0, hi = 0, bias_base = 0;
  int64_t bias_index = 0;
  int64_t total = 0;
};
constexpr ScratchLayout scratch_layout(int64_t rows, int64_t d, int64_t dv, int64_t lanes,
                                       int64_t sub_blocks, bool amx = false) {
  ScratchLayout s;
  s.ld_rows = round_up(rows, lanes);
  s.ld_dv = round_up(dv, lanes);
  s.dv_tiles = amx ? round_up(dv, kAmxDvStep) : 0;
  ScratchCarver shared;
  s.kt = shared.take(kBlockKeys * d);
  s.vt = shared.take(amx ? s.dv_tiles * kBlockKeys / 2 : kBlockKeys * s.ld_dv);
  s.vp = shared.take(amx ? kBlockKeys / 2 * s.ld_dv : 0);
  s.st = shared.take(kBlockKeys * s.ld_rows);
  s.sub = shared.at;
  ScratchCarver block;
  s.qt = block.take(d * s.ld_rows);
  s.o = block.take(rows * s.ld_dv);
  s.ot = block.take(s.dv_tiles * s.ld_rows);
  s.m = block.take(s.ld_rows);
  s.l = block.take(s.ld_rows);
  s.alpha = block.take(s.ld_rows);
  s.lo = block.take(s.ld_rows);
  s.hi = block.take(s.ld_rows);
  s.bias_base = block.take(2 * s.ld_rows);  // int64 = two f32 slots
  s.bias_index = block.take(s.ld_rows);     // int32 copies for the gather
  s.sub_stride = block.at;
  s.total = s.sub + sub_blocks * s.sub_stride;
  return s;
}

// The split-K partial result of one query block (or one decode item, rows =
// Hq): O [rows x ld_dv], m, l (WritePartial and MergeRows, unit_output-inl.h).
constexpr int64_t partial_block_floats(int64_t rows, int64_t dv) {
  return round_up(rows * round_up(dv, kMaxLanes), kMaxLanes) + 2 * round_up(rows, kMaxLanes);
}

static_assert(kBlockRows % kMaxLanes == 0, "query rows must fill whole vectors");
static_assert(kBlockKeys >= kMicroRows, "a K tile needs at least one register tile");
static_assert(kBlockKeys % 2 == 0, "bf16 pairs need an even key count");
static_assert(scratch_layout(kBlockRows, kMaxHeadDim, kMaxHeadDim, kMaxLanes,
                             sub_blocks_for(kBlockRows, kMaxHeadDim, kMaxHeadDim))
                          .total *
                      4 <=
                  kL2Bytes,
              "the largest per-thread working set must fit L2");
static_assert(sub_blocks_for(kBlockRows, 64, 64) == kMaxSubBlocks,
              "common head dims get every sub-block");
static_assert(kBlockKeys * kMaxLanes * kMicroVecs * 4 <= kL1Bytes / 2,
              "a V panel must leave half of L1 for the rest");

// Decode (one query position per sequence, decode-inl.h): keys per step,
// how far ahead of the products K and V rows are prefetched (bytes of one
// tensor's rows), and the per-thread scratch for Hq heads (hp = Hq rounded
// up to the widest vector, so the softmax runs in vectors across heads):
//   q [Hq x D] f32   o [Hq x ld_dv]   m, l, alpha [hp]   s [kDecodeStep x hp]
//   pp [kDecodeStep / 2 x hp] (bf16dot: p as bf16 pairs of keys)
inline constexpr int64_t kDecodeStep = 16;
inline constexpr int64_t kDecodePrefetchBytes = int64_t{32} * 1024;
struct DecodeLayout {
  int64_t ld_dv = 0, q = 0, o = 0, m = 0, l = 0, alpha = 0, s = 0, pp = 0, total = 0;
};
constexpr DecodeLayout decode_layout(int64_t hq, int64_t d, int64_t dv) {
  DecodeLayout s;
  s.ld_dv = round_up(dv, kMaxLanes);
  const int64_t hp = round_up(hq, kMaxLanes);
  ScratchCarver c;
  s.q = c.take(hq * d);
  s.o = c.take(hq * s.ld_dv);
  s.m = c.take(hp);
  s.l = c.take(hp);
  s.alpha = c.take(hp);
  s.s = c.take(kDecodeStep * hp);
  s.pp = c.take(kDecodeStep / 2 * hp);
  s.total = c.at;
  return s;
}

// The two products' path (the online softmax is f32 on every path):
//   kF32      Q, K, V converted to f32, FMA micro-kernel (tile_gemm-inl.h)
//   kBf16Dot  bf16 pairs on AVX512_BF16 vdpbf16ps (bf16_dot-inl.h), D even
//   kAmx      bf16 tiles on AMX tdpbf16ps (amx_tiles-inl.h), D % 32 == 0
// On the two bf16 paths P is rounded to bf16 before the second product.
enum class Products : uint8_t { kF32, kBf16Dot, kAmx };

// Everything the kernel reads, as plain data. Strides are in elements; the
// bias strides of broadcast (size-1) dims are 0.
struct FlashParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  float* lse = nullptr;         // optional
  const float* bias = nullptr;  // optional
  // Every bias element of one batch entry lies below 2^31 elements from
  // p.bias + b * bs[0] (strides >= 0): offsets fit the gather's int32 lanes.
  bool bias_index32 = false;
  DType dtype = DType::kF32;
  std::array<int64_t, 4> qs{}, ks{}, vs{}, os{}, bs{};
  std::array<int64_t, 3> ls{};

  int64_t batch = 0, hq = 0, hkv = 0, group = 0, d = 0, dv = 0;
  int64_t sq = 0, sk = 0;         // per sequence (varlen: maxima)
  const int32_t* cu_q = nullptr;  // varlen only; then tensors have B = 1
  const int32_t* cu_k = nullptr;
  Mask mask;
  float scale = 1.0f;
  float softcap = 0.0f;
  // How the AVX-512 targets run the two products for bf16 inputs (other
  // targets, and other dtypes, always take the f32 products): product_paths.h.
  Products products = Products::kF32;

  // Decode form (decode-inl.h): one item per (sequence, key split) over
  // every head, instead of the tile loop's units.
  bool decode = false;
  // Every item runs on the calling thread, none on the pool (a problem below
  // kInlineMacs, flash_params.cc): one scratch, no key splits.
  bool inline_run = false;
  // The prefill tile loop asks for its cold rows ahead (flash_unit.h's
  // prefetch_*): off when q, k, v and out together fit kPrefetchMaxBytes,
  // where they are in cache on a repeated call and the requests, a few
  // hundred per unit, were 14% of a small call (flash_params.cc).
  bool prefetch = true;
  // The unit a thread will likely run next is this many units on (the pool
  // hands items out in order, so about one per thread): the tile loop asks
  // for its first rows while it works on the current one (prefetch_unit).
  int64_t next_unit_ahead = 1;

  // Tiling.
  int64_t heads_per_unit = 0;  // heads of one GQA group handled together
  int64_t head_chunks = 0;     // ceil(group / heads_per_unit)
  int64_t block_q = 0;         // query positions per unit
  int64_t q_blocks = 0;        // ceil(sq / block_q)
  int64_t rows = 0;            // heads_per_unit * block_q
  int64_t sub_blocks = 1;      // query blocks per unit
  int64_t q_units = 0;         // ceil(q_blocks / sub_blocks)
  int64_t splits = 1;          // key ranges per unit (decode split-K)
  int64_t units() const { return decode ? batch : batch * hkv * head_chunks * q_units; }

  // Workspace, in f32 elements.
  int64_t thread_floats = 0;   // scratch of one thread
  int64_t partial_floats = 0;  // one (unit, split) partial result: O, m, l per block
};

// Fills `p` from valid args for a pool of `threads`. The products run on
// `forced` when given (a variant, a test) if it applies to the args and
// runs here (product_paths.h), else on the path product_path_for(args) picks.
void make_params(const AttentionArgs& args, int threads, FlashParams* p,
                 std::optional<Products> forced = std::nullopt);
// Per-thread scratches the kernel uses on a pool of `threads`.
inline int scratches(const FlashParams& p, int threads) { return p.inline_run ? 1 : threads; }
// Total workspace in bytes: the scratches plus the split partials.
size_t workspace_bytes(const FlashParams& p, int threads);

}  // namespace tessera::cpu_flash

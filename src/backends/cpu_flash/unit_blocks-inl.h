// cpu.flash per-target code: a work unit's query blocks and the per-thread
// scratch they are carved from (flash_params.h, scratch_layout), shared by
// the tile loop (attention_unit-inl.h), its product paths (tile_*_path-inl.h)
// and the split merge (unit_output-inl.h).
#if defined(TESSERA_CPU_FLASH_UNIT_BLOCKS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_UNIT_BLOCKS_INL_H_
#undef TESSERA_CPU_FLASH_UNIT_BLOCKS_INL_H_
#else
#define TESSERA_CPU_FLASH_UNIT_BLOCKS_INL_H_
#endif

#include <cstdint>

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
  // Columns of S^T (query rows) the products and the softmax compute: the
  // path's Columns(), at least g.rows. A sequence's last block is often
  // short (136 tokens: blocks of 64, 64 and 8), and its padding columns
  // would cost as much as its rows.
  int64_t cols = 0;
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

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

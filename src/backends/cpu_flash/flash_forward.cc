// cpu.flash: compiles the per-target kernel once for every Highway target
// (foreach_target.h re-includes this file) and exports the dispatch table.
// Dispatch happens once per call, at flash_forward(); everything below it
// runs statically inside one target's namespace (the gemma.cpp pattern).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu_flash/flash_forward.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// Order matters: each -inl.h uses the ones before it.
// clang-format off
#include "cpu_flash/convert-inl.h"
#include "cpu_flash/tile_gemm-inl.h"
#include "cpu_flash/bf16_dot-inl.h"
#include "cpu_flash/amx_tiles-inl.h"
#include "cpu_flash/online_softmax-inl.h"
#include "cpu_flash/unit_blocks-inl.h"
#include "cpu_flash/unit_output-inl.h"
#include "cpu_flash/tile_fma_path-inl.h"
#include "cpu_flash/tile_bf16dot_path-inl.h"
#include "cpu_flash/tile_amx_path-inl.h"
#include "cpu_flash/attention_unit-inl.h"
#include "cpu_flash/horizontal_sums-inl.h"
#include "cpu_flash/decode_fma_products-inl.h"
#include "cpu_flash/decode_bf16dot_products-inl.h"
#include "cpu_flash/decode-inl.h"
// clang-format on
#include "cpu_flash/flash_forward.h"
#include "cpu_flash/product_paths.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {

// fn(item, thread) for every item in [0, n): on the calling thread when
// p.inline_run (a small problem: no wake-ups), else over the pool.
template <class Fn>
void ForEachItem(const FlashParams& p, ThreadPool& pool, int64_t n, const Fn& fn) {
  if (!p.inline_run) return pool.parallel_for(n, fn);
  for (int64_t item = 0; item < n; ++item) fn(item, 0);
}

void FlashForward(const FlashParams& p, ThreadPool& pool, float* workspace) {
  const hn::CappedTag<float, kMaxLanes> df;
  float* partials = workspace + scratches(p, pool.num_threads()) * p.thread_floats;
  if (p.decode) {
    ForEachItem(p, pool, p.units() * p.splits, [&](int64_t item, int thread) HWY_ATTR {
      DecodeItem(df, p, item, workspace + thread * p.thread_floats, partials);
    });
    if (p.splits == 1) return;
    ForEachItem(p, pool, p.units(), [&](int64_t seq, int thread) HWY_ATTR {
      DecodeMerge(df, p, seq, workspace + thread * p.thread_floats, partials);
    });
    return;
  }
  ForEachItem(p, pool, p.units() * p.splits, [&](int64_t item, int thread) HWY_ATTR {
    RunItem(df, p, item, workspace + thread * p.thread_floats, partials);
  });
  if (p.splits == 1) return;
  ForEachItem(p, pool, p.units(), [&](int64_t unit, int thread) HWY_ATTR {
    MergeSplits(df, p, unit, workspace + thread * p.thread_floats, partials);
  });
}

const char* KernelTargetName() { return hwy::TargetName(HWY_TARGET); }

// Whether this target runs `path` when asked to: the kernel's own choice.
bool TargetHasPath(Products path) {
  FlashParams p;
  p.products = path;
  return TargetProducts(p) == path;
}

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::cpu_flash {

HWY_EXPORT(FlashForward);
HWY_EXPORT(KernelTargetName);
HWY_EXPORT(TargetHasPath);

void flash_forward(const FlashParams& p, ThreadPool& pool, float* workspace) {
  HWY_DYNAMIC_DISPATCH(FlashForward)(p, pool, workspace);
}

const char* flash_target_name() { return HWY_DYNAMIC_DISPATCH(KernelTargetName)(); }

bool target_has_path(Products path) { return HWY_DYNAMIC_DISPATCH(TargetHasPath)(path); }

}  // namespace tessera::cpu_flash
#endif  // HWY_ONCE

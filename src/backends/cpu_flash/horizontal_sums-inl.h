// cpu.flash per-target code: sums of vectors' lanes for the decode loop's
// dot products (decode_fma_products-inl.h, decode_bf16dot_products-inl.h),
// where one query meets one key and every dot product ends in a horizontal
// sum.
#if defined(TESSERA_CPU_FLASH_HORIZONTAL_SUMS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_HORIZONTAL_SUMS_INL_H_
#undef TESSERA_CPU_FLASH_HORIZONTAL_SUMS_INL_H_
#else
#define TESSERA_CPU_FLASH_HORIZONTAL_SUMS_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Pins v to a register. GCC folds the load of a vector that several FMAs
// read into each of them (DotTile's q: once per key), which doubles the
// loads of a loop that is then bound by its loads, not its FMAs.
template <class V>
HWY_INLINE void KeepInRegister(V& v) {
#if HWY_ARCH_X86 && defined(__GNUC__) && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  if constexpr (sizeof(v.raw) == 64) {
    asm("" : "+v"(v.raw));
  } else {
    asm("" : "+x"(v.raw));
  }
#else
  (void)v;
#endif
}

// The sums of 8 vectors, in order, as one vector (8 lanes only): a
// transpose-add (pairs of lanes, pairs of pairs within each 128-bit block,
// then the two blocks) instead of 8 horizontal sums.
#if HWY_TARGET != HWY_SCALAR
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE V SumsOf8(DF df, const V* a) {
  const hn::Repartition<double, DF> dd;
  const auto pairs = [&](V x, V y) {
    return hn::Add(hn::InterleaveLower(df, x, y), hn::InterleaveUpper(df, x, y));
  };
  const auto quads = [&](V xy, V zw) {
    const auto x = hn::BitCast(dd, xy), y = hn::BitCast(dd, zw);
    return hn::Add(hn::BitCast(df, hn::InterleaveLower(dd, x, y)),
                   hn::BitCast(df, hn::InterleaveUpper(dd, x, y)));
  };
  const V lo = quads(pairs(a[0], a[1]), pairs(a[2], a[3]));
  const V hi = quads(pairs(a[4], a[5]), pairs(a[6], a[7]));
  return hn::Add(hn::ConcatLowerLower(df, hi, lo), hn::ConcatUpperUpper(df, hi, lo));
}

// The same for 16-lane vectors (AVX-512): each folded to 8 lanes (its two
// 256-bit halves added), then the 8-lane transpose-add. About 37 256-bit
// operations for the 8 sums against ~64 512-bit ones for 8 horizontal sums,
// which cost as much as the dot products themselves in the decode loop
// (docs/DECISIONS.md, "16-lane transpose-add on AVX-512").
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE auto SumsOf8Wide(DF /*df: the type only*/, const V* a) {
  const hn::Half<DF> dh;
  hn::Vec<decltype(dh)> halves[8];
  for (int i = 0; i < 8; ++i) halves[i] = hn::Add(hn::LowerHalf(dh, a[i]), hn::UpperHalf(dh, a[i]));
  return SumsOf8(dh, halves);
}
#endif

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

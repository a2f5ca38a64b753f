// cpu.flash per-target code: 2^x for the softmax, x <= 0 (scores minus their
// running max, in log2 units). Highway's Exp (contrib/math) is accurate to
// about 1 ulp but spends ~38 instructions per vector (range fixes for inputs
// a softmax never has); this one spends 12 and stays within 1.4 ulp of 2^x
// on the reduced range (docs/DECISIONS.md, "cpu.flash exp2").
//   x = max(x, -127)                    -inf (a masked score) lands here
//   n = round(x) via the 1.5 * 2^23 trick, f = x - n in [-0.5, 0.5]
//   2^f = 1 + f * P(f), P a degree-5 minimax fit of (2^f - 1) / f
//   2^x = 2^f * 2^n, 2^n built in the exponent bits; n = -127 gives 0
#if defined(TESSERA_CPU_FLASH_EXP2_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_EXP2_INL_H_
#undef TESSERA_CPU_FLASH_EXP2_INL_H_
#else
#define TESSERA_CPU_FLASH_EXP2_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Minimax coefficients of (2^f - 1) / f on [-0.5, 0.5] (relative error of
// the polynomial 2e-9; f32 evaluation with FMA 1.32 ulp).
inline constexpr float kExp2C1 = 6.931471825e-01f;
inline constexpr float kExp2C2 = 2.402264774e-01f;
inline constexpr float kExp2C3 = 5.550332367e-02f;
inline constexpr float kExp2C4 = 9.618436918e-03f;
inline constexpr float kExp2C5 = 1.339887502e-03f;
inline constexpr float kExp2C6 = 1.535336196e-04f;
// 1.5 * 2^23 + 127: adding it rounds x to an integer n held in the low
// mantissa bits as n + 127, the biased exponent of 2^n.
inline constexpr float kExp2Magic = 12582912.0f + 127.0f;
inline constexpr float kExp2Min = -127.0f;

// x86 SIMD max returns its second operand when either is NaN; with x second
// the clamp passes NaN on, every later step keeps it, and 2^NaN = NaN: the
// softmax then finds NaN scores in its sum at no cost. Other targets' Max
// (Highway's scalar and emu128 drop NaN) give an unspecified finite value,
// so there the callers track NaN scores themselves.
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
inline constexpr bool kExp2KeepsNaN = true;
#else
inline constexpr bool kExp2KeepsNaN = false;
#endif

// 2^x for x <= 0 (and -inf -> 0); NaN -> NaN where kExp2KeepsNaN.
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE V FastExp2(DF df, V x) {
  const hn::RebindToSigned<DF> di;
  const V magic = hn::Set(df, kExp2Magic);
  const V xc = hn::Max(hn::Set(df, kExp2Min), x);  // operand order: see above
  const V shifted = hn::Add(xc, magic);
  const V f = hn::Sub(xc, hn::Sub(shifted, magic));
  V poly = hn::Set(df, kExp2C6);
  poly = hn::MulAdd(poly, f, hn::Set(df, kExp2C5));
  poly = hn::MulAdd(poly, f, hn::Set(df, kExp2C4));
  poly = hn::MulAdd(poly, f, hn::Set(df, kExp2C3));
  poly = hn::MulAdd(poly, f, hn::Set(df, kExp2C2));
  poly = hn::MulAdd(poly, f, hn::Set(df, kExp2C1));
  poly = hn::MulAdd(poly, f, hn::Set(df, 1.0f));
  const V pow2n = hn::BitCast(df, hn::ShiftLeft<23>(hn::BitCast(di, shifted)));
  return hn::Mul(poly, pow2n);
}

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

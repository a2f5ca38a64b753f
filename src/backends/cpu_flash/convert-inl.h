// cpu.flash per-target code: strided f32/bf16/f16 rows to and from f32.
// Included once per Highway target through foreach_target.h (see
// flash_forward.cc); the toggle below lets this file be re-included.
#if defined(TESSERA_CPU_FLASH_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSERA_CPU_FLASH_CONVERT_INL_H_
#undef TESSERA_CPU_FLASH_CONVERT_INL_H_
#else
#define TESSERA_CPU_FLASH_CONVERT_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "tessera/dtype.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_flash::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Highway's f16 emulation below AVX2 (no F16C) maps inf/NaN to finite
// values; the scalar conversion keeps them, and NaN must reach the output.
#if HWY_TARGET >= HWY_SSE4
inline constexpr bool kVectorF16 = false;
#else
inline constexpr bool kVectorF16 = true;
#endif

// dst[0..n) = f32(src[i * stride]) for a row of `dtype` elements.
// Vector loads need stride 1; other strides (BHSD views of D) go scalar.
template <class DF>
HWY_INLINE void RowToF32(DF df, const void* src, DType dtype, int64_t stride, int64_t n,
                         float* HWY_RESTRICT dst) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  if (stride == 1) {
    if (dtype == DType::kF32) {
      const float* s = static_cast<const float*>(src);
      for (; i + lanes <= n; i += lanes) hn::StoreU(hn::LoadU(df, s + i), df, dst + i);
    } else if (dtype == DType::kBF16) {
      const hn::Rebind<hwy::bfloat16_t, DF> dbf;
      const auto* s = static_cast<const hwy::bfloat16_t*>(src);
      for (; i + lanes <= n; i += lanes) {
        hn::StoreU(hn::PromoteTo(df, hn::LoadU(dbf, s + i)), df, dst + i);
      }
    } else if (kVectorF16) {
      const hn::Rebind<hwy::float16_t, DF> dh;
      const auto* s = static_cast<const hwy::float16_t*>(src);
      for (; i + lanes <= n; i += lanes) {
        hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, s + i)), df, dst + i);
      }
    }
  }
  for (; i < n; ++i) dst[i] = load_as_f32(src, i * stride, dtype);
}

// f32 -> bf16 bits, exactly as the shared scalar f32_to_bf16 (dtype.h):
// round to nearest even, NaN stays NaN (quiet bit set).
template <class DF, class V = hn::Vec<DF>>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> Bf16Bits(DF /*df*/, V v) {
  const hn::RebindToSigned<DF> di;
  const auto bits = hn::BitCast(di, v);
  const auto high = hn::And(hn::ShiftRight<16>(bits), hn::Set(di, 0xFFFF));
  const auto rounding = hn::Add(hn::Set(di, 0x7FFF), hn::And(high, hn::Set(di, 1)));
  // bits + rounding may wrap into the sign bit: shift logically.
  const hn::RebindToUnsigned<DF> du;
  const auto rounded = hn::BitCast(
      di, hn::ShiftRight<16>(hn::Add(hn::BitCast(du, bits), hn::BitCast(du, rounding))));
  const auto quiet = hn::Or(high, hn::Set(di, 0x40));
  return hn::IfThenElse(hn::RebindMask(di, hn::IsNaN(v)), quiet, rounded);
}

// dst[i * stride] = dtype(src[i] * mul) for i < n. f32 and bf16 rows with
// stride 1 are vector stores (bf16 rounded as the shared scalar rounding,
// so every backend rounds the same way); the rest is scalar.
template <class DF>
HWY_INLINE void RowFromF32(DF df, const float* HWY_RESTRICT src, float mul, void* dst, DType dtype,
                           int64_t stride, int64_t n) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto vmul = hn::Set(df, mul);
  int64_t i = 0;
  if (dtype == DType::kF32 && stride == 1) {
    float* o = static_cast<float*>(dst);
    for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Mul(hn::LoadU(df, src + i), vmul), df, o + i);
  } else if (dtype == DType::kBF16 && stride == 1) {
    const hn::Rebind<uint16_t, DF> d16;
    auto* o = static_cast<uint16_t*>(dst);
    for (; i + lanes <= n; i += lanes) {
      const auto bits = Bf16Bits(df, hn::Mul(hn::LoadU(df, src + i), vmul));
      hn::StoreU(hn::DemoteTo(d16, bits), d16, o + i);
    }
  }
  for (; i < n; ++i) store_from_f32(dst, i * stride, dtype, src[i] * mul);
}

}  // namespace tessera::cpu_flash::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle

// Highway per-target code for row_kernels.h. This file is compiled once per
// SIMD target (foreach_target.h); HWY_EXPORT/HWY_DYNAMIC_DISPATCH pick one at
// run time, once per call, at the two entry points at the bottom.
#include <algorithm>
#include <cmath>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu_gemm/row_kernels.cc"
// foreach_target.h must come first: it re-includes this file per target.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
// clang-format on
#include "cpu_gemm/row_kernels.h"

HWY_BEFORE_NAMESPACE();
namespace tessera::cpu_gemm {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

// x[0, n) = softcap * tanh(x / softcap).
void SoftcapSpan(float* x, int64_t n, float softcap) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto cap = hn::Set(d, softcap);
  const auto inv_cap = hn::Set(d, 1.0f / softcap);
  int64_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    hn::StoreU(hn::Mul(cap, hn::Tanh(d, hn::Mul(hn::LoadU(d, x + j), inv_cap))), d, x + j);
  }
  for (; j < n; ++j) {
    x[j] = softcap * std::tanh(x[j] / softcap);
  }
}

// x[0, n) += bias[j * stride].
void AddBiasSpan(float* x, int64_t n, const float* bias, int64_t stride) {
  if (stride != 1) {
    for (int64_t j = 0; j < n; ++j) {
      x[j] += bias[j * stride];
    }
    return;
  }
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    hn::StoreU(hn::Add(hn::LoadU(d, x + j), hn::LoadU(d, bias + j)), d, x + j);
  }
  for (; j < n; ++j) {
    x[j] += bias[j];
  }
}

// Max of x[0, n) and whether any element is NaN (a NaN may or may not win a
// SIMD max, so it is tracked on its own).
float MaxSpan(const float* x, int64_t n, bool* nan_seen) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  auto vmax = hn::Set(d, kNegInf);
  auto nan = hn::FirstN(d, 0);
  int64_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    const auto v = hn::LoadU(d, x + j);
    nan = hn::Or(nan, hn::IsNaN(v));
    vmax = hn::Max(vmax, v);
  }
  // Reduce the lanes here rather than with MaxOfLanes: Highway's EMU128
  // target starts that reduction from the lowest finite float, so a row of
  // -inf (every key masked by the bias) came back finite and was not
  // recognised as fully masked (seen under the clang sanitizer build).
  HWY_ALIGN float lane_max[hn::MaxLanes(hn::ScalableTag<float>())];
  hn::Store(vmax, d, lane_max);
  float m = kNegInf;
  for (int64_t i = 0; i < lanes; ++i) m = std::max(m, lane_max[i]);
  bool any_nan = !hn::AllFalse(d, nan);
  for (; j < n; ++j) {
    any_nan |= std::isnan(x[j]);
    m = std::max(m, x[j]);
  }
  *nan_seen = any_nan;
  return m;
}

// x[0, n) = exp(x - max); returns the sum. Exp of -inf (masked by bias) is 0.
float ExpSumSpan(float* x, int64_t n, float max) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vmax = hn::Set(d, max);
  auto vsum = hn::Zero(d);
  int64_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    const auto p = hn::Exp(d, hn::Sub(hn::LoadU(d, x + j), vmax));
    hn::StoreU(p, d, x + j);
    vsum = hn::Add(vsum, p);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (; j < n; ++j) {
    x[j] = std::exp(x[j] - max);
    sum += x[j];
  }
  return sum;
}

RowSoftmax SoftmaxRow(float* s, int64_t n, int64_t lo, int64_t hi, float softcap, const float* bias,
                      int64_t bias_stride) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  lo = std::clamp<int64_t>(lo, 0, n);
  hi = std::clamp<int64_t>(hi, lo, n);
  std::fill(s, s + lo, 0.0f);
  std::fill(s + hi, s + n, 0.0f);
  float* x = s + lo;
  const int64_t len = hi - lo;
  RowSoftmax r;
  if (len == 0) {
    r.lse = kNegInf;
    r.fully_masked = true;
    return r;
  }
  if (softcap > 0.0f) {
    SoftcapSpan(x, len, softcap);
  }
  if (bias != nullptr) {
    AddBiasSpan(x, len, bias + lo * bias_stride, bias_stride);
  }
  bool nan_seen = false;
  const float max = MaxSpan(x, len, &nan_seen);
  if (nan_seen) {
    r.out_scale = r.lse = std::numeric_limits<float>::quiet_NaN();
    return r;
  }
  if (max == kNegInf) {
    std::fill(x, x + len, 0.0f);
    r.lse = kNegInf;
    r.fully_masked = true;
    return r;
  }
  // max = +inf makes exp(inf - inf) = NaN, so sum and out_scale are NaN, as
  // the reference gives for an infinite score.
  const float sum = ExpSumSpan(x, len, max);
  r.out_scale = 1.0f / sum;
  r.lse = max + std::log(sum);
  return r;
}

void RowToF32(const void* src, DType dtype, int64_t n, int64_t stride, float* dst) {
  if (stride != 1 || dtype == DType::kF32) {
    for (int64_t j = 0; j < n; ++j) {
      dst[j] = load_as_f32(src, j * stride, dtype);
    }
    return;
  }
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = 0;
  if (dtype == DType::kBF16) {
    const hn::Rebind<hwy::bfloat16_t, decltype(d)> dh;
    const auto* h = static_cast<const hwy::bfloat16_t*>(src);
    for (; j + lanes <= n; j += lanes) {
      hn::StoreU(hn::PromoteTo(d, hn::LoadU(dh, h + j)), d, dst + j);
    }
  } else {
    const hn::Rebind<hwy::float16_t, decltype(d)> dh;
    const auto* h = static_cast<const hwy::float16_t*>(src);
    for (; j + lanes <= n; j += lanes) {
      hn::StoreU(hn::PromoteTo(d, hn::LoadU(dh, h + j)), d, dst + j);
    }
  }
  for (; j < n; ++j) {
    dst[j] = load_as_f32(src, j, dtype);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tessera::cpu_gemm
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessera::cpu_gemm {

HWY_EXPORT(SoftmaxRow);
HWY_EXPORT(RowToF32);

RowSoftmax softmax_row(float* s, int64_t n, int64_t lo, int64_t hi, float softcap,
                       const float* bias, int64_t bias_stride) {
  return HWY_DYNAMIC_DISPATCH(SoftmaxRow)(s, n, lo, hi, softcap, bias, bias_stride);
}

void row_to_f32(const void* src, DType dtype, int64_t n, int64_t stride, float* dst) {
  HWY_DYNAMIC_DISPATCH(RowToF32)(src, dtype, n, stride, dst);
}

}  // namespace tessera::cpu_gemm
#endif  // HWY_ONCE

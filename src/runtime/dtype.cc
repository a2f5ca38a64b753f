#include "tessera/dtype.h"

#include <cmath>
#include <limits>

namespace tessera {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
  }
  return "?";
}

bool parse_dtype(std::string_view text, DType* out) {
  if (text == "f32" || text == "float32" || text == "fp32") {
    *out = DType::kF32;
  } else if (text == "f16" || text == "float16" || text == "fp16") {
    *out = DType::kF16;
  } else if (text == "bf16" || text == "bfloat16") {
    *out = DType::kBF16;
  } else {
    return false;
  }
  return true;
}

size_t dtype_size(DType dtype) { return dtype == DType::kF32 ? 4 : 2; }

double dtype_unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 0x1p-24;
    case DType::kF16:
      return 0x1p-11;
    case DType::kBF16:
      return 0x1p-8;
  }
  return 0.0;
}

namespace {
constexpr int kF16MantissaBits = 10;
constexpr int kF16ExponentBias = 15;
constexpr int kF32ExponentBias = 127;
}  // namespace

uint16_t f32_to_f16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits >= 0x7f800000u) {  // inf or NaN (keep NaN quiet and non-zero)
    return static_cast<uint16_t>(sign | 0x7c00u | (abs_bits > 0x7f800000u ? 0x200u : 0u));
  }
  float a;
  std::memcpy(&a, &abs_bits, sizeof a);
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (a < 0x1p-14f) {
    // Subnormal (or zero): value = m * 2^-24; nearbyint rounds to even.
    const auto m = static_cast<uint16_t>(std::nearbyint(a * 0x1p24f));
    return static_cast<uint16_t>(sign | m);
  }
  const int exponent = static_cast<int>(abs_bits >> 23) - kF32ExponentBias + kF16ExponentBias;
  const uint32_t mantissa = abs_bits & 0x7fffffu;
  constexpr int kShift = 23 - kF16MantissaBits;
  uint32_t half = (static_cast<uint32_t>(exponent) << kF16MantissaBits) | (mantissa >> kShift);
  const uint32_t rest = mantissa & ((1u << kShift) - 1u);
  const uint32_t halfway = 1u << (kShift - 1);
  if (rest > halfway || (rest == halfway && (half & 1u))) ++half;  // may carry into exponent
  return static_cast<uint16_t>(sign | half);
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> kF16MantissaBits) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  float magnitude;
  if (exponent == 0) {
    magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  } else if (exponent == 0x1f) {
    magnitude =
        mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    const uint32_t bits = ((exponent - kF16ExponentBias + kF32ExponentBias) << 23) |
                          (mantissa << (23 - kF16MantissaBits));
    std::memcpy(&magnitude, &bits, sizeof magnitude);
  }
  uint32_t out_bits;
  std::memcpy(&out_bits, &magnitude, sizeof out_bits);
  out_bits |= sign;
  float out;
  std::memcpy(&out, &out_bits, sizeof out);
  return out;
}

}  // namespace tessera

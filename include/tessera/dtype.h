// Element types and the scalar conversions every backend shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tessera {

enum class DType : uint8_t { kF32, kF16, kBF16 };

std::string_view dtype_name(DType dtype);  // "f32", "f16", "bf16"
// Parses "f32" / "float32", "f16" / "float16" / "fp16", "bf16" / "bfloat16".
bool parse_dtype(std::string_view text, DType* out);
size_t dtype_size(DType dtype);
// Unit roundoff (half the machine epsilon) of the storage type.
double dtype_unit_roundoff(DType dtype);

// bf16 is the top half of an IEEE f32; round to nearest even, NaN stays NaN.
inline uint16_t f32_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}
inline float bf16_to_f32(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// IEEE binary16, round to nearest even, subnormals, inf and NaN handled.
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);

// Reads / writes element `index` (in elements, not bytes) of a buffer of `dtype`.
inline float load_as_f32(const void* base, int64_t index, DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<const float*>(base)[index];
    case DType::kF16:
      return f16_to_f32(static_cast<const uint16_t*>(base)[index]);
    case DType::kBF16:
      return bf16_to_f32(static_cast<const uint16_t*>(base)[index]);
  }
  return 0.0f;
}
inline void store_from_f32(void* base, int64_t index, DType dtype, float value) {
  switch (dtype) {
    case DType::kF32:
      static_cast<float*>(base)[index] = value;
      return;
    case DType::kF16:
      static_cast<uint16_t*>(base)[index] = f32_to_f16(value);
      return;
    case DType::kBF16:
      static_cast<uint16_t*>(base)[index] = f32_to_bf16(value);
      return;
  }
}
// Rounds a float to the nearest value representable in `dtype`.
inline float round_to_dtype(float value, DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return value;
    case DType::kF16:
      return f16_to_f32(f32_to_f16(value));
    case DType::kBF16:
      return bf16_to_f32(f32_to_bf16(value));
  }
  return value;
}

}  // namespace tessera

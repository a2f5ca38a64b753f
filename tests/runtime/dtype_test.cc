#include "tessera/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tessera {
namespace {

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.0f)), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DType, F16RoundTripsEveryFiniteHalf) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = f16_to_f32(bits);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f)))) << h;
      continue;
    }
    EXPECT_EQ(f32_to_f16(f), bits) << "half bits " << h;
  }
}

TEST(DType, F16RoundsAndSaturates) {
  EXPECT_EQ(f16_to_f32(f32_to_f16(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(f16_to_f32(f32_to_f16(65520.0f))));
  EXPECT_EQ(f16_to_f32(f32_to_f16(1.0f + 0x1p-11f)), 1.0f);  // tie to even
  EXPECT_EQ(f16_to_f32(f32_to_f16(0x1p-24f)), 0x1p-24f);     // smallest subnormal
  EXPECT_EQ(f16_to_f32(f32_to_f16(0x1p-26f)), 0.0f);
}

TEST(DType, ParsesNames) {
  DType d;
  ASSERT_TRUE(parse_dtype("bfloat16", &d));
  EXPECT_EQ(d, DType::kBF16);
  EXPECT_FALSE(parse_dtype("int8", &d));
}

}  // namespace
}  // namespace tessera

// f32_to_bf16_rows / bf16_to_f32_rows (runtime/bf16_rows.h) against the
// scalar f32_to_bf16 / bf16_to_f32 of tessera/dtype.h, bit for bit.
#include "runtime/bf16_rows.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "tessera/dtype.h"

namespace tessera {
namespace {

// Values of every kind: halfway cases both ways, NaN, infinities, zeros,
// subnormals, and a plain spread.
std::vector<float> awkward_values() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::max(),
                          1.0f + 1.0f / 256.0f,   // halfway, rounds to even (down)
                          1.0f + 3.0f / 256.0f};  // halfway, rounds to even (up)
  for (int i = 0; i < 40; ++i) v.push_back(0.613f * static_cast<float>(i - 20) + 1e-4f * i);
  return v;
}

TEST(Bf16Rows, EveryLengthMatchesTheScalarRounding) {
  const std::vector<float> in = awkward_values();
  const auto total = static_cast<int64_t>(in.size());
  for (int64_t n = 0; n <= total; ++n) {
    std::vector<uint16_t> out(n + 1, 0xBEEF);  // the last one a guard
    f32_to_bf16_rows(in.data(), n, false, out.data());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], f32_to_bf16(in[i])) << n << ", " << i;
    ASSERT_EQ(out[n], 0xBEEF) << "n = " << n << ": wrote past the end";
  }
}

TEST(Bf16Rows, AddRoundsTheSumOnce) {
  const std::vector<float> in = awkward_values();
  const auto n = static_cast<int64_t>(in.size());
  std::vector<uint16_t> old(n);
  for (int64_t i = 0; i < n; ++i) old[i] = f32_to_bf16(0.37f * static_cast<float>(n - i));
  std::vector<uint16_t> out = old;
  f32_to_bf16_rows(in.data(), n, true, out.data());
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], f32_to_bf16(in[i] + bf16_to_f32(old[i]))) << i;
  }
}

TEST(Bf16Rows, WideningIsExact) {
  std::vector<uint16_t> in;
  for (uint32_t h = 0; h < 0x10000u; h += 97) in.push_back(static_cast<uint16_t>(h));
  std::vector<float> out(in.size() + 1, -1.0f);
  bf16_to_f32_rows(in.data(), static_cast<int64_t>(in.size()), out.data());
  for (size_t i = 0; i < in.size(); ++i) {
    const float want = bf16_to_f32(in[i]);
    uint32_t got_bits = 0, want_bits = 0;  // bit for bit: NaN payloads too
    std::memcpy(&got_bits, &out[i], sizeof got_bits);
    std::memcpy(&want_bits, &want, sizeof want_bits);
    ASSERT_EQ(got_bits, want_bits) << i;
  }
  ASSERT_EQ(out.back(), -1.0f);
}

}  // namespace
}  // namespace tessera

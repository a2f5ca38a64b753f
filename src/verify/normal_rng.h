// NormalRng: N(0, 1) floats from a seed, the same numbers on every platform
// (std's distributions differ between standard libraries): splitmix64 +
// Box-Muller. The inputs of every case (materialize.h, plain_case.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace tessera::verify {

class NormalRng {
 public:
  explicit NormalRng(uint64_t seed) : state_(seed) {}
  float next() {
    const double u1 = (static_cast<double>(bits() >> 11) + 1.0) * 0x1p-53;  // (0, 1]
    const double u2 = static_cast<double>(bits() >> 11) * 0x1p-53;
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) *
                              std::cos(2.0 * std::numbers::pi * u2));
  }

 private:
  uint64_t bits() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace tessera::verify

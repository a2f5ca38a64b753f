// GELU(x) = x Phi(x) = h + h erf(x / sqrt 2), h = x / 2, with erf(x / sqrt 2)
// a rational function x P(x^2) / Q(x^2) on |x| <= 6 (P, Q degree 5 in x^2,
// fitted for the least maximum of |GELU error| / max(1, |x|) in double, then
// checked in f32: 1.2e-6 at most, at x ~ 5). Beyond 6, erf(x / sqrt 2)
// rounds to +-1 in f32 (1 - erf(6 / sqrt 2) = 2e-9), so x is clamped there.
// About 20 vector operations per vector, no exp and no branch.
//
// Written once over GCC's vector extensions (vector_lanes.h) and compiled
// for AVX-512 and AVX2, as plain loops elsewhere. Plain loops with
// target_clones did not do: GCC specialised the clamped lanes (constant
// polynomials) and masked the rest, two divisions and 40 instructions per
// vector.
#include "runtime/gelu.h"

#include <cstring>

#include "runtime/vector_lanes.h"

namespace tessera {

namespace {

constexpr float kClamp = 6.0f;
// P[0] = sqrt(2 / pi): erf(x / sqrt 2) ~ x sqrt(2 / pi) near 0.
constexpr float kP0 = 0.7978841066360474f, kP1 = 0.07486648112535477f, kP2 = 0.00980840902775526f,
                kP3 = 0.00041199737461283803f, kP4 = 1.3332395610632375e-05f,
                kP5 = 4.066808045877224e-08f;
constexpr float kQ1 = 0.2604944705963135f, kQ2 = 0.0307144932448864f, kQ3 = 0.0020948529709130526f,
                kQ4 = 8.586316835135221e-05f, kQ5 = 1.1500183063617442e-06f;

// x <- GELU(x) for one value or one vector of them (V: float, or a GCC
// vector of floats; by reference, as vectors by value would change the ABI
// outside the target functions). The comparisons are false for NaN, so a
// NaN x stays NaN through h.
template <class V>
__attribute__((always_inline)) inline void gelu_of(V& x, const V& clamp, const V& one) {
  V c = x > clamp ? clamp : x;
  c = c < -clamp ? -clamp : c;
  const V t = c * c;
  const V p = kP0 + t * (kP1 + t * (kP2 + t * (kP3 + t * (kP4 + t * kP5))));
  const V q = one + t * (kQ1 + t * (kQ2 + t * (kQ3 + t * (kQ4 + t * kQ5))));
  V erf = c * p / q;
  erf = erf > one ? one : erf;
  erf = erf < -one ? -one : erf;
  const V h = 0.5f * x;
  x = h + h * erf;
}

// Whole vectors, then the tail through a zero-padded vector.
template <class V>
__attribute__((always_inline)) inline void gelu_vectors(float* v, int64_t n) {
  constexpr int64_t kLanes = sizeof(V) / sizeof(float);
  const V clamp = V{} + kClamp, one = V{} + 1.0f;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    V x;
    std::memcpy(&x, v + i, sizeof(V));
    gelu_of(x, clamp, one);
    std::memcpy(v + i, &x, sizeof(V));
  }
  if (i < n) {
    V x{};
    const auto bytes = static_cast<size_t>(n - i) * sizeof(float);
    std::memcpy(&x, v + i, bytes);
    gelu_of(x, clamp, one);
    std::memcpy(v + i, &x, bytes);
  }
}

#if TESSERA_VECTOR_LANES
__attribute__((target("avx512f,avx512bw"))) void gelu_avx512(float* v, int64_t n) {
  gelu_vectors<lanes::F32x16>(v, n);
}
__attribute__((target("avx2,fma"))) void gelu_avx2(float* v, int64_t n) {
  gelu_vectors<lanes::F32x8>(v, n);
}
#endif

}  // namespace

void gelu_in_place(float* v, int64_t n) {
#if TESSERA_VECTOR_LANES
  if (lanes::cpu_has_avx512()) return gelu_avx512(v, n);
  if (lanes::cpu_has_avx2()) return gelu_avx2(v, n);
#endif
  const float clamp = kClamp, one = 1.0f;
  for (int64_t i = 0; i < n; ++i) gelu_of(v[i], clamp, one);
}

}  // namespace tessera

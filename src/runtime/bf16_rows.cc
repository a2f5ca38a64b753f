// Written once over GCC's vector extensions and compiled for AVX-512 and
// AVX2 (picked by CPUID), plain loops elsewhere: the auto-vectorizer left
// the rounding loop scalar inside gemm_int8.cc's unity build (12.8% of an
// int8 embed's samples in perf, MiniLM on a Zen 4).
#include "runtime/bf16_rows.h"

#include <cstring>

#include "tessera/dtype.h"

namespace tessera {

namespace {

// The bf16 bits of f32 lanes, as f32_to_bf16.
template <class U>
__attribute__((always_inline)) inline void round_lanes(const U& bits, U& out) {
  const U rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const U quiet = (bits >> 16) | 0x40u;
  out = (bits & 0x7fffffffu) > 0x7f800000u ? quiet : rounded;
}

// V: f32 lanes, U: u32 lanes, H: u16 lanes (as many).
template <class V, class U, class H>
__attribute__((always_inline)) inline void to_bf16(const float* in, int64_t n, bool add,
                                                   uint16_t* out) {
  constexpr int64_t kLanes = sizeof(V) / sizeof(float);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    V x;
    std::memcpy(&x, in + i, sizeof(V));
    if (add) {
      H old;
      std::memcpy(&old, out + i, sizeof(H));
      U wide = __builtin_convertvector(old, U) << 16;
      V widened;
      std::memcpy(&widened, &wide, sizeof(V));
      x += widened;
    }
    U bits, r;
    std::memcpy(&bits, &x, sizeof(U));
    round_lanes(bits, r);
    const H h = __builtin_convertvector(r, H);
    std::memcpy(out + i, &h, sizeof(H));
  }
  for (; i < n; ++i) out[i] = f32_to_bf16(add ? in[i] + bf16_to_f32(out[i]) : in[i]);
}

template <class U, class H>
__attribute__((always_inline)) inline void to_f32(const uint16_t* in, int64_t n, float* out) {
  constexpr int64_t kLanes = sizeof(U) / sizeof(uint32_t);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    H h;
    std::memcpy(&h, in + i, sizeof(H));
    const U wide = __builtin_convertvector(h, U) << 16;
    std::memcpy(out + i, &wide, sizeof(U));
  }
  for (; i < n; ++i) out[i] = bf16_to_f32(in[i]);
}

#if defined(__x86_64__) && defined(__GNUC__)
using Floats16 = float __attribute__((vector_size(64)));
using Words16 = uint32_t __attribute__((vector_size(64)));
using Halves16 = uint16_t __attribute__((vector_size(32)));
using Floats8 = float __attribute__((vector_size(32)));
using Words8 = uint32_t __attribute__((vector_size(32)));
using Halves8 = uint16_t __attribute__((vector_size(16)));

__attribute__((target("avx512f,avx512bw"))) void to_bf16_avx512(const float* in, int64_t n,
                                                                bool add, uint16_t* out) {
  to_bf16<Floats16, Words16, Halves16>(in, n, add, out);
}
__attribute__((target("avx2"))) void to_bf16_avx2(const float* in, int64_t n, bool add,
                                                  uint16_t* out) {
  to_bf16<Floats8, Words8, Halves8>(in, n, add, out);
}
__attribute__((target("avx512f,avx512bw"))) void to_f32_avx512(const uint16_t* in, int64_t n,
                                                               float* out) {
  to_f32<Words16, Halves16>(in, n, out);
}
__attribute__((target("avx2"))) void to_f32_avx2(const uint16_t* in, int64_t n, float* out) {
  to_f32<Words8, Halves8>(in, n, out);
}

bool has_avx512() {
  static const bool yes =
      __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512bw") != 0;
  return yes;
}
bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") != 0;
  return yes;
}
#endif

}  // namespace

void f32_to_bf16_rows(const float* in, int64_t n, bool add, uint16_t* out) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_avx512()) return to_bf16_avx512(in, n, add, out);
  if (has_avx2()) return to_bf16_avx2(in, n, add, out);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = f32_to_bf16(add ? in[i] + bf16_to_f32(out[i]) : in[i]);
}

void bf16_to_f32_rows(const uint16_t* in, int64_t n, float* out) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_avx512()) return to_f32_avx512(in, n, out);
  if (has_avx2()) return to_f32_avx2(in, n, out);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_f32(in[i]);
}

}  // namespace tessera

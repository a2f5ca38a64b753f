// Written once over GCC's vector extensions (vector_lanes.h) and compiled
// for AVX-512 and AVX2, plain loops elsewhere: the auto-vectorizer left
// the rounding loop scalar inside gemm_int8.cc's unity build (12.8% of an
// int8 embed's samples in perf, MiniLM on a Zen 4).
#include "runtime/bf16_rows.h"

#include <cstring>

#include "runtime/vector_lanes.h"
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

#if TESSERA_VECTOR_LANES
using lanes::F32x16, lanes::U32x16, lanes::U16x16, lanes::F32x8, lanes::U32x8, lanes::U16x8;

__attribute__((target("avx512f,avx512bw"))) void to_bf16_avx512(const float* in, int64_t n,
                                                                bool add, uint16_t* out) {
  to_bf16<F32x16, U32x16, U16x16>(in, n, add, out);
}
__attribute__((target("avx2,fma"))) void to_bf16_avx2(const float* in, int64_t n, bool add,
                                                      uint16_t* out) {
  to_bf16<F32x8, U32x8, U16x8>(in, n, add, out);
}
__attribute__((target("avx512f,avx512bw"))) void to_f32_avx512(const uint16_t* in, int64_t n,
                                                               float* out) {
  to_f32<U32x16, U16x16>(in, n, out);
}
__attribute__((target("avx2,fma"))) void to_f32_avx2(const uint16_t* in, int64_t n, float* out) {
  to_f32<U32x8, U16x8>(in, n, out);
}
#endif

}  // namespace

void f32_to_bf16_rows(const float* in, int64_t n, bool add, uint16_t* out) {
#if TESSERA_VECTOR_LANES
  if (lanes::cpu_has_avx512()) return to_bf16_avx512(in, n, add, out);
  if (lanes::cpu_has_avx2()) return to_bf16_avx2(in, n, add, out);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = f32_to_bf16(add ? in[i] + bf16_to_f32(out[i]) : in[i]);
}

void bf16_to_f32_rows(const uint16_t* in, int64_t n, float* out) {
#if TESSERA_VECTOR_LANES
  if (lanes::cpu_has_avx512()) return to_f32_avx512(in, n, out);
  if (lanes::cpu_has_avx2()) return to_f32_avx2(in, n, out);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_f32(in[i]);
}

}  // namespace tessera

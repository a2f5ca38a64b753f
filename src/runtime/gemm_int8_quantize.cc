// The rotation and quantization of int8 linear()'s activations
// (gemm_int8_quantize.h; the scheme: gemm_int8.cc).
#include "runtime/gemm_int8_quantize.h"

#include "runtime/bf16_rows.h"
#include "runtime/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tessera::int8_quantize {

namespace {

constexpr float kU8Max = 255.0f;

}  // namespace

// The block of the rotation: the largest power of two dividing k, at most
// kMaxRotation (a longer block spreads an outlier over more channels).
constexpr int64_t kMaxRotation = 1024;
int64_t rotation_block(int64_t k) {
  int64_t b = 1;
  while (b < kMaxRotation && k % (2 * b) == 0) b *= 2;
  return b;
}

// The Walsh-Hadamard matrix of 16 (Sylvester order: H[i][j] =
// (-1)^popcount(i & j)); its top-left 2, 4 and 8 square are those sizes'.
namespace {

constexpr int64_t kLanes = 16;
struct Hadamard16 {
  float h[kLanes][kLanes];
  constexpr Hadamard16() : h() {
    for (int i = 0; i < kLanes; ++i) {
      for (int j = 0; j < kLanes; ++j) h[i][j] = __builtin_popcount(i & j) % 2 ? -1.0f : 1.0f;
    }
  }
};
constexpr Hadamard16 kHadamard16;

// v[0, k) <- v H: H block-diagonal, each block the orthonormal
// Walsh-Hadamard matrix of `block` (symmetric, H H = I), so that
// (x H) . (w H) = x . w. Rotating spreads a few large channels over all of
// them, which per-row scales then capture with less rounding.
// H_block = H_(block/16) (x) H_16: each run of 16 is multiplied by H_16 (one
// vector FMA per element; the butterflies within a vector would not
// vectorize), then the butterflies of the higher bits, h >= 16, run on whole
// vectors.
TESSERA_INT8_CLONES void hadamard(float* v, int64_t k, int64_t block) {
  if (block < 2) return;
  const float norm = 1.0f / std::sqrt(static_cast<float>(block));
  const int64_t small = std::min(block, kLanes);
  for (int64_t c0 = 0; c0 < k; c0 += small) {
    float out[kLanes] = {};
    float* u = v + c0;
    if (small == kLanes) {
      for (int64_t j = 0; j < kLanes; ++j) {
        const float xj = u[j] * norm;
#pragma omp simd
        for (int64_t i = 0; i < kLanes; ++i) out[i] += kHadamard16.h[j][i] * xj;
      }
    } else {
      for (int64_t j = 0; j < small; ++j) {
        for (int64_t i = 0; i < small; ++i) out[i] += kHadamard16.h[j][i] * u[j] * norm;
      }
    }
    std::copy(out, out + small, u);
  }
  for (int64_t b0 = 0; b0 < k; b0 += block) {
    float* u = v + b0;
    for (int64_t h = kLanes; h < block; h *= 2) {
      for (int64_t i = 0; i < block; i += 2 * h) {
#pragma omp simd
        for (int64_t j = i; j < i + h; ++j) {
          const float a = u[j], c = u[j + h];
          u[j] = a + c;
          u[j + h] = a - c;
        }
      }
    }
  }
}

// One row: x [k] -> x~ = x H in `row`, then u8 `q` [k] with its scale and
// zero point. Any k and block.
TESSERA_INT8_CLONES void quantize_row(const float* x, int64_t k, int64_t block, uint8_t* q,
                                      float* scale_out, float* zero_out, float* row) {
  if (x != row) std::memcpy(row, x, static_cast<size_t>(k) * sizeof(float));
  hadamard(row, k, block);
  float lo = 0.0f, hi = 0.0f;
#pragma omp simd reduction(min : lo) reduction(max : hi)
  for (int64_t i = 0; i < k; ++i) {
    lo = std::min(lo, row[i]);
    hi = std::max(hi, row[i]);
  }
  const float scale = hi > lo ? (hi - lo) / kU8Max : 1.0f;
  const float zero = std::nearbyint(-lo / scale);
  const float inv = 1.0f / scale;
#pragma omp simd
  for (int64_t i = 0; i < k; ++i) {
    const float v = std::min(std::max(row[i] * inv + zero, 0.0f), kU8Max);
    // v >= 0: + 0.5 then truncation rounds half up, as the AVX-512 path.
    q[i] = static_cast<uint8_t>(
        static_cast<int32_t>(v + 0.5f));  // NOLINT(bugprone-incorrect-roundings)
  }
  *scale_out = scale;
  *zero_out = zero;
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same with AVX-512 for k and block multiples of 16 (every encoder
// shape): the generic loops left H_16 and the min/max scalar, and the
// quantization was 40% of an int8 forward (perf, MiniLM). H_16 of one vector
// is four butterfly steps in registers: lane i and lane i ^ h swap, then
// lanes with bit h clear keep the sum, the others the difference.
__attribute__((target("avx512f"))) void quantize_row_avx512(const float* x, int64_t k,
                                                            int64_t block, uint8_t* q,
                                                            float* scale_out, float* zero_out,
                                                            float* row) {
  // The zero-masked forms throughout: GCC 12's plain ones pass an
  // uninitialized vector to the builtins and -Wuninitialized trips.
  constexpr __mmask16 kAll = 0xffff;
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512 norm = _mm512_set1_ps(1.0f / std::sqrt(static_cast<float>(block)));
  __m512i swap[4];
  __mmask16 upper[4];
  for (int s = 0; s < 4; ++s) {
    const __m512i h = _mm512_set1_epi32(1 << s);
    swap[s] = _mm512_xor_si512(lane, h);
    upper[s] = _mm512_test_epi32_mask(lane, h);
  }
  for (int64_t i = 0; i < k; i += kLanes) {
    __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + i), norm);
    for (int s = 0; s < 4; ++s) {
      const __m512 p = _mm512_maskz_permutexvar_ps(kAll, swap[s], v);
      v = _mm512_mask_blend_ps(upper[s], _mm512_add_ps(v, p), _mm512_sub_ps(p, v));
    }
    _mm512_storeu_ps(row + i, v);
  }
  for (int64_t b0 = 0; b0 < k; b0 += block) {
    float* u = row + b0;
    for (int64_t h = kLanes; h < block; h *= 2) {
      for (int64_t i = 0; i < block; i += 2 * h) {
        for (int64_t j = i; j < i + h; j += kLanes) {
          const __m512 a = _mm512_loadu_ps(u + j), c = _mm512_loadu_ps(u + j + h);
          _mm512_storeu_ps(u + j, _mm512_add_ps(a, c));
          _mm512_storeu_ps(u + j + h, _mm512_sub_ps(a, c));
        }
      }
    }
  }
  __m512 lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps();
  for (int64_t i = 0; i < k; i += kLanes) {
    const __m512 v = _mm512_loadu_ps(row + i);
    lo = _mm512_maskz_min_ps(kAll, lo, v);
    hi = _mm512_maskz_max_ps(kAll, hi, v);
  }
  alignas(64) float lows[kLanes], highs[kLanes];
  _mm512_store_ps(lows, lo);
  _mm512_store_ps(highs, hi);
  const float lo_s = *std::min_element(lows, lows + kLanes);
  const float hi_s = *std::max_element(highs, highs + kLanes);
  const float scale = hi_s > lo_s ? (hi_s - lo_s) / kU8Max : 1.0f;
  const float zero = std::nearbyint(-lo_s / scale);
  const __m512 inv = _mm512_set1_ps(1.0f / scale), z = _mm512_set1_ps(zero);
  const __m512 top = _mm512_set1_ps(kU8Max), half = _mm512_set1_ps(0.5f);
  for (int64_t i = 0; i < k; i += kLanes) {
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(row + i), inv), z);
    v = _mm512_maskz_min_ps(kAll, _mm512_maskz_max_ps(kAll, v, _mm512_setzero_ps()), top);
    const __m512i n = _mm512_maskz_cvttps_epi32(kAll, _mm512_add_ps(v, half));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), _mm512_maskz_cvtepi32_epi8(kAll, n));
  }
  *scale_out = scale;
  *zero_out = zero;
}

bool use_avx512(int64_t k, int64_t block) {
  return cpu_features().avx512 && k % kLanes == 0 && block % kLanes == 0;
}
#endif

}  // namespace

void rotate(float* v, int64_t k, int64_t block) { hadamard(v, k, block); }

// Rows [0, rows) of x [rows, k] to u8 `q` [kInt8Rows, k]; scale and zero
// point of row r at params[2r], params[2r + 1]. Padding rows: zeros, scale 0.
// `row`: k floats of scratch. A bf16 row is widened into `row` first (the
// row passes read x[i] before they write row[i], so x may be row).
void quantize_rows(const void* x_rows, DType x_type, int64_t rows, int64_t k, uint8_t* q,
                   float* params, float* row) {
  const int64_t block = rotation_block(k);
#if defined(__x86_64__) && defined(__GNUC__)
  const bool fast = use_avx512(k, block);
#else
  const bool fast = false;
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = static_cast<const float*>(x_rows) + r * k;
    if (x_type == DType::kBF16) {
      bf16_to_f32_rows(static_cast<const uint16_t*>(x_rows) + r * k, k, row);
      x = row;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (fast) {
      quantize_row_avx512(x, k, block, q + r * k, &params[2 * r], &params[2 * r + 1], row);
      continue;
    }
#endif
    quantize_row(x, k, block, q + r * k, &params[2 * r], &params[2 * r + 1], row);
  }
  std::memset(q + rows * k, 0, static_cast<size_t>((kInt8Rows - rows) * k));
  for (int64_t r = rows; r < kInt8Rows; ++r) params[2 * r] = params[2 * r + 1] = 0.0f;
}

}  // namespace tessera::int8_quantize

// cuda.flash forward kernel: FlashAttention-2's algorithm on WMMA tensor-core
// tiles. Per CTA: one (sequence, query head, kBlockM query rows); it walks
// the visible key blocks, computing S = Q K^T on tensor cores, an online
// softmax (running max m and sum l per row, rescaling O), and O += P V on
// tensor cores. Never an Sq x Sk buffer: S and P live in shared memory one
// key block at a time. Semantics are the reference backend's: masked rows
// give zeros and lse = -inf; a NaN score makes the row NaN.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <cmath>
#include <cstdint>

#include "cuda_flash/flash_params.h"
#include "cuda_flash/flash_traits.h"

namespace tessera::cuda_flash {

namespace wmma = nvcuda::wmma;

inline constexpr unsigned kFullMask = 0xffffffffu;

template <typename T>
__device__ inline T from_float(float x);
template <>
__device__ inline __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
__device__ inline float to_float(__half x) { return __half2float(x); }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

struct SeqRange {
  int64_t q_begin, q_len, k_begin, k_len;
};

__device__ inline SeqRange seq_range(const FlashParams& p, int b) {
  if (p.cu_seqlens_q == nullptr) return {0, p.sq, 0, p.sk};
  return {p.cu_seqlens_q[b], p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b], p.cu_seqlens_k[b],
          p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b]};
}

// Same rule as tessera::Mask::visible (bottom-right aligned).
__device__ inline bool visible(const FlashParams& p, int64_t i, int64_t j, int64_t sq,
                               int64_t sk) {
  const int64_t pos = i + sk - sq;
  if (p.mask == MaskKind::kCausal) return j <= pos;
  if (p.mask == MaskKind::kWindow) {
    if (p.window_left >= 0 && j < pos - p.window_left) return false;
    if (p.window_right >= 0 && j > pos + p.window_right) return false;
  }
  return true;
}

// Keys [lo, hi) that some query row in [i0, i1] can see: blocks outside are
// skipped entirely.
__device__ inline void key_range(const FlashParams& p, int64_t i0, int64_t i1, int64_t sq,
                                 int64_t sk, int64_t* lo, int64_t* hi) {
  *lo = 0;
  *hi = sk;
  const int64_t p0 = i0 + sk - sq, p1 = i1 + sk - sq;
  if (p.mask == MaskKind::kCausal) *hi = p1 + 1 < sk ? p1 + 1 : sk;
  if (p.mask == MaskKind::kWindow) {
    if (p.window_left >= 0 && p0 - p.window_left > 0) *lo = p0 - p.window_left;
    if (p.window_right >= 0 && p1 + p.window_right + 1 < sk) *hi = p1 + p.window_right + 1;
  }
  if (*hi < *lo) *hi = *lo;
}

// Loads rows [row0, row0 + rows) of a [S, H, D] slice into a zero-padded
// [rows, HD] shared tile.
template <typename T, int HD, int kThreads>
__device__ inline void load_tile(T* tile, const T* base, const int64_t* stride, int64_t batch,
                                 int64_t first_row, int64_t row0, int rows, int64_t len,
                                 int64_t head, int d) {
  for (int idx = threadIdx.x; idx < rows * HD; idx += kThreads) {
    const int r = idx / HD, c = idx % HD;
    const int64_t row = row0 + r;
    T value = from_float<T>(0.0f);
    if (row < len && c < d) {
      value = base[batch * stride[0] + (first_row + row) * stride[1] + head * stride[2] +
                   c * stride[3]];
    }
    tile[idx] = value;
  }
}

template <typename T, int HD>
__global__ void __launch_bounds__(FlashTraits<HD>::kThreads)
    flash_forward_kernel(const FlashParams p) {
  using Tr = FlashTraits<HD>;
  constexpr int kBN = Tr::kBlockN;
  constexpr int kHalfCols = kBN / 2;
  extern __shared__ __align__(128) unsigned char smem[];
  T* q_tile = reinterpret_cast<T*>(smem);
  T* k_tile = reinterpret_cast<T*>(smem + Tr::kQBytes);
  T* v_tile = reinterpret_cast<T*>(smem + Tr::kQBytes + Tr::kKBytes);
  float* s_all = reinterpret_cast<float*>(smem + Tr::kQBytes + 2 * Tr::kKBytes);
  T* p_all = reinterpret_cast<T*>(smem + Tr::kQBytes + 2 * Tr::kKBytes + Tr::kSBytes);
  float* o_all =
      reinterpret_cast<float*>(smem + Tr::kQBytes + 2 * Tr::kKBytes + Tr::kSBytes + Tr::kPBytes);

  const int b = blockIdx.z;
  const int h = blockIdx.y;
  const int64_t q0 = static_cast<int64_t>(blockIdx.x) * Tr::kBlockM;
  const SeqRange r = seq_range(p, b);
  if (q0 >= r.q_len) return;
  const int kv_head = h / (p.hq / p.hkv);
  const int64_t tb = p.cu_seqlens_q == nullptr ? b : 0;  // packed tensors have B = 1
  const int warp = threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  // Two lanes per query row: `row` of the warp's 16, `half` of the columns.
  const int row = lane / 2;
  const int half = lane % 2;
  const int64_t i = q0 + warp * kWmma + row;

  load_tile<T, HD, Tr::kThreads>(q_tile, static_cast<const T*>(p.q), p.q_stride, tb, r.q_begin,
                                 q0, Tr::kBlockM, r.q_len, h, p.d);
  for (int idx = threadIdx.x; idx < Tr::kWarps * kWmma * HD; idx += Tr::kThreads) o_all[idx] = 0;

  float* s_w = s_all + warp * kWmma * kBN;
  T* p_w = p_all + warp * kWmma * kBN;
  float* o_w = o_all + warp * kWmma * HD;
  float m = -INFINITY, l = 0.0f;
  bool nan_seen = false;

  int64_t lo, hi;
  const int64_t last_row = (q0 + Tr::kBlockM < r.q_len ? q0 + Tr::kBlockM : r.q_len) - 1;
  key_range(p, q0, last_row, r.q_len, r.k_len, &lo, &hi);
  for (int64_t n0 = lo / kBN * kBN; n0 < hi; n0 += kBN) {
    __syncthreads();  // everyone is done with the previous K/V tiles
    load_tile<T, HD, Tr::kThreads>(k_tile, static_cast<const T*>(p.k), p.k_stride, tb,
                                   r.k_begin, n0, kBN, r.k_len, kv_head, p.d);
    load_tile<T, HD, Tr::kThreads>(v_tile, static_cast<const T*>(p.v), p.v_stride, tb,
                                   r.k_begin, n0, kBN, r.k_len, kv_head, p.d);
    __syncthreads();

    // S[16, kBN] = Q_w[16, HD] K^T: K's rows read as a column-major B.
#pragma unroll
    for (int nt = 0; nt < kBN / kWmma; ++nt) {
      wmma::fragment<wmma::accumulator, kWmma, kWmma, kWmma, float> acc;
      wmma::fill_fragment(acc, 0.0f);
#pragma unroll
      for (int kt = 0; kt < HD / kWmma; ++kt) {
        wmma::fragment<wmma::matrix_a, kWmma, kWmma, kWmma, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, kWmma, kWmma, kWmma, T, wmma::col_major> bk;
        wmma::load_matrix_sync(a, q_tile + warp * kWmma * HD + kt * kWmma, HD);
        wmma::load_matrix_sync(bk, k_tile + nt * kWmma * HD + kt * kWmma, HD);
        wmma::mma_sync(acc, a, bk, acc);
      }
      wmma::store_matrix_sync(s_w + nt * kWmma, acc, kBN, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax on this lane's half row.
    float* s_row = s_w + row * kBN + half * kHalfCols;
    float row_max = -INFINITY;
    for (int c = 0; c < kHalfCols; ++c) {
      const int64_t j = n0 + half * kHalfCols + c;
      float s = s_row[c] * p.scale;
      if (p.softcap > 0.0f) s = p.softcap * tanhf(s / p.softcap);
      const bool in_range = i < r.q_len && j < r.k_len;
      if (in_range && p.bias != nullptr) {
        s += p.bias[b * p.bias_stride[0] + h * p.bias_stride[1] + i * p.bias_stride[2] +
                    j * p.bias_stride[3]];
      }
      if (!in_range || !visible(p, i, j, r.q_len, r.k_len)) s = -INFINITY;
      if (isnan(s)) nan_seen = true;
      s_row[c] = s;
      row_max = fmaxf(row_max, s);
    }
    row_max = fmaxf(row_max, __shfl_xor_sync(kFullMask, row_max, 1));
    const float m_new = fmaxf(m, row_max);
    const float base = m_new == -INFINITY ? 0.0f : m_new;
    const float alpha = m == -INFINITY ? 0.0f : __expf(m - base);  // l and O are 0 while m = -inf
    float sum = 0.0f;
    T* p_row = p_w + row * kBN + half * kHalfCols;
    for (int c = 0; c < kHalfCols; ++c) {
      const float e = s_row[c] == -INFINITY ? 0.0f : __expf(s_row[c] - base);
      sum += e;
      p_row[c] = from_float<T>(e);
    }
    sum += __shfl_xor_sync(kFullMask, sum, 1);
    l = l * alpha + sum;
    m = m_new;
    float* o_row = o_w + row * HD + half * (HD / 2);
    for (int c = 0; c < HD / 2; ++c) o_row[c] *= alpha;
    __syncwarp();

    // O_w[16, HD] += P[16, kBN] V[kBN, HD].
#pragma unroll
    for (int dt = 0; dt < HD / kWmma; ++dt) {
      wmma::fragment<wmma::accumulator, kWmma, kWmma, kWmma, float> acc;
      wmma::load_matrix_sync(acc, o_w + dt * kWmma, HD, wmma::mem_row_major);
#pragma unroll
      for (int kt = 0; kt < kBN / kWmma; ++kt) {
        wmma::fragment<wmma::matrix_a, kWmma, kWmma, kWmma, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, kWmma, kWmma, kWmma, T, wmma::row_major> bv;
        wmma::load_matrix_sync(a, p_w + kt * kWmma, kBN);
        wmma::load_matrix_sync(bv, v_tile + kt * kWmma * HD + dt * kWmma, HD);
        wmma::mma_sync(acc, a, bv, acc);
      }
      wmma::store_matrix_sync(o_w + dt * kWmma, acc, HD, wmma::mem_row_major);
    }
    __syncwarp();
  }

  nan_seen = __shfl_xor_sync(kFullMask, static_cast<int>(nan_seen), 1) != 0 || nan_seen;
  if (i >= r.q_len) return;
  T* out = static_cast<T*>(p.out);
  const int64_t out_row = tb * p.out_stride[0] + (r.q_begin + i) * p.out_stride[1] +
                          h * p.out_stride[2];
  const float* o_row = o_w + row * HD;
  for (int c = half; c < p.d; c += 2) {
    float value;
    if (nan_seen) {
      value = NAN;
    } else if (l == 0.0f) {
      value = 0.0f;  // no visible key
    } else {
      value = o_row[c] / l;
    }
    out[out_row + c * p.out_stride[3]] = from_float<T>(value);
  }
  if (p.lse != nullptr && half == 0) {
    const float lse = nan_seen ? NAN : (l == 0.0f ? -INFINITY : m + logf(l));
    p.lse[tb * p.lse_stride[0] + h * p.lse_stride[1] + (r.q_begin + i) * p.lse_stride[2]] = lse;
  }
}

template <typename T, int HD>
cudaError_t launch_flash(const FlashParams& p, cudaStream_t stream) {
  using Tr = FlashTraits<HD>;
  auto* kernel = flash_forward_kernel<T, HD>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(Tr::kSmemBytes));
  if (err != cudaSuccess) return err;
  const dim3 grid((p.sq + Tr::kBlockM - 1) / Tr::kBlockM, p.hq, p.batch);
  kernel<<<grid, Tr::kThreads, Tr::kSmemBytes, stream>>>(p);
  return cudaGetLastError();
}

// One instantiation file per element type keeps builds parallel.
template <typename T>
cudaError_t launch_flash_for_head_dim(const FlashParams& p, cudaStream_t stream) {
  if (p.d <= 32) return launch_flash<T, 32>(p, stream);
  if (p.d <= 64) return launch_flash<T, 64>(p, stream);
  if (p.d <= 128) return launch_flash<T, 128>(p, stream);
  return launch_flash<T, 256>(p, stream);
}

}  // namespace tessera::cuda_flash

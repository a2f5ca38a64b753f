// Masked softmax over the rows of S (one CTA per row): scale, softcap, bias,
// mask, then P = exp(s - max) / sum in the input dtype, and lse. A row with
// no visible key gets P = 0 (so O = 0) and lse = -inf; a NaN score makes the
// row NaN, as the reference defines.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "cuda_vendor/softmax_params.h"

namespace tessera::cuda_vendor {

namespace {

constexpr int kThreads = 256;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ bool visible(const SoftmaxParams& p, int64_t i, int64_t j) {
  const int64_t pos = i + p.sk - p.sq;
  if (p.mask == 1) return j <= pos;
  if (p.mask == 2) {
    if (p.window_left >= 0 && j < pos - p.window_left) return false;
    if (p.window_right >= 0 && j > pos + p.window_right) return false;
  }
  return true;
}

__device__ float block_reduce(float v, bool is_max, float* scratch) {
  for (int o = 16; o > 0; o /= 2) {
    const float w = __shfl_xor_sync(kFullMask, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < kThreads / 32; ++w) v = is_max ? fmaxf(v, scratch[w]) : v + scratch[w];
  return v;
}

__device__ float score(const SoftmaxParams& p, int h, int64_t i, int64_t j, const float* row) {
  if (!visible(p, i, j)) return -INFINITY;
  float s = row[j] * p.scale;
  if (p.softcap > 0.0f) s = p.softcap * tanhf(s / p.softcap);
  if (p.bias != nullptr) {
    s += p.bias[p.bias_batch * p.bias_stride[0] + (p.head0 + h) * p.bias_stride[1] +
                i * p.bias_stride[2] + j * p.bias_stride[3]];
  }
  return s;
}

__global__ void softmax_kernel(const SoftmaxParams p) {
  __shared__ float scratch[kThreads / 32];
  const int h = blockIdx.y;
  const int64_t i = blockIdx.x;
  const float* row = p.scores + (static_cast<int64_t>(h) * p.sq + i) * p.sk;
  float mx = -INFINITY;
  float nan_count = 0.0f;
  for (int64_t j = threadIdx.x; j < p.sk; j += kThreads) {
    const float s = score(p, h, i, j, row);
    if (isnan(s)) nan_count += 1.0f;
    mx = fmaxf(mx, s);
  }
  mx = block_reduce(mx, true, scratch);
  nan_count = block_reduce(nan_count, false, scratch);
  float sum = 0.0f;
  if (mx != -INFINITY) {
    for (int64_t j = threadIdx.x; j < p.sk; j += kThreads) {
      const float s = score(p, h, i, j, row);
      sum += s == -INFINITY ? 0.0f : __expf(s - mx);
    }
  }
  sum = block_reduce(sum, false, scratch);
  const bool nan_row = nan_count > 0.0f;
  const bool empty = sum == 0.0f;
  const int64_t base = (static_cast<int64_t>(h) * p.sq + i) * p.sk;
  for (int64_t j = threadIdx.x; j < p.sk; j += kThreads) {
    const float s = score(p, h, i, j, row);
    float prob = 0.0f;
    if (nan_row) {
      prob = NAN;
    } else if (!empty && s != -INFINITY) {
      prob = __expf(s - mx) / sum;
    }
    if (p.bf16) {
      static_cast<__nv_bfloat16*>(p.probs)[base + j] = __float2bfloat16_rn(prob);
    } else {
      static_cast<__half*>(p.probs)[base + j] = __float2half_rn(prob);
    }
  }
  if (p.lse != nullptr && threadIdx.x == 0) {
    p.lse[(p.head0 + h) * p.lse_head_stride + i * p.lse_row_stride] =
        nan_row ? NAN : (empty ? -INFINITY : mx + logf(sum));
  }
}

}  // namespace

int launch_softmax(const SoftmaxParams& p, void* stream) {
  if (p.sq == 0 || p.heads == 0) return cudaSuccess;
  const dim3 grid(p.sq, p.heads);
  softmax_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
  return cudaGetLastError();
}

}  // namespace tessera::cuda_vendor

// Plain data for the cuda.vendor softmax kernel (no CUDA types).
#pragma once

#include <cstdint>

namespace tessera::cuda_vendor {

// Scores of `heads` heads of one sequence: S[h][i][j] f32, row length sk.
// The kernel writes P (the input dtype) in place of the same layout and lse.
struct SoftmaxParams {
  const float* scores;  // [heads, sq, sk]
  void* probs;          // [heads, sq, sk], f16 or bf16
  float* lse;           // lse[h * lse_head_stride + i * lse_row_stride], or null
  int64_t lse_head_stride, lse_row_stride;
  const float* bias;    // bias[b, h, i, j] with broadcast strides, or null
  int64_t bias_stride[4];
  int64_t bias_batch;   // sequence index for the bias
  int heads, sq, sk;
  int head0;            // first query head of this launch (bias / lse indexing)
  float scale, softcap;
  int mask;             // 0 none, 1 causal, 2 window
  int64_t window_left, window_right;
  bool bf16;
};

int launch_softmax(const SoftmaxParams& p, void* stream);  // returns cudaError_t

}  // namespace tessera::cuda_vendor

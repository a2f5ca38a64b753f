#include "model/kernels.h"

#include <algorithm>
#include <cmath>

namespace tessera::model {

namespace {
// Below this many floats touched, one thread does the whole stage: waking the
// pool costs more than it saves.
constexpr int64_t kMinParallelWork = 1 << 15;
}  // namespace

TESSERA_MODEL_CLONES
void layer_norm_row_to(const float* x, float* y, const float* gamma, const float* beta, float eps,
                       int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(n);
  float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
  for (int64_t i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
  const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);
  if (beta == nullptr) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * gamma[i];
    return;
  }
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
}

void layer_norm_row(float* x, const float* gamma, const float* beta, float eps, int64_t n) {
  layer_norm_row_to(x, x, gamma, beta, eps, n);
}

TESSERA_MODEL_CLONES
void rms_norm_row_to(const float* x, float* y, const float* gamma, float eps, int64_t n) {
  float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
  for (int64_t i = 0; i < n; ++i) sq += x[i] * x[i];
  const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * rstd * gamma[i];
}

TESSERA_MODEL_CLONES
void sum3_row(float* x, const float* a, const float* b, const float* c, int64_t n) {
  if (c == nullptr) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) x[i] = a[i] + b[i];
    return;
  }
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) x[i] = a[i] + b[i] + c[i];
}

TESSERA_MODEL_CLONES
void splade_max_row(float* acc, const float* logits, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    // Most logits are negative: log1p only where relu keeps something.
    if (logits[i] > 0.0f) acc[i] = std::max(acc[i], std::log1p(logits[i]));
  }
}

void for_row_blocks(ThreadPool& pool, int64_t rows, int64_t cost_per_row,
                    const std::function<void(int64_t, int64_t)>& fn) {
  const int threads = pool.num_threads();
  if (threads <= 1 || rows * cost_per_row < kMinParallelWork) {
    fn(0, rows);
    return;
  }
  // A few blocks per thread balance uneven progress without much overhead.
  const int64_t blocks = std::min<int64_t>(rows, int64_t{4} * threads);
  const int64_t per = (rows + blocks - 1) / blocks;
  pool.parallel_for((rows + per - 1) / per,
                    [&](int64_t b, int) { fn(b * per, std::min(rows, (b + 1) * per)); });
}

}  // namespace tessera::model

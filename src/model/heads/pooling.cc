#include "model/heads/pooling.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace tessera::model {

namespace {
constexpr float kNormalizeEps = 1e-12f;  // torch.nn.functional.normalize default
}  // namespace

void pool_sequences(Pooling mode, const float* hidden, int64_t h, const int32_t* cu_seqlens,
                    int64_t count, float* out) {
  for (int64_t s = 0; s < count; ++s) {
    const float* rows = hidden + static_cast<int64_t>(cu_seqlens[s]) * h;
    const int64_t len = cu_seqlens[s + 1] - cu_seqlens[s];
    float* o = out + s * h;
    if (mode == Pooling::kLastToken) {
      // A packed batch has no padding: the last row is the last real token.
      std::memcpy(o, rows + (len - 1) * h, h * sizeof(float));
      continue;
    }
    if (mode == Pooling::kWeightedMean) {
      // Token t weighs t + 1, as sentence-transformers' positions count from
      // the first real token; accumulated in double (its weights grow).
      std::vector<double> sum(static_cast<size_t>(h), 0.0);
      for (int64_t t = 0; t < len; ++t) {
        const float* r = rows + t * h;
        for (int64_t i = 0; i < h; ++i) sum[i] += static_cast<double>(t + 1) * r[i];
      }
      const double weights = static_cast<double>(len) * static_cast<double>(len + 1) / 2.0;
      for (int64_t i = 0; i < h; ++i) o[i] = static_cast<float>(sum[i] / weights);
      continue;
    }
    std::memcpy(o, rows, h * sizeof(float));  // the first token: cls, and the start of the others
    if (mode == Pooling::kCls) continue;
    for (int64_t t = 1; t < len; ++t) {
      const float* r = rows + t * h;
      if (mode == Pooling::kMean || mode == Pooling::kMeanSqrtLen) {
        for (int64_t i = 0; i < h; ++i) o[i] += r[i];
      } else {
        for (int64_t i = 0; i < h; ++i) o[i] = std::max(o[i], r[i]);
      }
    }
    if (mode == Pooling::kMean || mode == Pooling::kMeanSqrtLen) {
      const float n =
          mode == Pooling::kMean ? static_cast<float>(len) : std::sqrt(static_cast<float>(len));
      for (int64_t i = 0; i < h; ++i) o[i] /= n;
    }
  }
}

void l2_normalize_rows(float* x, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    float* v = x + r * n;
    double sq = 0.0;
    for (int64_t i = 0; i < n; ++i) sq += static_cast<double>(v[i]) * v[i];
    const float inv = 1.0f / std::max(static_cast<float>(std::sqrt(sq)), kNormalizeEps);
    for (int64_t i = 0; i < n; ++i) v[i] *= inv;
  }
}

}  // namespace tessera::model

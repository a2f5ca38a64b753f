#include "model/layers/relative_position_bias.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model/stage_span.h"

namespace tessera::model {

int relative_position_bucket(int64_t relative, int num_buckets, int max_distance) {
  const int half = num_buckets / 2;
  const int64_t n = -relative;  // query - key, as HF's n = -relative_position
  int bucket = n < 0 ? half : 0;
  const int64_t distance = n < 0 ? -n : n;
  const int max_exact = half / 2;
  if (distance < max_exact) return bucket + static_cast<int>(distance);
  // torch: log(n.float() / max_exact) / math.log(max_distance / max_exact)
  // * (half - max_exact), each step in float32, then truncated.
  const float ratio = static_cast<float>(distance) / static_cast<float>(max_exact);
  const float scale = static_cast<float>(
      std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)));
  const float large = std::log(ratio) / scale * static_cast<float>(half - max_exact);
  const int64_t value = max_exact + static_cast<int64_t>(large);
  return bucket + static_cast<int>(std::min<int64_t>(value, half - 1));
}

void fill_relative_position_bias(const float* table, int num_buckets, int max_distance, int heads,
                                 int64_t s, float* out) {
  // by_query[h][k]: the bias of relative position j - i = s - 1 - k, so
  // that key j's run over queries i = 0 .. s-1 is k = s-1-j .. 2s-2-j.
  std::vector<float> by_query(static_cast<size_t>(heads) * (2 * s - 1));
  for (int64_t k = 0; k < 2 * s - 1; ++k) {
    const int bucket = relative_position_bucket(s - 1 - k, num_buckets, max_distance);
    for (int h = 0; h < heads; ++h) {
      by_query[static_cast<size_t>(h) * (2 * s - 1) + k] = table[bucket * heads + h];
    }
  }
  // Row j (a key) of head h: one copy of s consecutive entries.
  for (int h = 0; h < heads; ++h) {
    const float* run = by_query.data() + static_cast<size_t>(h) * (2 * s - 1);
    for (int64_t j = 0; j < s; ++j) {
      std::memcpy(out + (static_cast<int64_t>(h) * s + j) * s, run + (s - 1 - j),
                  static_cast<size_t>(s) * sizeof(float));
    }
  }
}

Status RelativePositionBias::build(const ForwardPass& f) {
  const int64_t heads = f.config.num_attention_heads;
  const int64_t s = f.longest;
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(f.ctx.allocator(),
                                           static_cast<size_t>(heads * s * s) * sizeof(float),
                                           "model.activations", &memory_));
  StageSpan span(f.ctx.profiler(), "model.relative_position_bias",
                 "H=" + std::to_string(heads) + ",S=" + std::to_string(s));
  fill_relative_position_bias(f.weights.relative_attention_bias, f.config.relative_buckets_used,
                              f.config.relative_max_distance, static_cast<int>(heads), s,
                              memory_.as<float>());
  view_.data = memory_.as<float>();
  view_.dtype = DType::kF32;
  view_.rank = 4;
  view_.shape = {1, heads, s, s};
  view_.strides = {heads * s * s, s * s, 1, s};
  return Status::Ok();
}

}  // namespace tessera::model

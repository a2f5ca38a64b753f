#include "model/layers/relative_position_bias.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

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
  // by_distance[h][d + s - 1]: the bias of relative position d = j - i.
  std::vector<float> by_distance(static_cast<size_t>(heads) * (2 * s - 1));
  for (int64_t d = -(s - 1); d <= s - 1; ++d) {
    const int bucket = relative_position_bucket(d, num_buckets, max_distance);
    for (int h = 0; h < heads; ++h) {
      by_distance[static_cast<size_t>(h) * (2 * s - 1) + (d + s - 1)] = table[bucket * heads + h];
    }
  }
  // Row i of head h is the run of distances -i .. s-1-i: one copy per row.
  for (int h = 0; h < heads; ++h) {
    const float* run = by_distance.data() + static_cast<size_t>(h) * (2 * s - 1);
    for (int64_t i = 0; i < s; ++i) {
      std::memcpy(out + (static_cast<int64_t>(h) * s + i) * s, run + (s - 1 - i),
                  static_cast<size_t>(s) * sizeof(float));
    }
  }
}

}  // namespace tessera::model

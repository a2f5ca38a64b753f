#include "model/layers/relative_position_bias.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace tessera::model {
namespace {

// HF transformers 5.24.0's MPNetEncoder.relative_position_bucket over
// relative = -1100..1100 (num_buckets 32, max_distance 128), as the first
// relative position of each run of equal buckets:
//   rel = torch.arange(-1100, 1101)
//   MPNetEncoder.relative_position_bucket(rel, num_buckets=32, max_distance=128)
const std::vector<std::pair<int, int>> kHfRuns = {
    {-1100, 15}, {-90, 14}, {-63, 13}, {-45, 12}, {-31, 11}, {-22, 10}, {-15, 9}, {-11, 8},
    {-7, 7},     {-6, 6},   {-5, 5},   {-4, 4},   {-3, 3},   {-2, 2},   {-1, 1},  {0, 0},
    {1, 17},     {2, 18},   {3, 19},   {4, 20},   {5, 21},   {6, 22},   {7, 23},  {8, 24},
    {12, 25},    {16, 26},  {23, 27},  {32, 28},  {46, 29},  {64, 30},  {91, 31}};

TEST(RelativePositionBias, BucketsMatchTransformersAtEveryDistance) {
  size_t run = 0;
  for (int rel = -1100; rel <= 1100; ++rel) {
    if (run + 1 < kHfRuns.size() && rel == kHfRuns[run + 1].first) ++run;
    ASSERT_EQ(relative_position_bucket(rel, 32, 128), kHfRuns[run].second) << "relative " << rel;
  }
}

TEST(RelativePositionBias, FillsQueryMajorBlocksFromTheTable) {
  const int buckets = 32, heads = 3;
  std::vector<float> table(buckets * heads);
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i) * 0.5f - 7.0f;
  const int64_t s = 150;  // reaches the clamped buckets (distance > 128)
  std::vector<float> out(heads * s * s, -1.0f);
  fill_relative_position_bias(table.data(), buckets, 128, heads, s, out.data());
  for (int h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < s; ++i) {
      for (int64_t j = 0; j < s; ++j) {
        const int b = relative_position_bucket(j - i, buckets, 128);
        ASSERT_EQ(out[(h * s + j) * s + i], table[b * heads + h]) << h << " " << i << " " << j;
      }
    }
  }
}

}  // namespace
}  // namespace tessera::model

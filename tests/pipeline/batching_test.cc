#include "pipeline/batching.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace tessera::pipeline {
namespace {

TEST(Batching, EveryChunkOnceUnderTheBudgetLongestFirst) {
  std::mt19937 rng(7);
  for (int64_t budget : {256, 300, 1000, 4096}) {
    std::vector<int64_t> lengths(500);
    for (auto& l : lengths) l = std::uniform_int_distribution<int64_t>(3, 256)(rng);
    const auto batches = plan_batches(lengths, budget);
    std::vector<int> seen(lengths.size(), 0);
    int64_t previous = INT64_MAX;
    for (const Batch& b : batches) {
      ASSERT_FALSE(b.chunks.empty());
      int64_t sum = 0;
      for (int64_t i : b.chunks) {
        ++seen[i];
        sum += lengths[i];
        EXPECT_LE(lengths[i], previous) << "not sorted by length";
        previous = lengths[i];
      }
      EXPECT_EQ(sum, b.tokens);
      EXPECT_LE(b.tokens, budget);
    }
    for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "chunk " << i;
    // Greedy packing: a batch is closed only when the next chunk would not fit.
    for (size_t k = 0; k + 1 < batches.size(); ++k) {
      EXPECT_GT(batches[k].tokens + lengths[batches[k + 1].chunks.front()], budget);
    }
  }
}

TEST(Batching, TiesKeepInputOrderAndOversizeTravelsAlone) {
  const std::vector<int64_t> lengths = {5, 9, 5, 20, 5};
  const auto batches = plan_batches(lengths, 10);
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches[0].chunks, (std::vector<int64_t>{3}));  // 20 > budget: alone
  EXPECT_EQ(batches[1].chunks, (std::vector<int64_t>{1}));
  EXPECT_EQ(batches[2].chunks, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(batches[3].chunks, (std::vector<int64_t>{4}));
  EXPECT_TRUE(plan_batches({}, 10).empty());
}

}  // namespace
}  // namespace tessera::pipeline

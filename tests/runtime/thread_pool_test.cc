#include "tessera/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace tessera {
namespace {

TEST(ThreadPool, RunsEveryItemOnceWithValidThreadIndex) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 3, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<bool> bad_index{false};
      pool.parallel_for(n, [&](int64_t i, int t) {
        hits[static_cast<size_t>(i)]++;
        if (t < 0 || t >= pool.num_threads()) bad_index = true;
      });
      for (auto& h : hits) EXPECT_EQ(h.load(), 1);
      EXPECT_FALSE(bad_index);
    }
  }
}

}  // namespace
}  // namespace tessera

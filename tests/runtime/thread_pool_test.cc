#include "tessera/thread_pool.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tessera {
namespace {

// The process's mapped address space (what RLIMIT_AS counts).
uint64_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

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

// Jobs back to back reach workers that are still polling for work, jobs
// after a pause reach workers that went to sleep (thread_pool.cc polls
// ~200 us): either way every item runs once, and none runs after its
// parallel_for returned.
TEST(ThreadPool, BackToBackAndSpacedJobsEachFinishBeforeReturning) {
  for (int threads : {2, 4}) {
    ThreadPool pool(threads);
    for (const auto pause : {std::chrono::microseconds(0), std::chrono::microseconds(2000)}) {
      for (int job = 0; job < 200; ++job) {
        const int64_t n = 1 + job % 7;
        std::atomic<int64_t> ran{0};
        std::atomic<bool> returned{false}, late{false};
        pool.parallel_for(n, [&](int64_t, int) {
          if (returned.load()) late = true;
          ran++;
        });
        returned = true;
        ASSERT_EQ(ran.load(), n) << "job " << job << " on " << threads << " threads";
        ASSERT_FALSE(late.load());
        if (pause.count() > 0 && job % 20 == 0) std::this_thread::sleep_for(pause);
      }
    }
  }
}

// A throwing item reaches the caller of parallel_for as that exception, on
// every pool size; the items nobody had claimed are skipped; the pool stays
// usable afterwards (the process must outlive a backend's failure).
TEST(ThreadPool, CarriesAJobsExceptionToTheCallerAndStaysUsable) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int64_t throwing_item : {0, 7, 999}) {
      std::atomic<int64_t> ran{0};
      try {
        pool.parallel_for(1000, [&](int64_t i, int) {
          ++ran;
          if (i == throwing_item) throw std::runtime_error("item " + std::to_string(i));
        });
        ADD_FAILURE() << "parallel_for returned normally; threads=" << threads;
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "item " + std::to_string(throwing_item));
      }
      EXPECT_LE(ran.load(), 1000);
      if (throwing_item == 0 && threads == 1) {
        EXPECT_EQ(ran.load(), 1);
      }
      std::atomic<int64_t> after{0};
      pool.parallel_for(100, [&](int64_t, int) { ++after; });
      EXPECT_EQ(after.load(), 100) << "threads=" << threads;
    }
  }
}

// Several items throwing at once: exactly one exception comes out, the rest
// are dropped, nothing terminates the process.
TEST(ThreadPool, ManyThrowingItemsGiveOneException) {
  ThreadPool pool(4);
  int caught = 0;
  try {
    pool.parallel_for(10000, [](int64_t i, int) { throw std::logic_error(std::to_string(i)); });
  } catch (const std::logic_error&) {
    ++caught;
  }
  EXPECT_EQ(caught, 1);
}

// Issue 35: a worker the system cannot start (here: no address space left
// for its stack) escaped the constructor while the workers already started
// ran, and their std::thread objects died joinable (std::terminate). Now the
// pool keeps the threads it has, says so, and works.
TEST(ThreadPool, RunsWithTheThreadsItCouldStart) {
  if (std::getenv("TESSERA_TEST_SANITIZED") != nullptr) {
    GTEST_SKIP() << "ASan needs an unlimited address space";
  }
  constexpr int kAsked = 256;                     // stacks of 8 MiB: 2 GiB
  constexpr uint64_t kRoom = uint64_t{64} << 20;  // a few stacks' worth
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &old), 0);
  const rlimit tight{mapped_bytes() + kRoom, old.rlim_max};
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &tight), 0);
  std::unique_ptr<ThreadPool> pool;
  pool = std::make_unique<ThreadPool>(kAsked);
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &old), 0);

  EXPECT_EQ(pool->requested_threads(), kAsked);
  EXPECT_GE(pool->num_threads(), 1);
  EXPECT_LT(pool->num_threads(), kAsked);
  EXPECT_FALSE(pool->start_failure().empty());
  std::vector<std::atomic<int>> hits(1000);
  std::atomic<bool> bad_index{false};
  pool->parallel_for(1000, [&](int64_t i, int t) {
    hits[static_cast<size_t>(i)]++;
    if (t < 0 || t >= pool->num_threads()) bad_index = true;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_FALSE(bad_index);
}

}  // namespace
}  // namespace tessera

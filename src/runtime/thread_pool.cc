#include "tessera/thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tessera {

namespace {

// How long a thread polls for what it waits for (a new job for a worker,
// the last items for the caller) before it sleeps on a condition variable.
// Waking a sleeping worker took ~10 us on a Zen 4 VM, and a short decode's
// worker often joined late: Sk = 512 decode 0.17 -> 0.11 ms with polling.
// A caller's next parallel_for usually comes within this time, so the
// worker is still polling (docs/DECISIONS.md, "Thread pool: poll briefly
// before sleeping").
constexpr auto kPollTime = std::chrono::microseconds(200);

// ThreadPool::max_threads(): compute gains nothing past a few threads per
// core; the floor keeps small containers (2 CPUs seen) free to ask for 64.
constexpr int kMaxThreadsPerHardwareThread = 8;
constexpr int kMaxThreadsFloor = 64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls ready() until it is true or kPollTime has passed (not at all when
// `poll` is false); the caller then decides under its lock.
template <class Ready>
void poll_for(bool poll, Ready ready) {
  if (!poll) return;
  const auto deadline = std::chrono::steady_clock::now() + kPollTime;
  while (std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return;
      cpu_relax();
    }
  }
}

}  // namespace

int ThreadPool::max_threads() {
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(kMaxThreadsFloor, kMaxThreadsPerHardwareThread * hardware);
}

namespace {

// Forks of this process so far, counted in the child by a pthread_atfork
// handler registered with the first pool: a pool made before a fork sees a
// different count in the child, at the cost of one relaxed load per job.
std::atomic<unsigned> fork_count{0};

unsigned current_fork_generation() {
  static const bool registered = [] {
    ::pthread_atfork(nullptr, nullptr, [] { fork_count.fetch_add(1, std::memory_order_relaxed); });
    return true;
  }();
  (void)registered;
  return fork_count.load(std::memory_order_relaxed);
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  fork_generation_ = current_fork_generation();
  if (num_threads <= 0) num_threads = static_cast<int>(std::thread::hardware_concurrency());
  requested_threads_ = num_threads < 1 ? 1 : num_threads;
  // More threads than cores: a polling thread would hold a core another
  // thread of the job needs. Decided before any worker reads it.
  poll_ = requested_threads_ <= static_cast<int>(std::thread::hardware_concurrency());
  workers_.reserve(static_cast<size_t>(requested_threads_ - 1));
  // A failed start must not escape: the workers already running would be
  // destroyed joinable (std::terminate). Run with those instead; each
  // worker's index t stays below num_threads_.
  for (int t = 1; t < requested_threads_; ++t) {
    try {
      workers_.emplace_back([this, t] { worker_loop(t); });
    } catch (const std::system_error& e) {
      start_failure_ = e.what();
      break;
    } catch (const std::bad_alloc& e) {
      start_failure_ = e.what();
      break;
    }
  }
  num_threads_ = static_cast<int>(workers_.size()) + 1;
}

ThreadPool::~ThreadPool() {
  if (in_forked_child()) {
    // The workers do not exist in this process, and one of them may have
    // held mu_ at the fork: neither is touched. Their handles are leaked on
    // purpose (a joinable std::thread destroyed would terminate); with no
    // memory for that, detached (the handles only mark a thread that is not
    // in this process).
    auto* leaked = new (std::nothrow) std::vector<std::thread>(  // NOLINT: leaked on purpose
        std::move(workers_));
    if (leaked == nullptr) {
      for (std::thread& w : workers_) w.detach();
    }
    return;  // NOLINT(clang-analyzer-cplusplus.NewDeleteLeaks): leaked on purpose, above
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

// Claims items one at a time until none are left. Items are coarse (a head, a
// query block), so one lock per item costs nothing measurable. An item that
// throws cancels the items not yet claimed (they count as finished, never
// run); items already running on other threads finish; the first exception
// is kept for parallel_for to rethrow on the calling thread.
void ThreadPool::run_items(int thread_index) {
  std::unique_lock<std::mutex> lock(mu_);
  while (next_item_ < job_size_) {
    const int64_t item = next_item_++;
    const auto* job = job_;
    lock.unlock();
    std::exception_ptr thrown;
    try {
      (*job)(item, thread_index);
    } catch (...) {
      thrown = std::current_exception();
    }
    lock.lock();
    int64_t finished = 1;
    if (thrown) {
      if (!error_) error_ = thrown;
      finished += job_size_ - next_item_;  // cancel what nobody has claimed
      next_item_ = job_size_;
    }
    finished_items_ += finished;
    if (finished_items_ == job_size_) done_.notify_all();
  }
}

void ThreadPool::worker_loop(int thread_index) {
  uint64_t seen = 0;
  for (;;) {
    poll_for(poll_, [&] {
      return stop_.load(std::memory_order_relaxed) ||
             generation_.load(std::memory_order_relaxed) != seen;
    });
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      ++busy_workers_;
    }
    run_items(thread_index);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --busy_workers_;
    }
    done_.notify_all();
  }
}

bool ThreadPool::in_forked_child() const {
  if (workers_.empty() || current_fork_generation() == fork_generation_) return false;
  static std::once_flag said;
  std::call_once(said, [] {
    std::fprintf(stderr,
                 "tessera: this process was forked from one whose thread pool had started; "
                 "its work runs on one thread here (use multiprocessing's 'spawn' start method, "
                 "or create the model in the child, for all threads)\n");
  });
  return true;
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int)>& fn) {
  if (n <= 0) return;
  if (num_threads_ == 1 || n == 1 || in_forked_child()) {
    for (int64_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    job_size_ = n;
    next_item_ = 0;
    finished_items_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  run_items(0);
  poll_for(poll_, [&] {
    return finished_items_.load(std::memory_order_relaxed) == n &&
           busy_workers_.load(std::memory_order_relaxed) == 0;
  });
  std::unique_lock<std::mutex> lock(mu_);
  // Wait for the items and for every worker to leave run_items, so no worker
  // touches job_ after we return.
  done_.wait(lock, [&] { return finished_items_ == job_size_ && busy_workers_ == 0; });
  job_ = nullptr;
  job_size_ = 0;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace tessera

// A fixed pool of worker threads with one primitive: parallel_for over [0, n).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tessera {

class ThreadPool {
 public:
  // Most threads a pool is asked for: max(64, 8 per hardware thread). More
  // only oversubscribes the cores, and a mistyped count (100000) would take
  // every process id of the machine; Runtime::create refuses it.
  static int max_threads();

  // num_threads <= 0 means one per hardware thread. The calling thread takes
  // part in every parallel_for, so a pool of N runs N-1 workers. A worker the
  // system cannot start (EAGAIN: no memory for its stack, RLIMIT_NPROC) is
  // not fatal here: the pool works with the threads it has, and
  // num_threads() < requested_threads() says so (Runtime::create turns that
  // into an error).
  explicit ThreadPool(int num_threads = 0);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  int num_threads() const { return num_threads_; }
  int requested_threads() const { return requested_threads_; }
  // Why the pool has fewer threads than requested ("" when it has them all).
  const std::string& start_failure() const { return start_failure_; }
  // Calls fn(i, thread_index) for every i in [0, n); returns when all are done.
  // thread_index is in [0, num_threads()) and indexes per-thread scratch.
  // Not reentrant: fn must not call parallel_for on the same pool.
  // If fn throws, the items nobody has started are skipped, the running ones
  // finish, and the first exception is rethrown here on the calling thread
  // (the pool stays usable), so a backend's failure inside a parallel region
  // reaches the dispatcher like a failure outside one.
  // In a child made by fork() (Python's multiprocessing before 3.14), which
  // has none of the pool's threads, every item runs on the calling thread
  // (said once on stderr) instead of waiting forever for them.
  void parallel_for(int64_t n, const std::function<void(int64_t, int)>& fn);

 private:
  void worker_loop(int thread_index);
  bool in_forked_child() const;
  void run_items(int thread_index);

  // The process's fork count when the workers started (thread_pool.cc: a
  // pthread_atfork child handler counts forks; no syscall per job).
  unsigned fork_generation_ = 0;
  int num_threads_ = 1;
  int requested_threads_ = 1;
  std::string start_failure_;
  bool poll_ = true;  // poll briefly before sleeping (thread_pool.cc)
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t, int)>* job_ = nullptr;
  int64_t job_size_ = 0;
  int64_t next_item_ = 0;
  // Changed under mu_ only; atomic so that a polling thread may read them
  // without it (a hint: the decision is taken again under mu_).
  std::atomic<int64_t> finished_items_ = 0;
  std::atomic<uint64_t> generation_ = 0;
  std::atomic<int> busy_workers_ = 0;
  std::exception_ptr error_;  // the first exception of the current job
  std::atomic<bool> stop_ = false;
};

}  // namespace tessera

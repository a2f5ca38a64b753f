#include "server/connection_pool.h"

#include <cstdio>
#include <exception>
#include <system_error>

namespace tessera::server {

ConnectionPool::ConnectionPool(size_t max_threads, ThreadStarter start_thread)
    : max_threads_(max_threads),
      start_thread_(start_thread ? std::move(start_thread) : [](std::function<void()> fn) {
        return std::thread(std::move(fn));
      }) {}

ConnectionPool::~ConnectionPool() { shutdown(); }

bool ConnectionPool::try_enqueue(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutdown_) return false;
    jobs_.push_back(std::move(fn));
    // More waiting jobs than idle threads: start one while allowed.
    if (jobs_.size() > idle_ && threads_.size() < max_threads_) {
      try {
        threads_.push_back(start_thread_([this] { work(); }));
      } catch (const std::system_error& e) {
        // EAGAIN under a pids or memory limit: serve with the threads we have.
        if (start_failures_++ == 0) {
          std::fprintf(
              stderr, "tessera serve: cannot start HTTP worker thread %zu (%s); serving with %zu\n",
              threads_.size() + 1, e.what(), threads_.size());
        }
        if (threads_.empty()) {
          jobs_.pop_back();
          return false;
        }
      }
    }
  }
  wake_.notify_one();
  return true;
}

void ConnectionPool::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutdown_ = true;
    threads.swap(threads_);
  }
  wake_.notify_all();
  for (std::thread& t : threads) t.join();
}

size_t ConnectionPool::threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_.size();
}

void ConnectionPool::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++idle_;
      wake_.wait(lock, [this] { return !jobs_.empty() || shutdown_; });
      --idle_;
      if (jobs_.empty()) return;  // shutting down and nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    ++busy_;
    // A job's exception ends that job, never the thread (an exception
    // leaving a std::thread terminates the process).
    try {
      job();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tessera serve: connection thread: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "tessera serve: connection thread: unknown exception\n");
    }
    --busy_;
  }
}

}  // namespace tessera::server

#include "server/connection_pool.h"

#include <cstdio>
#include <exception>

namespace tessera::server {

ConnectionPool::ConnectionPool(size_t max_threads) : max_threads_(max_threads) {}

ConnectionPool::~ConnectionPool() { shutdown(); }

void ConnectionPool::enqueue(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(fn));
    // More waiting connections than idle threads: start one while allowed.
    if (!shutdown_ && jobs_.size() > idle_ && threads_.size() < max_threads_) {
      threads_.emplace_back([this] { work(); });
    }
  }
  wake_.notify_one();
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
    // A connection's exception ends that connection, never the thread (an
    // exception leaving a std::thread terminates the process).
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

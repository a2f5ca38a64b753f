// The worker threads of the HTTP server. The reactor (connection_reactor.h)
// holds every connection while it is idle or still arriving; a worker gets a
// connection only once a whole request is buffered, serves it, and gives it
// back. Threads start on demand up to a cap and are kept for reuse. A thread
// that cannot be started (a pids or memory limit) is counted, not fatal: the
// job waits for a running thread, and only when there is none is it refused.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::server {

class ConnectionPool {
 public:
  // `start_thread` starts a thread running the function (std::thread by
  // default); tests inject one that fails.
  using ThreadStarter = std::function<std::thread(std::function<void()>)>;
  explicit ConnectionPool(size_t max_threads, ThreadStarter start_thread = {});
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;
  ~ConnectionPool();

  // Queues `fn` for a worker. False (fn dropped) when shutting down or when
  // no worker runs and none could be started.
  bool try_enqueue(std::function<void()> fn);
  // Runs every queued job, then joins the threads.
  void shutdown();

  size_t threads() const;                       // started so far
  size_t busy() const { return busy_.load(); }  // jobs running
  size_t start_failures() const { return start_failures_.load(); }

 private:
  void work();

  const size_t max_threads_;
  const ThreadStarter start_thread_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool shutdown_ = false;
  std::atomic<size_t> busy_{0};
  std::atomic<size_t> start_failures_{0};
};

}  // namespace tessera::server

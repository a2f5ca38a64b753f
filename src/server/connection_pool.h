// The connection threads of the HTTP server: a cpp-httplib TaskQueue that
// starts a thread whenever a connection arrives and none is idle, up to a cap.
// cpp-httplib serves a connection on one thread for as long as it is kept
// alive, so a fixed pool smaller than the client's connection count would
// leave connections waiting unserved (no 429, just silence). Threads are kept
// for reuse once started; the cap bounds their memory.
#pragma once

#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::server {

// final: the destructor calls shutdown(), which no subclass may change.
class ConnectionPool final : public httplib::TaskQueue {
 public:
  explicit ConnectionPool(size_t max_threads);
  ~ConnectionPool() override;

  void enqueue(std::function<void()> fn) override;
  // Runs every queued connection, then joins the threads.
  void shutdown() override;

  size_t threads() const;           // started so far
  size_t busy() const { return busy_.load(); }  // connections being served

 private:
  void work();

  const size_t max_threads_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool shutdown_ = false;
  std::atomic<size_t> busy_{0};
};

}  // namespace tessera::server

// SIGINT / SIGTERM handling without async-signal-safety traps: the signals
// are blocked in every thread and a dedicated thread receives them with
// sigtimedwait, then calls an ordinary function.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace tessera {

class SignalWatcher {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread. Call it before any other
  // thread starts, so that every thread inherits the mask.
  static void block_stop_signals();

  // Calls on_signal(signo) on the watcher thread for each SIGINT / SIGTERM
  // until destroyed.
  explicit SignalWatcher(std::function<void(int)> on_signal);
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;
  ~SignalWatcher();

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace tessera

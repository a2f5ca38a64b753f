#include "runtime/signal_watcher.h"

#include <pthread.h>
#include <signal.h>

#include <ctime>

namespace tessera {

namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// How often the watcher looks at done_ between signals.
constexpr long kPollNanoseconds = 100'000'000;

}  // namespace

void SignalWatcher::block_stop_signals() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

SignalWatcher::SignalWatcher(std::function<void(int)> on_signal) {
  thread_ = std::thread([this, on_signal = std::move(on_signal)] {
    const sigset_t set = stop_signals();
    const timespec poll{0, kPollNanoseconds};
    while (!done_.load()) {
      const int signo = sigtimedwait(&set, nullptr, &poll);
      if (signo > 0) on_signal(signo);
    }
  });
}

SignalWatcher::~SignalWatcher() {
  done_.store(true);
  thread_.join();
}

}  // namespace tessera

// The temporary files a job must not leave behind when SIGTERM or SIGINT
// ends it: AtomicFile's unfinished outputs ("OUTPUT.tmp-PID") and a
// checkpoint being replaced. They are registered while they exist; the CLI's
// stop-signal handling calls remove_all_and_exit() (on an ordinary thread,
// not in a signal handler: see runtime/signal_watcher.h).
//
// One lock orders the two sides. A writer holds it across creating and
// registering a file, and across renaming or removing it and forgetting it;
// remove_all_and_exit() takes it and never gives it back (the process ends
// holding it). So no file is created after the cleanup ran, and none the
// cleanup missed is left. Resumable outputs (".partial") are not registered:
// they are meant to outlive the process.
#pragma once

#include <mutex>
#include <string>

namespace tessera::pipeline::temp_files {

// Held while a file is created and added, or renamed / removed and forgotten.
[[nodiscard]] std::unique_lock<std::mutex> hold();

// Both need hold()'s lock.
void add(const std::string& path);
void forget(const std::string& path);

// Removes every registered file and ends the process with `exit_code`
// without running destructors or atexit handlers (other threads still run
// the job). Waits for a writer holding the lock.
[[noreturn]] void remove_all_and_exit(int exit_code);

}  // namespace tessera::pipeline::temp_files

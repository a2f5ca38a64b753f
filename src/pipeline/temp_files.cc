#include "pipeline/temp_files.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

namespace tessera::pipeline::temp_files {

namespace {

struct Registry {
  std::mutex mu;
  std::vector<std::string> paths;
};

// Never destroyed: a signal may end the process while static destructors
// run on the main thread.
Registry& registry() {
  static auto* r = new Registry();
  return *r;
}

}  // namespace

std::unique_lock<std::mutex> hold() { return std::unique_lock<std::mutex>(registry().mu); }

void add(const std::string& path) { registry().paths.push_back(path); }

void forget(const std::string& path) {
  auto& paths = registry().paths;
  const auto it = std::find(paths.begin(), paths.end(), path);
  if (it != paths.end()) paths.erase(it);
}

void remove_all_and_exit(int exit_code) {
  registry().mu.lock();  // kept: nothing may create a file after this
  for (const std::string& path : registry().paths) ::unlink(path.c_str());
  ::_exit(exit_code);
}

}  // namespace tessera::pipeline::temp_files

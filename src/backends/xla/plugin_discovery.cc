#include "xla/plugin_discovery.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "runtime/build_tree.h"

namespace tessera::xla {

namespace fs = std::filesystem;

std::vector<std::string> site_packages_of(const std::string& env_root) {
  std::vector<std::string> found;
  std::error_code ec;
  const fs::path lib = fs::path(env_root) / "lib";
  for (fs::directory_iterator it(lib, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("python3", 0) != 0) continue;
    const fs::path site = it->path() / "site-packages";
    if (fs::is_directory(site, ec)) found.push_back(site.string());
  }
  std::sort(found.begin(), found.end());  // deterministic when several exist
  return found;
}

Status find_pjrt_plugin(std::string* path) {
  if (const char* explicit_path = std::getenv(kPluginEnv);
      explicit_path != nullptr && *explicit_path != '\0') {
    // An explicit choice is never second-guessed by discovery.
    *path = explicit_path;
    return Status::Ok();
  }
  std::vector<std::string> roots;
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv != nullptr && *venv != '\0') {
    roots.emplace_back(venv);
  }
  // The project's own .venv, as install-deps.sh fills it: a build-tree
  // binary's last resort, never an installed copy's.
  if (std::string venv = checkout_path(".venv"); !venv.empty()) roots.push_back(std::move(venv));
  std::string searched;
  for (const std::string& root : roots) {
    for (const std::string& site : site_packages_of(root)) {
      searched += (searched.empty() ? "" : ", ") + site;
      for (const char* relative : kKnownPlugins) {
        std::error_code ec;
        const fs::path candidate = fs::path(site) / relative;
        if (fs::is_regular_file(candidate, ec)) {
          *path = candidate.string();
          return Status::Ok();
        }
      }
    }
  }
  return not_found(std::string("no PJRT plugin: set ") + kPluginEnv +
                   " (or --pjrt-plugin PATH), or install one (scripts/install-deps.sh installs "
                   "the CPU plugin xla-cpu-pjrt); searched site-packages: " +
                   (searched.empty() ? "none found" : searched));
}

}  // namespace tessera::xla

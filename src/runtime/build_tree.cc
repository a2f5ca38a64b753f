#include "runtime/build_tree.h"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>
#include <system_error>

#ifndef TESSERA_SOURCE_DIR
#error "TESSERA_SOURCE_DIR and TESSERA_BINARY_DIR must be defined by the build"
#endif

namespace tessera {

namespace {

namespace fs = std::filesystem;

const char kHere = 0;  // an address inside the file this code was linked into

// The executable or shared library holding this code, as a canonical path
// ("" if the loader cannot say).
fs::path this_module() {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(&kHere, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0 ||
      map == nullptr) {
    return {};
  }
  std::error_code ec;
  // The main program's link map has no name: the kernel knows its file.
  const fs::path file = map->l_name != nullptr && map->l_name[0] != '\0'
                            ? fs::path(map->l_name)
                            : fs::read_symlink("/proc/self/exe", ec);
  if (ec || file.empty()) return {};
  fs::path canonical = fs::weakly_canonical(file, ec);
  return ec ? fs::path() : canonical;
}

bool under(const fs::path& file, const fs::path& dir) {
  if (file.empty() || dir.empty()) return false;
  auto f = file.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++f) {
    if (d->empty()) continue;  // a trailing separator
    if (f == file.end() || *f != *d) return false;
  }
  return true;
}

}  // namespace

bool running_from_build_tree() {
  static const bool in_tree = [] {
    std::error_code ec;
    const fs::path build = fs::weakly_canonical(TESSERA_BINARY_DIR, ec);
    return !ec && fs::is_directory(build, ec) && under(this_module(), build);
  }();
  return in_tree;
}

std::string checkout_path(const std::string& relative) {
  if (!running_from_build_tree()) return "";
  return (fs::path(TESSERA_SOURCE_DIR) / relative).string();
}

}  // namespace tessera

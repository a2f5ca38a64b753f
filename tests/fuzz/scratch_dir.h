// A scratch directory for fuzz targets whose parser reads files by path:
// created once per process under $TMPDIR (or /tmp), removed at exit. Each
// input is written over the previous one, so a run touches a few files only.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace tessera::fuzz {

class ScratchDir {
 public:
  static ScratchDir& get() {
    static ScratchDir dir;
    return dir;
  }
  const std::string& path() const { return path_; }

  // Writes `bytes` to path()/name (creating parent folders); returns the path.
  std::string write(const std::string& name, std::string_view bytes) {
    const std::filesystem::path p = std::filesystem::path(path_) / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) std::abort();  // the harness itself failed, not the code under test
    return p.string();
  }
  void remove(const std::string& name) {
    std::error_code ec;
    std::filesystem::remove(std::filesystem::path(path_) / name, ec);
  }

 private:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tessera-fuzz-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path_;
};

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace tessera::fuzz

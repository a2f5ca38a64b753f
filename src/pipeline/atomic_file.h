// AtomicFile: writes go to "<path>.tmp-<pid>" beside the target, and commit()
// renames it into place, so a fatal error never leaves a partial output. An
// uncommitted file is removed when the object dies.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "tessera/status.h"

namespace tessera::pipeline {

class AtomicFile {
 public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  Status open(const std::string& path);
  FILE* file() const { return file_; }
  Status write(std::string_view bytes);
  // Flushes, closes and renames; an error (disk full...) names the path.
  Status commit();
  const std::string& path() const { return path_; }

 private:
  void discard();

  std::string path_;
  std::string temp_path_;
  FILE* file_ = nullptr;
};

}  // namespace tessera::pipeline

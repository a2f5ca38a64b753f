#include "pipeline/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tessera::pipeline {

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
  std::remove(temp_path_.c_str());
}

Status AtomicFile::open(const std::string& path) {
  discard();
  path_ = path;
  temp_path_ = path + ".tmp-" + std::to_string(::getpid());
  file_ = std::fopen(temp_path_.c_str(), "wb");
  if (file_ == nullptr) {
    return not_found("cannot write " + temp_path_ + " (for " + path + "): " + std::strerror(errno));
  }
  return Status::Ok();
}

Status AtomicFile::write(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    return internal_error("writing " + temp_path_ + " failed: " + std::strerror(errno));
  }
  return Status::Ok();
}

Status AtomicFile::commit() {
  if (file_ == nullptr) return internal_error(path_ + ": commit without an open file");
  const bool write_failed = std::fflush(file_) != 0 || std::ferror(file_) != 0;
  const int saved_errno = errno;
  if (write_failed) {
    discard();
    return internal_error("writing " + path_ + " failed: " + std::strerror(saved_errno));
  }
  if (std::fclose(file_) != 0) {
    file_ = nullptr;
    std::remove(temp_path_.c_str());
    return internal_error("closing " + path_ + " failed: " + std::strerror(errno));
  }
  file_ = nullptr;
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temp_path_.c_str());
    return internal_error("cannot rename " + temp_path_ + " to " + path_ + ": " + why);
  }
  return Status::Ok();
}

}  // namespace tessera::pipeline

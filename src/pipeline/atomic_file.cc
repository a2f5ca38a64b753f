#include "pipeline/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "pipeline/temp_files.h"

namespace tessera::pipeline {

namespace {

std::string errno_text() { return std::strerror(errno); }

}  // namespace

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  file_ = nullptr;
  remove_temp();
}

void AtomicFile::remove_temp() {
  if (resumable_) return;
  const auto lock = temp_files::hold();
  std::remove(temp_path_.c_str());
  temp_files::forget(temp_path_);
}

Status AtomicFile::open(const std::string& path) {
  discard();
  path_ = path;
  temp_path_ = path + ".tmp-" + std::to_string(::getpid());
  resumable_ = false;
  // Registered before it exists, under the lock: a SIGTERM cleanup either
  // runs before the file is made (and the process ends) or removes it.
  const auto lock = temp_files::hold();
  temp_files::add(temp_path_);
  file_ = std::fopen(temp_path_.c_str(), "wb");
  if (file_ == nullptr) {
    temp_files::forget(temp_path_);
    return not_found("cannot write " + temp_path_ + " (for " + path + "): " + errno_text());
  }
  return Status::Ok();
}

Status AtomicFile::open_resumable(const std::string& path, int64_t keep_bytes) {
  discard();
  path_ = path;
  temp_path_ = partial_path(path);
  resumable_ = true;
  if (keep_bytes <= 0) {
    file_ = std::fopen(temp_path_.c_str(), "wb");
    if (file_ == nullptr) {
      return not_found("cannot write " + temp_path_ + " (for " + path + "): " + errno_text());
    }
    return Status::Ok();
  }
  struct stat st {};
  if (::stat(temp_path_.c_str(), &st) != 0) {
    return not_found("cannot continue: " + temp_path_ + ": " + errno_text() +
                     " (the checkpoint recorded " + std::to_string(keep_bytes) + " bytes in it)");
  }
  if (st.st_size < keep_bytes) {
    return {StatusCode::kInvalidArgument,
            "resume: cannot continue: " + temp_path_ + " has " + std::to_string(st.st_size) +
                " bytes but the checkpoint recorded " + std::to_string(keep_bytes) +
                " committed bytes (the file was cut or replaced); start over without it",
            "resume"};
  }
  // Bytes past the checkpoint were written after its last commit: a torn tail.
  if (st.st_size > keep_bytes && ::truncate(temp_path_.c_str(), keep_bytes) != 0) {
    return internal_error("cannot cut " + temp_path_ + " to " + std::to_string(keep_bytes) +
                          " bytes: " + errno_text());
  }
  // "r+b", not "ab": the .npy header is rewritten at offset 0.
  file_ = std::fopen(temp_path_.c_str(), "r+b");
  if (file_ == nullptr || std::fseek(file_, 0, SEEK_END) != 0) {
    discard();
    return not_found("cannot reopen " + temp_path_ + ": " + errno_text());
  }
  return Status::Ok();
}

Status AtomicFile::write(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    return internal_error("writing " + temp_path_ + " failed: " + errno_text());
  }
  return Status::Ok();
}

Status AtomicFile::write_at(int64_t offset, std::string_view bytes) {
  if (std::fseek(file_, offset, SEEK_SET) != 0) {
    return internal_error("seeking in " + temp_path_ + " failed: " + errno_text());
  }
  TESSERA_RETURN_IF_ERROR(write(bytes));
  if (std::fseek(file_, 0, SEEK_END) != 0) {
    return internal_error("seeking in " + temp_path_ + " failed: " + errno_text());
  }
  return Status::Ok();
}

Status AtomicFile::sync(int64_t* bytes) {
  if (file_ == nullptr) return internal_error(path_ + ": sync without an open file");
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) {
    return internal_error("writing " + temp_path_ + " failed: " + errno_text());
  }
  const long end = std::ftell(file_);
  if (end < 0) return internal_error("ftell on " + temp_path_ + " failed: " + errno_text());
  *bytes = end;
  return Status::Ok();
}

Status AtomicFile::commit() {
  if (file_ == nullptr) return internal_error(path_ + ": commit without an open file");
  bool write_failed = std::fflush(file_) != 0 || std::ferror(file_) != 0;
  if (!write_failed && resumable_) write_failed = ::fsync(::fileno(file_)) != 0;
  const int saved_errno = errno;
  if (write_failed) {
    discard();
    return internal_error("writing " + path_ + " failed: " + std::strerror(saved_errno));
  }
  if (std::fclose(file_) != 0) {
    file_ = nullptr;
    const std::string why = errno_text();
    remove_temp();
    return internal_error("closing " + path_ + " failed: " + why);
  }
  file_ = nullptr;
  std::string why;
  {
    const auto lock = temp_files::hold();
    if (std::rename(temp_path_.c_str(), path_.c_str()) == 0) {
      temp_files::forget(temp_path_);
      return Status::Ok();
    }
    why = errno_text();
  }
  remove_temp();
  return internal_error("cannot rename " + temp_path_ + " to " + path_ + ": " + why);
}

Status sync_parent_directory(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return internal_error("cannot open directory " + dir + ": " + errno_text());
  const bool ok = ::fsync(fd) == 0;
  const std::string why = ok ? "" : errno_text();
  ::close(fd);
  if (!ok) return internal_error("fsync of directory " + dir + " failed: " + why);
  return Status::Ok();
}

}  // namespace tessera::pipeline

#include "runtime/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <istream>
#include <utility>

#include "runtime/bounded_read.h"
#include "runtime/fd_streambuf.h"

namespace tessera {

namespace {

const char* describe_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

int UniqueFd::release() { return std::exchange(fd_, -1); }

Status open_regular_file(const std::string& path, UniqueFd* fd, uint64_t* size) {
  // O_NONBLOCK: opening a FIFO for reading returns at once instead of
  // waiting for a writer; fstat then refuses it. Reads of a regular file
  // ignore the flag.
  UniqueFd opened(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (opened.get() < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return not_found(std::string("cannot open (missing file? ") + std::strerror(err) + ")");
    }
    return invalid_argument(std::string("cannot open: ") + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(opened.get(), &st) != 0) {
    return invalid_argument(std::string("cannot stat: ") + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return invalid_argument(std::string("is ") + describe_type(st.st_mode) +
                            ", not a regular file");
  }
  *size = static_cast<uint64_t>(st.st_size);
  *fd = std::move(opened);
  return Status::Ok();
}

Status read_file_within(const std::string& path, uint64_t max_bytes, std::string* out) {
  UniqueFd fd;
  uint64_t size = 0;
  TESSERA_RETURN_IF_ERROR(open_regular_file(path, &fd, &size));
  const std::string limit = "over the limit of " + std::to_string(max_bytes) + " bytes";
  if (size > max_bytes) return invalid_argument("is " + std::to_string(size) + " bytes, " + limit);
  FdStreambuf buffer(std::move(fd));
  std::istream in(&buffer);
  out->reserve(static_cast<size_t>(size) + 1);
  bool truncated = false;
  // Bounded although the size was checked: the file may have grown since.
  read_all_bounded(in, max_bytes, out, &truncated);
  if (buffer.error() != 0) {
    return invalid_argument(std::string("read failed: ") + std::strerror(buffer.error()));
  }
  if (truncated) return invalid_argument("grew while being read to " + limit);
  return Status::Ok();
}

Status read_regular_file(const std::string& path, uint64_t max_bytes, std::string* out) {
  Status s = read_file_within(path, max_bytes, out);
  return s.ok() ? s : Status(s.code(), path + ": " + s.message());
}

}  // namespace tessera

// Opening the files tessera reads as data (model files, input documents,
// tuning tables, .npy inputs) so that a path naming something else cannot
// hang or flood the process: open() of a FIFO waits for a writer forever, and
// a character device (/dev/zero) never ends. The file is opened non-blocking
// and checked with fstat before a byte is read, so whatever is not a regular
// file is refused by name, and a check cannot race a swap of the path.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/status.h"

namespace tessera {

// An open file descriptor, closed when this dies.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  int release();

 private:
  int fd_ = -1;
};

// Opens `path` for reading and checks that it is a regular file; *size gets
// its length. NotFound when it does not exist, else InvalidArgument saying
// what it is ("is a FIFO (named pipe), not a regular file") or why it cannot
// be opened. The message leaves the path out: callers name the file their way
// ("PATH: ...", or a skipped document's origin).
Status open_regular_file(const std::string& path, UniqueFd* fd, uint64_t* size);

// The whole of the regular file at `path` (open_regular_file) into *out, read
// in bounded pieces, refused when it holds more than `max_bytes` ("is N
// bytes, over the limit of M bytes"). Like open_regular_file's, the message
// leaves the path out.
Status read_file_within(const std::string& path, uint64_t max_bytes, std::string* out);

// read_file_within with the path in front of an error message:
// "PATH: is a FIFO (named pipe), not a regular file".
Status read_regular_file(const std::string& path, uint64_t max_bytes, std::string* out);

}  // namespace tessera

// FdStreambuf: a std::streambuf over a file descriptor it owns, so a file
// opened and checked by open_regular_file (runtime/regular_file.h) is read as
// a std::istream, like stdin, by the same bounded readers (bounded_read.h).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <streambuf>
#include <utility>

#include "runtime/regular_file.h"

namespace tessera {

class FdStreambuf : public std::streambuf {
 public:
  explicit FdStreambuf(UniqueFd fd) : fd_(std::move(fd)) {}
  // The errno of a failed read (0: none); the stream then reads as ended.
  int error() const { return error_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    ssize_t got = 0;
    do {
      got = ::read(fd_.get(), buffer_, sizeof buffer_);
    } while (got < 0 && errno == EINTR);
    if (got < 0) error_ = errno;
    if (got <= 0) return traits_type::eof();
    setg(buffer_, buffer_, buffer_ + got);
    return traits_type::to_int_type(*gptr());
  }
  // Seeking (the .npy reader measures what is left) drops the buffer; a
  // position relative to the current one counts the bytes not yet taken.
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    int whence = SEEK_SET;
    if (dir == std::ios_base::cur) {
      whence = SEEK_CUR;
      off -= egptr() - gptr();
    } else if (dir == std::ios_base::end) {
      whence = SEEK_END;
    }
    setg(buffer_, buffer_, buffer_);
    const off_t at = ::lseek(fd_.get(), static_cast<off_t>(off), whence);
    return at < 0 ? pos_type(off_type(-1)) : pos_type(static_cast<off_type>(at));
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
    return seekoff(off_type(pos), std::ios_base::beg, which);
  }

 private:
  static constexpr size_t kBufferBytes = size_t{64} << 10;
  UniqueFd fd_;
  int error_ = 0;
  char buffer_[kBufferBytes];
};

}  // namespace tessera

#include "npy.h"

#include <cstring>
#include <utility>

#include "npy_header.h"
#include "runtime/bounded_text.h"
#include "runtime/fd_streambuf.h"
#include "runtime/npy_writer.h"
#include "runtime/regular_file.h"

namespace tessera::cli {

namespace {
constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kVersionLen = 2;

size_t element_size(const std::string& descr) {
  if (descr == "<f4") return 4;
  if (descr == "<f2" || descr == "<u2") return 2;
  return 0;
}

// Bytes from the stream's position to its end, or -1 when it cannot seek.
int64_t bytes_left(std::istream& in) {
  const std::streampos here = in.tellg();
  if (here == std::streampos(-1) || !in.seekg(0, std::ios::end)) return -1;
  const std::streampos end = in.tellg();
  in.seekg(here);
  if (end == std::streampos(-1) || !in) return -1;
  return static_cast<int64_t>(end - here);
}
}  // namespace

int64_t NpyArray::numel() const { return checked_numel(shape); }

Status read_npy(const std::string& path, NpyArray* out) {
  UniqueFd fd;
  uint64_t size = 0;
  if (Status s = open_regular_file(path, &fd, &size); !s.ok()) {
    return Status(s.code(), path + ": " + s.message());
  }
  FdStreambuf buffer(std::move(fd));
  std::istream in(&buffer);
  return read_npy(in, path, out);
}

Status read_npy(std::istream& in, const std::string& name, NpyArray* out) {
  char magic[kMagicLen + kVersionLen];
  if (!in.read(magic, sizeof magic) || std::memcmp(magic, kMagic, kMagicLen) != 0) {
    return invalid_argument(name + ": not a .npy file (bad magic)");
  }
  const int major = static_cast<unsigned char>(magic[kMagicLen]);
  if (major < 1 || major > 3) {
    return invalid_argument(name + ": unsupported .npy version " + std::to_string(major) +
                            " (1, 2 and 3 are)");
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  unsigned char len[4] = {};
  if (!in.read(reinterpret_cast<char*>(len), static_cast<std::streamsize>(len_bytes))) {
    return invalid_argument(name + ": truncated header length");
  }
  size_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i) header_len |= static_cast<size_t>(len[i]) << (8 * i);
  const int64_t left = bytes_left(in);
  if (left < 0) return invalid_argument(name + ": cannot seek (a .npy must be a regular file)");
  if (header_len > kNpyMaxHeaderBytes || header_len > static_cast<uint64_t>(left)) {
    return invalid_argument(name + ": header length " + std::to_string(header_len) +
                            " bytes exceeds " +
                            (header_len > static_cast<uint64_t>(left)
                                 ? "the " + std::to_string(left) + " bytes left in the file"
                                 : "the limit of " + std::to_string(kNpyMaxHeaderBytes)));
  }
  std::string header(header_len, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(header_len))) {
    return invalid_argument(name + ": truncated header");
  }
  NpyHeader h;
  TESSERA_RETURN_IF_ERROR(parse_npy_header(header, name, &h));
  const size_t esize = element_size(h.descr);
  if (esize == 0) {
    return invalid_argument(name + ": 'descr' = " + quote_bounded(h.descr) +
                            " is not supported (use float32 '<f4', float16 '<f2', or uint16 "
                            "'<u2' for bf16 bits)");
  }
  if (h.fortran_order) {
    return invalid_argument(name +
                            ": fortran_order arrays not supported (use np.ascontiguousarray)");
  }
  const int64_t data_left = left - static_cast<int64_t>(header_len);
  // numel <= INT64_MAX (parse_npy_header); the byte count is checked as well.
  uint64_t bytes = 0;
  const bool overflow = __builtin_mul_overflow(static_cast<uint64_t>(checked_numel(h.shape)),
                                               static_cast<uint64_t>(esize), &bytes);
  if (overflow || bytes != static_cast<uint64_t>(data_left)) {
    return invalid_argument(name + ": shape " + npy::shape_text(h.shape) + " of '" + h.descr +
                            "' needs " + (overflow ? "more than 2^64" : std::to_string(bytes)) +
                            " bytes of data but the file has " + std::to_string(data_left) +
                            (bytes > static_cast<uint64_t>(data_left) ? " (truncated?)" : ""));
  }
  out->descr = std::move(h.descr);
  out->shape = std::move(h.shape);
  out->bytes.resize(bytes);
  if (!in.read(reinterpret_cast<char*>(out->bytes.data()), static_cast<std::streamsize>(bytes))) {
    return invalid_argument(name + ": read of " + std::to_string(bytes) + " bytes of data failed");
  }
  return Status::Ok();
}

Status write_npy(const std::string& path, const NpyArray& a) {
  const size_t esize = element_size(a.descr);
  if (esize == 0) {
    return invalid_argument(path + ": cannot write dtype " + quote_bounded(a.descr));
  }
  const int64_t numel = a.numel();
  uint64_t bytes = 0;
  if (numel < 0 || __builtin_mul_overflow(static_cast<uint64_t>(numel), esize, &bytes) ||
      bytes != a.bytes.size()) {
    return internal_error(path + ": shape " + npy::shape_text(a.shape) + " of '" + a.descr +
                          "' does not match the " + std::to_string(a.bytes.size()) +
                          " bytes given");
  }
  return npy::write_file(
      path, a.descr, a.shape,
      std::string_view(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size()));
}

}  // namespace tessera::cli

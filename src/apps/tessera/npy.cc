#include "npy.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace tessera::cli {

namespace {
constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kMaxHeader = 1 << 20;

size_t element_size(const std::string& descr) {
  if (descr == "<f4") return 4;
  if (descr == "<f2" || descr == "<u2") return 2;
  return 0;
}
}  // namespace

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Status read_npy(const std::string& path, NpyArray* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found(path + ": cannot open");
  char magic[kMagicLen + 2];
  if (!f.read(magic, sizeof magic) || std::memcmp(magic, kMagic, kMagicLen) != 0) {
    return invalid_argument(path + ": not a .npy file (bad magic)");
  }
  const int major = static_cast<unsigned char>(magic[kMagicLen]);
  size_t header_len = 0;
  if (major == 1) {
    unsigned char len[2];
    if (!f.read(reinterpret_cast<char*>(len), 2))
      return invalid_argument(path + ": truncated header");
    header_len = len[0] | (len[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char len[4];
    if (!f.read(reinterpret_cast<char*>(len), 4))
      return invalid_argument(path + ": truncated header");
    header_len = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<size_t>(len[3]) << 24);
  } else {
    return invalid_argument(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (header_len > kMaxHeader) return invalid_argument(path + ": header length too large");
  std::string header(header_len, '\0');
  if (!f.read(header.data(), static_cast<std::streamsize>(header_len))) {
    return invalid_argument(path + ": truncated header");
  }
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')"))) {
    return invalid_argument(path + ": header has no 'descr'");
  }
  out->descr = m[1];
  if (element_size(out->descr) == 0) {
    return invalid_argument(path + ": dtype '" + out->descr +
                            "' not supported (use float32, float16, or uint16 for bf16 bits)");
  }
  if (std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*True)"))) {
    return invalid_argument(path +
                            ": fortran_order arrays not supported (use np.ascontiguousarray)");
  }
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))"))) {
    return invalid_argument(path + ": header has no 'shape'");
  }
  out->shape.clear();
  std::stringstream dims(m[1].str());
  std::string dim;
  while (std::getline(dims, dim, ',')) {
    if (dim.find_first_not_of(" ") == std::string::npos) continue;
    out->shape.push_back(std::stoll(dim));
  }
  const size_t bytes = static_cast<size_t>(out->numel()) * element_size(out->descr);
  out->bytes.resize(bytes);
  if (!f.read(reinterpret_cast<char*>(out->bytes.data()), static_cast<std::streamsize>(bytes))) {
    return invalid_argument(path + ": data shorter than shape " + m[1].str() + " needs (" +
                            std::to_string(bytes) + " bytes)");
  }
  return Status::Ok();
}

Status write_npy(const std::string& path, const NpyArray& a) {
  std::string shape;
  for (int64_t d : a.shape) shape += std::to_string(d) + ",";  // "(5,)", "(2,3,)": valid tuples
  std::string header =
      "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Pad so the data starts on a 64-byte boundary, newline-terminated.
  const size_t prefix = kMagicLen + 2 + 2;
  header.append(64 - (prefix + header.size() + 1) % 64, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  if (!f) return not_found(path + ": cannot write");
  f.write(kMagic, kMagicLen);
  const char version[2] = {1, 0};
  f.write(version, 2);
  const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                static_cast<unsigned char>(header.size() >> 8)};
  f.write(reinterpret_cast<const char*>(len), 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(a.bytes.data()),
          static_cast<std::streamsize>(a.bytes.size()));
  if (!f) return internal_error(path + ": write failed");
  return Status::Ok();
}

}  // namespace tessera::cli

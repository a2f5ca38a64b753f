#include "runtime/npy_writer.h"

#include <fstream>

namespace tessera::npy {

namespace {

constexpr std::string_view kMagic("\x93NUMPY\x01\x00", 8);  // version 1.0
constexpr size_t kLengthBytes = 2;                          // version 1.0: uint16 LE
constexpr size_t kAlign = 64;                               // NumPy's ARRAY_ALIGN

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string_view descr_of(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "<f4";
    case DType::kF16:
      return "<f2";
    case DType::kBF16:
      return "<u2";
  }
  return "<u2";
}

Status header(std::string_view descr, const std::vector<int64_t>& shape, std::string* out,
              size_t fixed_bytes) {
  std::string dict = "{'descr': '" + std::string(descr) +
                     "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  const size_t prefix = kMagic.size() + kLengthBytes;
  // As NumPy's _wrap_header: 1 to 64 spaces, then the newline.
  const size_t total =
      fixed_bytes > 0 ? fixed_bytes
                      : prefix + dict.size() + 1 + (kAlign - (prefix + dict.size() + 1) % kAlign);
  if (prefix + dict.size() + 1 > total || total - prefix > 0xffff) {
    return internal_error(".npy header " + dict + " does not fit " + std::to_string(total) +
                          " bytes");
  }
  dict.resize(total - prefix - 1, ' ');
  dict.push_back('\n');
  out->assign(kMagic);
  out->push_back(static_cast<char>(dict.size() & 0xff));
  out->push_back(static_cast<char>(dict.size() >> 8));
  *out += dict;
  return Status::Ok();
}

Status write_file(const std::string& path, std::string_view descr,
                  const std::vector<int64_t>& shape, std::string_view data) {
  std::string head;
  if (Status s = header(descr, shape, &head); !s.ok()) {
    return internal_error(path + ": " + s.message());
  }
  std::ofstream f(path, std::ios::binary);
  if (!f) return not_found(path + ": cannot write");
  f.write(head.data(), static_cast<std::streamsize>(head.size()));
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  f.close();  // a full disk shows up when the buffer is flushed
  if (!f) return internal_error(path + ": write failed");
  return Status::Ok();
}

}  // namespace tessera::npy

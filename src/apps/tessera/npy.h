// Reading and writing NumPy .npy files (format versions 1-3, C order,
// little-endian f4 / f2 / u2), so attention cases can be reproduced from
// Python. A tiny, fully specified format: no library in Debian covers it.
// The reader trusts nothing in the file: the header is scanned by bounded
// code (npy_header.h) and the data's size is checked against the bytes left
// in the file before anything is allocated for it.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera::cli {

struct NpyArray {
  std::string descr;  // "<f4", "<f2", "<u2"
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // raw little-endian data, C order
  int64_t numel() const;       // -1 when the shape's product exceeds INT64_MAX
};

// Largest header accepted. NumPy writes a few dozen bytes; np.load refuses
// more than 10,000 by default.
inline constexpr size_t kNpyMaxHeaderBytes = 1 << 20;

Status read_npy(const std::string& path, NpyArray* out);
// The same from a seekable stream (an in-memory one in tests and fuzzing);
// `name` stands for the file in error messages.
Status read_npy(std::istream& in, const std::string& name, NpyArray* out);
// Checks the bytes against descr and shape, then writes through the one
// .npy writer (runtime/npy_writer.h).
Status write_npy(const std::string& path, const NpyArray& array);

}  // namespace tessera::cli

// Reading and writing NumPy .npy files (format versions 1-3, C order,
// little-endian f4 / f2 / u2), so attention cases can be reproduced from
// Python. A tiny, fully specified format: no library in Debian covers it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera::cli {

struct NpyArray {
  std::string descr;  // "<f4", "<f2", "<u2"
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // raw little-endian data, C order
  int64_t numel() const;
};

Status read_npy(const std::string& path, NpyArray* out);
Status write_npy(const std::string& path, const NpyArray& array);

}  // namespace tessera::cli

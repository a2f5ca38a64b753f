// Writing NumPy .npy files (format version 1.0, C order): the one writer of
// every .npy tessera makes, whole arrays (`tessera attention run`, the
// shadow observer's repro cases) and streamed rows (`tessera embed`, whose
// header is written first and rewritten in place once the rows are counted).
// Reading is the CLI's (src/apps/tessera/npy.h): only it takes .npy input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/dtype.h"
#include "tessera/status.h"

namespace tessera::npy {

// A shape as a Python tuple: "(2, 3)", "(5,)", "()".
std::string shape_text(const std::vector<int64_t>& shape);

// The dtype a tensor is stored as: '<f4', '<f2', and bf16 as its bits, '<u2'
// (NumPy has no bfloat16).
std::string_view descr_of(DType dtype);

// Everything before the data: the magic, version 1.0, the header length and
// {'descr': DESCR, 'fortran_order': False, 'shape': SHAPE, } padded with
// spaces and a newline as NumPy pads it (the data starts on a 64-byte
// boundary), or, when `fixed_bytes` > 0, to exactly `fixed_bytes`, so a
// header rewritten with another shape keeps its size. An error when the
// header does not fit.
Status header(std::string_view descr, const std::vector<int64_t>& shape, std::string* out,
              size_t fixed_bytes = 0);

// A whole array: the header, then `data` (the C-order bytes of `shape`).
Status write_file(const std::string& path, std::string_view descr,
                  const std::vector<int64_t>& shape, std::string_view data);

}  // namespace tessera::npy

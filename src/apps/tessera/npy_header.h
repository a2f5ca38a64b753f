// The header of a NumPy .npy file: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// parsed by a small hand-written scanner: one pass, no recursion, no
// allocation beyond the values kept, every number range-checked. (std::regex
// recursed once per character and overflowed the stack on long headers.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/status.h"

namespace tessera::cli {

struct NpyHeader {
  std::string descr;  // as written: "<f4", "|u1", ...
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// The most dimensions accepted (NumPy 1.x's NPY_MAXDIMS).
inline constexpr size_t kNpyMaxRank = 32;

// Parses `text` (the header after the length field, padding included). Each
// key 'descr', 'fortran_order' and 'shape' must appear exactly once and no
// other key may; every dim is a decimal integer in [0, INT64_MAX] and the
// product of the non-zero dims fits in int64. Errors name `file`, the field
// and the offending value (cut to a few dozen bytes).
Status parse_npy_header(std::string_view text, const std::string& file, NpyHeader* out);

// Number of elements of `shape`, or -1 when the product exceeds INT64_MAX.
int64_t checked_numel(const std::vector<int64_t>& shape);

}  // namespace tessera::cli

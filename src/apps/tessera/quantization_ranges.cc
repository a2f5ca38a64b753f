#include "quantization_ranges.h"

#include <cmath>
#include <cstring>

#include "npy.h"
#include "npy_header.h"
#include "runtime/npy_writer.h"

namespace tessera::cli {

Status read_quantization_ranges(const std::string& path, const std::string& flag,
                                std::vector<float>* ranges, int64_t* dims) {
  NpyArray a;
  if (Status s = read_npy(path, &a); !s.ok()) return invalid_argument(flag + ": " + s.message());
  const std::string what = flag + " " + path;
  if (a.descr != "<f4") {
    return invalid_argument(what + ": dtype " + a.descr +
                            ", expected float32 ('<f4'); save it with .astype('float32')");
  }
  if (a.shape.size() != 2 || a.shape[0] != 2 || a.shape[1] < 1) {
    return invalid_argument(what + ": shape " + npy::shape_text(a.shape) +
                            ", expected (2, dims): per-dimension min (row 0) and max (row 1)");
  }
  *dims = a.shape[1];
  ranges->resize(static_cast<size_t>(2 * *dims));
  std::memcpy(ranges->data(), a.bytes.data(), ranges->size() * sizeof(float));
  for (int64_t d = 0; d < *dims; ++d) {
    const float lo = (*ranges)[d];
    const float hi = (*ranges)[*dims + d];
    if (!std::isfinite(lo) || !std::isfinite(hi) || hi < lo) {
      return invalid_argument(what + ": dimension " + std::to_string(d) + " has min " +
                              std::to_string(lo) + " and max " + std::to_string(hi) +
                              " (both must be finite, min <= max)");
    }
  }
  return Status::Ok();
}

}  // namespace tessera::cli

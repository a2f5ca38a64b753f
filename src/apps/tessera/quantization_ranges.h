// --quantization-ranges FILE (tessera embed, tessera serve): the int8 /
// uint8 ranges of include/tessera/quantize.h as a float32 .npy of shape
// (2, dims), row 0 the per-dimension minimum and row 1 the maximum, as
// sentence-transformers' quantize_embeddings(ranges=...) takes them. Made
// from calibration embeddings with numpy:
//   np.save("ranges.npy", np.vstack((emb.min(0), emb.max(0))).astype("float32"))
// or tessera.quantization_ranges(emb) in Python.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera::cli {

// Reads and checks the file (dtype, shape, finite, min <= max); the error
// names `flag` and the file. *dims receives the second dimension.
Status read_quantization_ranges(const std::string& path, const std::string& flag,
                                std::vector<float>* ranges, int64_t* dims);

}  // namespace tessera::cli

// What every front end does to embedding rows after the model, once:
// Matryoshka `dimensions` (keep the first N components, then L2-normalise)
// and quantization (include/tessera/quantize.h, implemented in
// embedding_output.cc).
#pragma once

#include <cstdint>
#include <string>

#include "tessera/status.h"

namespace tessera::pipeline {

// `dimensions` must be in [1, model_dim]; the error names `field` and the
// model's dimension. 0 is not accepted here: callers map "unset" to model_dim.
Status check_dimensions(int64_t dimensions, int model_dim, const std::string& field);

// n rows of `dim` floats -> n rows of their first `dims` floats, packed in
// place (row i at rows + i * dims), each L2-normalised when `renormalize`
// (a zero row stays zero). dims == dim with renormalize false changes nothing.
void shorten_rows(float* rows, int64_t n, int dim, int dims, bool renormalize);

// Whether n values are all finite: a row with a NaN or an infinity is never
// written (the pipeline reports its document, the server answers 500).
bool all_finite(const float* values, int64_t n);

}  // namespace tessera::pipeline

// What every embedding route does to a finished job's pooled rows, once,
// after the batcher: the request's dimensions (TEI's and OpenAI's
// `dimensions`, Cohere's `output_dimension`: keep the first N values and
// re-normalise, pipeline::shorten_rows) and L2 normalisation; and quantized
// output (include/tessera/quantize.h) with the server's
// --quantization-ranges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/routes.h"
#include "tessera/quantize.h"

namespace tessera::server {

struct RowShape {
  int dims = 0;           // values kept per row
  bool normalize = true;  // L2-normalised rows (the model's own, or asked for)
};

// `requested` (a request's dimensions, named `field`; empty: the model's
// dim) checked against the model: 422 naming it outside [1, dim].
ApiError resolve_row_shape(const RouteContext& rc, const std::optional<int64_t>& requested,
                           const std::string& field, bool normalize, RowShape* out);

// Shapes the job's rows in place: row i becomes shape.dims floats at
// job.rows() + i * shape.dims, L2-normalised when shape.normalize or the
// model normalises (a row the model normalised is left as it is at full
// size).
void shape_rows(const RouteContext& rc, EmbedJob& job, const RowShape& shape);

// int8 / uint8 need --quantization-ranges of `dims` dimensions: without
// them a 422 names `type_field` and the flag; with ranges of other
// dimensions it names `dims_field`. The other precisions need nothing.
ApiError check_quantization(const RouteContext& rc, Precision p, int dims,
                            const std::string& type_field, const std::string& dims_field);

// n rows of `dims` floats -> n x quantized_row_bytes(p, dims) bytes (int8
// values as their two's complement bytes). check_quantization first.
ApiError quantize_rows(const RouteContext& rc, const float* rows, int64_t n, int dims, Precision p,
                       std::vector<uint8_t>* out);

}  // namespace tessera::server

#include "server/embedding_rows.h"

#include "pipeline/embedding_output.h"

namespace tessera::server {

ApiError resolve_row_shape(const RouteContext& rc, const std::optional<int64_t>& requested,
                           const std::string& field, bool normalize, RowShape* out) {
  const int dim = rc.model.dim();
  out->dims = dim;
  out->normalize = normalize;
  if (!requested) return no_error();
  if (Status s = pipeline::check_dimensions(*requested, dim, field); !s.ok()) {
    return validation_error(field, s.message());
  }
  out->dims = static_cast<int>(*requested);
  return no_error();
}

void shape_rows(const RouteContext& rc, EmbedJob& job, const RowShape& shape) {
  const int dim = rc.model.dim();
  const bool model_normalizes = rc.model.normalized();
  // A shortened row is re-normalised when the full row was (sentence-
  // transformers' truncate_dim, TEI's dimensions); a full row only when
  // asked and the model has not done it.
  const bool renormalize = shape.dims != dim ? shape.normalize || model_normalizes
                                             : shape.normalize && !model_normalizes;
  if (shape.dims == dim && !renormalize) return;
  pipeline::shorten_rows(job.rows(), job.count(), dim, shape.dims, renormalize);
}

ApiError check_quantization(const RouteContext& rc, Precision p, int dims,
                            const std::string& type_field, const std::string& dims_field) {
  if (p != Precision::kInt8 && p != Precision::kUint8) return no_error();
  const ServerOptions& o = rc.options;
  if (o.quantization_ranges.empty()) {
    return validation_error(type_field, type_field + " = \"" + precision_name(p) +
                                            "\" needs calibration ranges: start the server with "
                                            "--quantization-ranges FILE.npy (binary, ubinary and "
                                            "float need none)");
  }
  if (o.quantization_dims != dims) {
    return validation_error(
        dims_field, dims_field + " = " + std::to_string(dims) + " but the server's " +
                        "--quantization-ranges hold " + std::to_string(o.quantization_dims) +
                        " dimensions: " + precision_name(p) + " output needs " + dims_field +
                        " = " + std::to_string(o.quantization_dims));
  }
  return no_error();
}

ApiError quantize_rows(const RouteContext& rc, const float* rows, int64_t n, int dims, Precision p,
                       std::vector<uint8_t>* out) {
  const Status s = quantize_embeddings(rows, n, dims, p, rc.options.quantization_ranges, out);
  if (!s.ok()) return {500, "Backend", "", "quantization failed: " + s.message()};
  return no_error();
}

}  // namespace tessera::server

// format_embedding_row: the public face of the pipeline's row formatter
// (src/pipeline/embedding_writer.h), which `tessera embed` writes with.
#include "tessera/embedding_rows.h"

#include <nlohmann/json.hpp>

#include "pipeline/embedding_writer.h"

namespace tessera {

Status format_embedding_row(const EmbeddingRowFields& row, Precision precision, const void* values,
                            int dims, std::string* out) {
  if (dims < 1) return invalid_argument("dims = " + std::to_string(dims) + " must be >= 1");
  const nlohmann::json id = nlohmann::json::parse(row.id_json, nullptr, /*allow_exceptions=*/false);
  if (!id.is_string() && !id.is_number()) {
    return invalid_argument("id_json = '" + row.id_json +
                            "' is not a JSON string or number (the document's id)");
  }
  pipeline::OutputRow fields;
  fields.id = &id;
  fields.chunk = row.chunk;
  fields.chunks = row.chunks;
  fields.begin = row.begin;
  fields.end = row.end;
  *out = precision == Precision::kFloat32
             ? pipeline::format_row(fields, static_cast<const float*>(values), dims)
             : pipeline::format_quantized_row(fields, precision,
                                              static_cast<const uint8_t*>(values), dims);
  return Status::Ok();
}

}  // namespace tessera

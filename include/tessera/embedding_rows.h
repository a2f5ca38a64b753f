// The JSONL rows `tessera embed` writes, formatted by the CLI's own writer,
// for front ends that write rows themselves (tessera.ray's actors, through
// the Python binding): one implementation, so their lines are the CLI's.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/quantize.h"
#include "tessera/status.h"

namespace tessera {

// One row's fields besides its values.
struct EmbeddingRowFields {
  std::string id_json;  // the document's id as JSON text: a string ("\"a\"") or a number ("7")
  int64_t chunk = 0;    // the chunk's index in its document (chunk rows)
  int64_t chunks = 0;   // > 0: a document row (--doc-embedding) averaging that many chunks
  int64_t begin = 0;    // [begin, end) in Unicode code points
  int64_t end = 0;
};

// The row as JSON text, without a newline:
//   {"id":ID,"chunk":K,"offsets":[B,E],"embedding":[...]}
// ("chunks":N for a document row). float32: `values` holds `dims` floats,
// written in their shortest round-trip form; another precision: its
// quantized_row_bytes(precision, dims) bytes, written as integers after
// "precision":"NAME". An id_json that is not one JSON string or number is
// refused, naming it.
Status format_embedding_row(const EmbeddingRowFields& row, Precision precision, const void* values,
                            int dims, std::string* out);

}  // namespace tessera

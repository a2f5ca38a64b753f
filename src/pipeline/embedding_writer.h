// Output of `tessera embed`, one row per chunk (or per document with
// --doc-embedding), in input order:
//   jsonl  {"id": <id>, "chunk": k, "offsets": [begin, end], "embedding": [...]}
//          document rows have "chunks": n instead of "chunk"; to stdout or a file
//   npy    a float32 [rows, dim] .npy file, plus an index JSONL beside it whose
//          line r describes row r: {"id", "chunk" | "chunks", "offsets", "row"}
// Offsets are Unicode code points [begin, end) into the original text.
// Files are written through AtomicFile: they appear only when finish() succeeds.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tessera/status.h"

namespace tessera::pipeline {

struct OutputRow {
  const nlohmann::json* id = nullptr;
  int64_t chunk = 0;   // chunk index in its document (chunk rows)
  int64_t chunks = 0;  // > 0 marks a document row: how many chunks it averages
  int64_t begin = 0;   // code points
  int64_t end = 0;
};

class EmbeddingWriter {
 public:
  virtual ~EmbeddingWriter() = default;
  // `embedding` holds dim floats.
  virtual Status write(const OutputRow& row, const float* embedding) = 0;
  // Completes the output (renames files into place, flushes stdout).
  virtual Status finish() = 0;
};

// path "" (or "-") writes to stdout.
Status make_jsonl_writer(const std::string& path, int dim, std::unique_ptr<EmbeddingWriter>* out);
Status make_npy_writer(const std::string& path, int dim, std::unique_ptr<EmbeddingWriter>* out);
// "emb.npy" -> "emb.index.jsonl"; other names get ".index.jsonl" appended.
std::string npy_index_path(const std::string& npy_path);

// The JSON text of one row (no newline); `embedding` null leaves it out and
// `row_number` >= 0 adds "row" (the npy index).
std::string format_row(const OutputRow& row, const float* embedding, int dim,
                       int64_t row_number = -1);

}  // namespace tessera::pipeline

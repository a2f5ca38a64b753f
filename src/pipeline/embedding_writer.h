// Output of `tessera embed`, one row per chunk (or per document with
// --doc-embedding), in input order:
//   jsonl  {"id": <id>, "chunk": k, "offsets": [begin, end], "embedding": [...]}
//          document rows have "chunks": n instead of "chunk"; to stdout or a file.
//          Quantized rows (RowEncoding below) add "precision": "int8" (the
//          name, before "embedding") and their "embedding" holds integers:
//          dim of them for int8 (-128..127) / uint8 (0..255), ceil(dim / 8)
//          packed bytes for binary (-128..127) / ubinary (0..255). float32
//          rows have no "precision" and are unchanged.
//   npy    a [rows, values] .npy file: float32 ('<f4', values = dim), int8
//          ('|i1') / uint8 ('|u1') with values = dim, or the packed bits of
//          binary ('|i1') / ubinary ('|u1') with values = ceil(dim / 8); plus
//          an index JSONL beside it whose line r describes row r: {"id",
//          "chunk" | "chunks", "offsets", "row"}
// Offsets are Unicode code points [begin, end) into the original text.
// Files are written through AtomicFile: they appear only when finish() succeeds.
// Resumable writers (tessera embed --resume) write "<file>.partial" files
// instead, which sync() makes durable and a later process continues.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/quantize.h"
#include "tessera/status.h"

namespace tessera::pipeline {

struct OutputRow {
  const nlohmann::json* id = nullptr;
  int64_t chunk = 0;   // chunk index in its document (chunk rows)
  int64_t chunks = 0;  // > 0 marks a document row: how many chunks it averages
  int64_t begin = 0;   // code points
  int64_t end = 0;
};

// Where an output stands: rows written and the length of each file (the
// index file is the .npy output's; 0 for JSONL).
struct OutputPosition {
  int64_t rows = 0;
  int64_t bytes = 0;
  int64_t index_bytes = 0;
};

class EmbeddingWriter {
 public:
  virtual ~EmbeddingWriter() = default;
  // `embedding` holds dim floats.
  virtual Status write(const OutputRow& row, const float* embedding) = 0;
  // Makes every row written so far durable and complete on disk (the .npy
  // header counts them) and says where the output stands. Only the file
  // writers implement it.
  virtual Status sync(OutputPosition* /*at*/) {
    return unsupported("this output cannot be synced (stdout or an in-memory writer)");
  }
  // Completes the output (renames files into place, flushes stdout).
  virtual Status finish() = 0;
};

// How rows are stored: every row of `dim` floats a writer is given is
// quantized with quantize_embeddings (include/tessera/quantize.h) first, the
// one implementation for every writer.
struct RowEncoding {
  Precision precision = Precision::kFloat32;
  std::vector<float> ranges;  // int8 / uint8: 2 x dim (per-dimension min, then max)
};

struct WriterOptions {
  // Write "<file>.partial" work files that outlive a crash instead of
  // temporary files removed on failure.
  bool resumable = false;
  // Resumable only: continue the partial files from this position (a
  // checkpoint's), cutting whatever follows it; all zero starts them anew.
  OutputPosition resume_at;
  RowEncoding encoding;
};

// path "" (or "-") writes to stdout (not resumable). An encoding that cannot
// quantize rows of `dim` (int8 / uint8 ranges of another size) is refused.
Status make_jsonl_writer(const std::string& path, int dim, std::unique_ptr<EmbeddingWriter>* out,
                         const WriterOptions& options = {});
Status make_npy_writer(const std::string& path, int dim, std::unique_ptr<EmbeddingWriter>* out,
                       const WriterOptions& options = {});
// The files an output consists of, in the order finish() renames them:
// {path} for JSONL, {index, path} for .npy.
std::vector<std::string> output_files(const std::string& path, bool npy);
// "emb.npy" -> "emb.index.jsonl"; other names get ".index.jsonl" appended.
std::string npy_index_path(const std::string& npy_path);

// The JSON text of one row (no newline); `embedding` null leaves it out and
// `row_number` >= 0 adds "row" (the npy index).
std::string format_row(const OutputRow& row, const float* embedding, int dim,
                       int64_t row_number = -1);
// The same for a quantized row: quantized_row_bytes(precision, dim) bytes,
// written as int8 or uint8 integers after "precision".
std::string format_quantized_row(const OutputRow& row, Precision precision, const uint8_t* bytes,
                                 int dim);

}  // namespace tessera::pipeline

#include "pipeline/embedding_writer.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "pipeline/atomic_file.h"
#include "runtime/npy_writer.h"

namespace tessera::pipeline {

namespace {

// The .npy header (runtime/npy_writer.h) is written before the row count is
// known, then rewritten in place: kNpyHeaderBytes (a multiple of 64) leaves
// room for any shape of two int64 dims.
constexpr size_t kNpyHeaderBytes = 128;

// The .npy dtype of a row's values.
const char* npy_descr(Precision p) {
  if (p == Precision::kFloat32) return "<f4";
  return is_signed(p) ? "|i1" : "|u1";
}

// The one place rows are quantized for every writer: quantize_embeddings on
// each row as it arrives (float32 rows pass through untouched).
class RowQuantizer {
 public:
  RowQuantizer(int dim, RowEncoding encoding) : dim_(dim), encoding_(std::move(encoding)) {}
  Precision precision() const { return encoding_.precision; }
  bool quantized() const { return encoding_.precision != Precision::kFloat32; }
  // Bytes of one stored row.
  size_t row_bytes() const {
    return static_cast<size_t>(quantized_row_bytes(encoding_.precision, dim_));
  }
  // Values of one stored row (the .npy's second dimension).
  int64_t row_values() const {
    return quantized() ? static_cast<int64_t>(row_bytes()) : static_cast<int64_t>(dim_);
  }
  // The stored bytes of `row` (dim floats), valid until the next call.
  Status encode(const float* row, const uint8_t** bytes) {
    if (!quantized()) {
      *bytes = reinterpret_cast<const uint8_t*>(row);
      return Status::Ok();
    }
    TESSERA_RETURN_IF_ERROR(
        quantize_embeddings(row, 1, dim_, encoding_.precision, encoding_.ranges, &buffer_));
    *bytes = buffer_.data();
    return Status::Ok();
  }

 private:
  int dim_;
  RowEncoding encoding_;
  std::vector<uint8_t> buffer_;
};

Status check_encoding(int dim, const RowEncoding& encoding) {
  const Precision p = encoding.precision;
  if (p != Precision::kInt8 && p != Precision::kUint8) return Status::Ok();
  if (encoding.ranges.size() != 2 * static_cast<size_t>(dim)) {
    return invalid_argument(std::string(precision_name(p)) + " rows of " + std::to_string(dim) +
                            " dimensions need ranges of 2 x " + std::to_string(dim) +
                            " values (per-dimension min, then max); got " +
                            std::to_string(encoding.ranges.size()));
  }
  return Status::Ok();
}

void append_float(std::string* s, float v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  s->append(buf, r.ptr);
}

class JsonlWriter final : public EmbeddingWriter {
 public:
  JsonlWriter(int dim, const RowEncoding& encoding, std::unique_ptr<AtomicFile> file, int64_t rows)
      : dim_(dim), quantizer_(dim, encoding), rows_(rows), file_(std::move(file)) {}
  Status write(const OutputRow& row, const float* embedding) override {
    std::string line;
    if (quantizer_.quantized()) {
      const uint8_t* bytes = nullptr;
      TESSERA_RETURN_IF_ERROR(quantizer_.encode(embedding, &bytes));
      line = format_quantized_row(row, quantizer_.precision(), bytes, dim_);
    } else {
      line = format_row(row, embedding, dim_);
    }
    line += '\n';
    ++rows_;
    if (file_ != nullptr) return file_->write(line);
    if (std::fwrite(line.data(), 1, line.size(), stdout) != line.size()) {
      return internal_error(std::string("writing to stdout failed: ") + std::strerror(errno));
    }
    return Status::Ok();
  }
  Status sync(OutputPosition* at) override {
    if (file_ == nullptr) return EmbeddingWriter::sync(at);
    at->rows = rows_;
    at->index_bytes = 0;
    return file_->sync(&at->bytes);
  }
  Status finish() override {
    if (file_ != nullptr) return file_->commit();
    if (std::fflush(stdout) != 0) {
      return internal_error(std::string("writing to stdout failed: ") + std::strerror(errno));
    }
    return Status::Ok();
  }

 private:
  int dim_;
  RowQuantizer quantizer_;
  int64_t rows_;
  std::unique_ptr<AtomicFile> file_;  // null: stdout
};

class NpyWriter final : public EmbeddingWriter {
 public:
  NpyWriter(int dim, const RowEncoding& encoding) : dim_(dim), quantizer_(dim, encoding) {}
  Status open(const std::string& path, const WriterOptions& options) {
    if (!options.resumable) {
      TESSERA_RETURN_IF_ERROR(npy_.open(path));
      TESSERA_RETURN_IF_ERROR(index_.open(npy_index_path(path)));
      return put_header(/*fresh=*/true);
    }
    const OutputPosition& at = options.resume_at;
    if (at.bytes == 0) {
      if (at.rows != 0 || at.index_bytes != 0) return inconsistent(path, at);
    } else if (at.bytes != static_cast<int64_t>(kNpyHeaderBytes + at.rows * row_bytes())) {
      return inconsistent(path, at);
    }
    TESSERA_RETURN_IF_ERROR(npy_.open_resumable(path, at.bytes));
    TESSERA_RETURN_IF_ERROR(index_.open_resumable(npy_index_path(path), at.index_bytes));
    rows_ = at.rows;
    if (at.bytes == 0) return put_header(/*fresh=*/true);
    return Status::Ok();
  }
  Status write(const OutputRow& row, const float* embedding) override {
    const uint8_t* bytes = nullptr;
    TESSERA_RETURN_IF_ERROR(quantizer_.encode(embedding, &bytes));
    TESSERA_RETURN_IF_ERROR(
        npy_.write(std::string_view(reinterpret_cast<const char*>(bytes), row_bytes())));
    std::string line = format_row(row, nullptr, dim_, rows_++);
    line += '\n';
    return index_.write(line);
  }
  // The header is rewritten at every sync, so a synced partial .npy is a
  // valid .npy of the rows so far.
  Status sync(OutputPosition* at) override {
    TESSERA_RETURN_IF_ERROR(put_header(/*fresh=*/false));
    at->rows = rows_;
    TESSERA_RETURN_IF_ERROR(npy_.sync(&at->bytes));
    return index_.sync(&at->index_bytes);
  }
  Status finish() override {
    TESSERA_RETURN_IF_ERROR(put_header(/*fresh=*/false));
    TESSERA_RETURN_IF_ERROR(index_.commit());
    return npy_.commit();
  }

 private:
  size_t row_bytes() const { return quantizer_.row_bytes(); }
  // The header for the rows so far: appended to a new file, else written
  // over the old one.
  Status put_header(bool fresh) {
    std::string header;
    TESSERA_RETURN_IF_ERROR(npy::header(npy_descr(quantizer_.precision()),
                                        {rows_, quantizer_.row_values()}, &header,
                                        kNpyHeaderBytes));
    return fresh ? npy_.write(header) : npy_.write_at(0, header);
  }
  Status inconsistent(const std::string& path, const OutputPosition& at) const {
    return invalid_argument("cannot resume " + path + ": the checkpoint's position (rows " +
                            std::to_string(at.rows) + ", bytes " + std::to_string(at.bytes) +
                            ") does not fit a .npy of dim " + std::to_string(dim_) + " " +
                            precision_name(quantizer_.precision()) + " rows" +
                            " (expected bytes = " + std::to_string(kNpyHeaderBytes) + " + rows * " +
                            std::to_string(row_bytes()) + ")");
  }

  int dim_;
  RowQuantizer quantizer_;
  int64_t rows_ = 0;
  AtomicFile npy_;
  AtomicFile index_;
};

// {"id": .., "chunk" | "chunks": .., "offsets": [..] and "row" when >= 0,
// without the closing brace.
std::string row_fields(const OutputRow& row, int64_t row_number) {
  std::string s = "{\"id\":";
  s += row.id->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  s += row.chunks > 0 ? ",\"chunks\":" + std::to_string(row.chunks)
                      : ",\"chunk\":" + std::to_string(row.chunk);
  s += ",\"offsets\":[" + std::to_string(row.begin) + "," + std::to_string(row.end) + "]";
  if (row_number >= 0) s += ",\"row\":" + std::to_string(row_number);
  return s;
}

}  // namespace

std::string format_row(const OutputRow& row, const float* embedding, int dim, int64_t row_number) {
  std::string s = row_fields(row, row_number);
  if (embedding != nullptr) {
    s += ",\"embedding\":[";
    for (int i = 0; i < dim; ++i) {
      if (i > 0) s += ',';
      append_float(&s, embedding[i]);
    }
    s += ']';
  }
  s += '}';
  return s;
}

std::string format_quantized_row(const OutputRow& row, Precision precision, const uint8_t* bytes,
                                 int dim) {
  std::string s = row_fields(row, -1);
  s += ",\"precision\":\"";
  s += precision_name(precision);
  s += "\",\"embedding\":[";
  const int64_t n = quantized_row_bytes(precision, dim);
  const bool is_int8 = is_signed(precision);
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) s += ',';
    s += std::to_string(is_int8 ? static_cast<int>(static_cast<int8_t>(bytes[i]))
                                : static_cast<int>(bytes[i]));
  }
  s += "]}";
  return s;
}

std::string npy_index_path(const std::string& npy_path) {
  const std::string ext = ".npy";
  if (npy_path.size() > ext.size() &&
      npy_path.compare(npy_path.size() - ext.size(), ext.size(), ext) == 0) {
    return npy_path.substr(0, npy_path.size() - ext.size()) + ".index.jsonl";
  }
  return npy_path + ".index.jsonl";
}

Status make_jsonl_writer(const std::string& path, int dim, std::unique_ptr<EmbeddingWriter>* out,
                         const WriterOptions& options) {
  TESSERA_RETURN_IF_ERROR(check_encoding(dim, options.encoding));
  const bool to_stdout = path.empty() || path == "-";
  if (to_stdout && options.resumable) {
    return invalid_option("resume", " needs an output file (-o FILE): stdout cannot be resumed");
  }
  std::unique_ptr<AtomicFile> file;
  if (!to_stdout) {
    file = std::make_unique<AtomicFile>();
    TESSERA_RETURN_IF_ERROR(options.resumable ? file->open_resumable(path, options.resume_at.bytes)
                                              : file->open(path));
  }
  const int64_t rows = options.resumable ? options.resume_at.rows : 0;
  *out = std::make_unique<JsonlWriter>(dim, options.encoding, std::move(file), rows);
  return Status::Ok();
}

Status make_npy_writer(const std::string& path, int dim, std::unique_ptr<EmbeddingWriter>* out,
                       const WriterOptions& options) {
  if (path.empty() || path == "-") {
    return {StatusCode::kInvalidArgument, "format npy writes a file: give -o FILE.npy", "format"};
  }
  TESSERA_RETURN_IF_ERROR(check_encoding(dim, options.encoding));
  auto writer = std::make_unique<NpyWriter>(dim, options.encoding);
  TESSERA_RETURN_IF_ERROR(writer->open(path, options));
  *out = std::move(writer);
  return Status::Ok();
}

std::vector<std::string> output_files(const std::string& path, bool npy) {
  if (!npy) return {path};
  return {npy_index_path(path), path};
}

}  // namespace tessera::pipeline

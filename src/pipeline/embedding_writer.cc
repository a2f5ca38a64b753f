#include "pipeline/embedding_writer.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "pipeline/atomic_file.h"

namespace tessera::pipeline {

namespace {

// The .npy header is written before the row count is known, then rewritten in
// place: kNpyHeaderBytes (a multiple of 64) leaves room for any shape.
constexpr size_t kNpyHeaderBytes = 128;
constexpr char kNpyMagic[] = "\x93NUMPY\x01\x00";
constexpr size_t kNpyMagicBytes = 8;

std::string npy_header(int64_t rows, int dim) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) +
                     ", " + std::to_string(dim) + "), }";
  const size_t dict_bytes = kNpyHeaderBytes - kNpyMagicBytes - 2;  // 2: header length field
  dict.resize(dict_bytes - 1, ' ');
  dict += '\n';
  std::string header(kNpyMagic, kNpyMagicBytes);
  header += static_cast<char>(dict_bytes & 0xff);
  header += static_cast<char>(dict_bytes >> 8);
  return header + dict;
}

void append_float(std::string* s, float v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  s->append(buf, r.ptr);
}

class JsonlWriter final : public EmbeddingWriter {
 public:
  JsonlWriter(int dim, std::unique_ptr<AtomicFile> file, int64_t rows)
      : dim_(dim), rows_(rows), file_(std::move(file)) {}
  Status write(const OutputRow& row, const float* embedding) override {
    std::string line = format_row(row, embedding, dim_);
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
  int64_t rows_;
  std::unique_ptr<AtomicFile> file_;  // null: stdout
};

class NpyWriter final : public EmbeddingWriter {
 public:
  explicit NpyWriter(int dim) : dim_(dim) {}
  Status open(const std::string& path, const WriterOptions& options) {
    if (!options.resumable) {
      TESSERA_RETURN_IF_ERROR(npy_.open(path));
      TESSERA_RETURN_IF_ERROR(index_.open(npy_index_path(path)));
      return npy_.write(npy_header(0, dim_));
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
    if (at.bytes == 0) return npy_.write(npy_header(0, dim_));
    return Status::Ok();
  }
  Status write(const OutputRow& row, const float* embedding) override {
    TESSERA_RETURN_IF_ERROR(
        npy_.write(std::string_view(reinterpret_cast<const char*>(embedding), row_bytes())));
    std::string line = format_row(row, nullptr, dim_, rows_++);
    line += '\n';
    return index_.write(line);
  }
  // The header is rewritten at every sync, so a synced partial .npy is a
  // valid .npy of the rows so far.
  Status sync(OutputPosition* at) override {
    TESSERA_RETURN_IF_ERROR(npy_.write_at(0, npy_header(rows_, dim_)));
    at->rows = rows_;
    TESSERA_RETURN_IF_ERROR(npy_.sync(&at->bytes));
    return index_.sync(&at->index_bytes);
  }
  Status finish() override {
    TESSERA_RETURN_IF_ERROR(npy_.write_at(0, npy_header(rows_, dim_)));
    TESSERA_RETURN_IF_ERROR(index_.commit());
    return npy_.commit();
  }

 private:
  size_t row_bytes() const { return sizeof(float) * static_cast<size_t>(dim_); }
  Status inconsistent(const std::string& path, const OutputPosition& at) const {
    return invalid_argument("cannot resume " + path + ": the checkpoint's position (rows " +
                            std::to_string(at.rows) + ", bytes " + std::to_string(at.bytes) +
                            ") does not fit a .npy of dim " + std::to_string(dim_) +
                            " (expected bytes = " + std::to_string(kNpyHeaderBytes) + " + rows * " +
                            std::to_string(row_bytes()) + ")");
  }

  int dim_;
  int64_t rows_ = 0;
  AtomicFile npy_;
  AtomicFile index_;
};

}  // namespace

std::string format_row(const OutputRow& row, const float* embedding, int dim, int64_t row_number) {
  std::string s = "{\"id\":";
  s += row.id->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  s += row.chunks > 0 ? ",\"chunks\":" + std::to_string(row.chunks)
                      : ",\"chunk\":" + std::to_string(row.chunk);
  s += ",\"offsets\":[" + std::to_string(row.begin) + "," + std::to_string(row.end) + "]";
  if (row_number >= 0) s += ",\"row\":" + std::to_string(row_number);
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
  const bool to_stdout = path.empty() || path == "-";
  if (to_stdout && options.resumable) {
    return invalid_argument("--resume needs an output file (-o FILE): stdout cannot be resumed");
  }
  std::unique_ptr<AtomicFile> file;
  if (!to_stdout) {
    file = std::make_unique<AtomicFile>();
    TESSERA_RETURN_IF_ERROR(options.resumable ? file->open_resumable(path, options.resume_at.bytes)
                                              : file->open(path));
  }
  const int64_t rows = options.resumable ? options.resume_at.rows : 0;
  *out = std::make_unique<JsonlWriter>(dim, std::move(file), rows);
  return Status::Ok();
}

Status make_npy_writer(const std::string& path, int dim, std::unique_ptr<EmbeddingWriter>* out,
                       const WriterOptions& options) {
  if (path.empty() || path == "-") {
    return invalid_argument("--format npy writes a file: give -o FILE.npy");
  }
  auto writer = std::make_unique<NpyWriter>(dim);
  TESSERA_RETURN_IF_ERROR(writer->open(path, options));
  *out = std::move(writer);
  return Status::Ok();
}

std::vector<std::string> output_files(const std::string& path, bool npy) {
  if (!npy) return {path};
  return {npy_index_path(path), path};
}

}  // namespace tessera::pipeline

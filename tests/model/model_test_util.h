// Helpers for the model tests: temporary directories and hand-made
// safetensors files and model directories.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tessera/status.h"

namespace tessera::model::testing {

// A fresh directory under $TMPDIR, removed with everything in it at scope end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void write_file(const std::string& path, const std::string& bytes);
// A whole file's bytes ("" when it cannot be read).
std::string read_text(const std::string& path);
// A path in the source tree (TESSERA_SOURCE_DIR), and the default model's
// directory there (linked by scripts/install-deps.sh).
std::string source_path(const std::string& relative);
std::string model_dir();

// st has `code` and its message contains every one of `parts`.
void expect_status(const Status& st, StatusCode code, const std::vector<std::string>& parts);

// Cosine of a[0, b.size()) and b, accumulated in double.
double cosine(const float* a, const std::vector<float>& b);

// 8-byte little-endian header length + header + data, exactly as given.
std::string safetensors_bytes(const std::string& header, const std::string& data);

struct FakeTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;  // stored as `dtype`
  std::string dtype = "F32";  // F32, F16 or BF16
};
// A valid file holding `tensors` back to back, with a __metadata__ entry.
std::string make_safetensors(const std::vector<FakeTensor>& tensors);

// A small BERT with random weights, as a sentence-transformers directory.
struct TinyBert {
  int vocab = 40, hidden = 8, heads = 2, layers = 2, intermediate = 12, positions = 16;
  int max_seq_length = 12;
  std::string pooling = "mean";  // cls, mean or max
  bool normalize = true;
  std::string dtype = "F32";  // weights' dtype in the file
  std::string prefix;         // e.g. "bert."
  uint32_t seed = 1;
  // Every tensor of the checkpoint (PyTorch names, without prefix).
  std::vector<FakeTensor> tensors() const;
  // config.json, modules.json, 1_Pooling/config.json, sentence_bert_config.json,
  // vocab.txt and model.safetensors (written from `tensors`).
  void write(const std::string& dir, const std::vector<FakeTensor>& tensors) const;
  void write(const std::string& dir) const { write(dir, tensors()); }
};

}  // namespace tessera::model::testing

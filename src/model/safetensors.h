// safetensors reader: the file is memory-mapped read-only and its JSON header
// validated before any tensor is exposed (sizes within the file, dtype x shape
// = byte length, offsets inside the data section, no two tensors overlapping).
//
// The mapping is not a TrackingAllocator block (the kernel pages it in and out
// on demand); mapped_bytes() reports it so callers can account for it. The
// encoder converts what it needs into tracked buffers and closes the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/dtype.h"
#include "tessera/status.h"

namespace tessera::model {

struct SafeTensor {
  std::string name;
  std::string dtype;                 // as written: "F32", "BF16", "I64", ...
  std::optional<DType> float_dtype;  // F32 / F16 / BF16; empty for the others
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // inside the mapping; may be unaligned
  size_t bytes = 0;
  int64_t numel() const;
  std::string shape_string() const;  // "[384, 1536]"
};

class SafetensorsFile {
 public:
  // Largest header accepted (the reference implementation's limit).
  static constexpr uint64_t kMaxHeaderBytes = 100ull << 20;
  static constexpr size_t kMaxRank = 8;

  // `path` is one .safetensors file, or a sharded checkpoint's
  // model.safetensors.index.json (a path ending in ".index.json"): its
  // weight_map names each tensor's shard, a file of the same folder; the
  // shards are opened and their tensors seen as one file's.
  static Status open(const std::string& path, std::unique_ptr<SafetensorsFile>* out);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  size_t mapped_bytes() const { return size_; }
  const std::vector<SafeTensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const SafeTensor* find(std::string_view name) const;

  // Converts a F32 / F16 / BF16 tensor into dst (t.numel() floats).
  Status read_f32(const SafeTensor& t, float* dst) const;
  // Drops the resident pages that lie wholly inside t's bytes (a tensor
  // already converted): the mapping stays valid, a later read pages them in
  // again. Keeps a load's resident memory near the converted weights instead
  // of weights + file.
  void release(const SafeTensor& t) const;

 private:
  SafetensorsFile() = default;
  Status parse_header();
  static Status open_one(const std::string& path, std::unique_ptr<SafetensorsFile>* out);
  static Status open_index(const std::string& path, std::unique_ptr<SafetensorsFile>* out);
  // The shard holding `t` (this file when it is not an index).
  const SafetensorsFile& owner(const SafeTensor& t) const;

  std::vector<std::unique_ptr<SafetensorsFile>> shards_;  // an index's files
  std::string path_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  std::vector<SafeTensor> tensors_;  // sorted by name
  std::map<std::string, std::string> metadata_;
};

}  // namespace tessera::model

// The byte -> code point offset map that chunk offsets use. Chunk offsets
// are Unicode code points, so `text[begin:end]` in Python (or any
// code-point-indexed string) is the chunk's text. Texts are validated first
// by the one validator, runtime/utf8.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::pipeline {

// Maps byte offsets of one valid UTF-8 text to code point offsets.
class CodePointIndex {
 public:
  explicit CodePointIndex(std::string_view text);
  // Code points before byte `byte_offset` (which must lie on a character
  // boundary, or be text.size()).
  int64_t at(int64_t byte_offset) const;
  int64_t size() const { return total_; }  // code points in the text

 private:
  static constexpr int64_t kStride = 64;  // bytes per checkpoint
  std::string_view text_;
  std::vector<int64_t> checkpoints_;  // code points before byte k * kStride
  int64_t total_ = 0;
};

}  // namespace tessera::pipeline

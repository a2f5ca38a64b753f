#include "pipeline/utf8_text.h"

namespace tessera::pipeline {

namespace {

bool is_lead_byte(unsigned char b) { return (b & 0xC0) != 0x80; }

}  // namespace

CodePointIndex::CodePointIndex(std::string_view text) : text_(text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const int64_t n = static_cast<int64_t>(text.size());
  checkpoints_.reserve(static_cast<size_t>(n / kStride + 1));
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i % kStride == 0) checkpoints_.push_back(count);
    count += is_lead_byte(s[i]) ? 1 : 0;
  }
  total_ = count;
}

int64_t CodePointIndex::at(int64_t byte_offset) const {
  const int64_t n = static_cast<int64_t>(text_.size());
  if (byte_offset >= n) return total_;
  const int64_t block = byte_offset / kStride;
  int64_t count = checkpoints_[static_cast<size_t>(block)];
  const auto* s = reinterpret_cast<const unsigned char*>(text_.data());
  for (int64_t i = block * kStride; i < byte_offset; ++i) count += is_lead_byte(s[i]) ? 1 : 0;
  return count;
}

}  // namespace tessera::pipeline

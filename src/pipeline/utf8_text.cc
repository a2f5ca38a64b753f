#include "pipeline/utf8_text.h"

#include <utf8proc.h>

#include <cstdio>

namespace tessera::pipeline {

namespace {

bool is_lead_byte(unsigned char b) { return (b & 0xC0) != 0x80; }

}  // namespace

std::string describe_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto n = static_cast<utf8proc_ssize_t>(text.size());
  utf8proc_ssize_t i = 0;
  while (i < n) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t len = utf8proc_iterate(s + i, n - i, &cp);
    if (len < 0) {
      std::string bytes;
      for (utf8proc_ssize_t k = i; k < n && k < i + 4; ++k) {
        char hex[6];
        std::snprintf(hex, sizeof hex, "%s%02X", bytes.empty() ? "" : " ", s[k]);
        bytes += hex;
      }
      return "not valid UTF-8 at byte " + std::to_string(i) + " (bytes " + bytes +
             "): " + utf8proc_errmsg(len);
    }
    i += len;
  }
  return {};
}

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

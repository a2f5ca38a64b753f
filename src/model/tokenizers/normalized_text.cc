#include "model/tokenizers/normalized_text.h"

#include "model/tokenizer_utf8.h"

namespace tessera::model::tokenizers {

NormalizedText NormalizedText::original(std::string_view text, size_t begin, size_t end) {
  NormalizedText t;
  t.text.assign(text.substr(begin, end - begin));
  t.align.resize(t.text.size());
  for (size_t i = begin; i < end;) {
    const size_t len = static_cast<size_t>(utf8_length(static_cast<unsigned char>(text[i])));
    const Span s{static_cast<int64_t>(i), static_cast<int64_t>(i + len)};
    for (size_t k = 0; k < len && i + k < end; ++k) t.align[i - begin + k] = s;
    i += len;
  }
  return t;
}

NormalizedText NormalizedText::slice(size_t begin, size_t end) const {
  NormalizedText t;
  t.text.assign(text, begin, end - begin);
  t.align.assign(align.begin() + static_cast<std::ptrdiff_t>(begin),
                 align.begin() + static_cast<std::ptrdiff_t>(end));
  return t;
}

int32_t TextRewriter::peek(int* len) const {
  if (done()) return -1;
  int n = 0;
  const char32_t c = decode_utf8(src_.text.data() + pos_, &n);
  if (len) *len = n;
  return static_cast<int32_t>(c);
}

void TextRewriter::write(char32_t c, Span at) {
  char bytes[4];
  const int n = encode_utf8(c, bytes);
  out_.text.append(bytes, static_cast<size_t>(n));
  out_.align.insert(out_.align.end(), static_cast<size_t>(n), at);
}

void TextRewriter::keep() {
  int len = 0;
  const int32_t c = peek(&len);
  if (c < 0) return;
  write(static_cast<char32_t>(c), src_.align[pos_]);
  pos_ += static_cast<size_t>(len);
}

void TextRewriter::remove() {
  int len = 0;
  if (peek(&len) >= 0) pos_ += static_cast<size_t>(len);
}

void TextRewriter::replace(char32_t c, int absorbed) {
  if (done()) return insert(c);
  const Span at = src_.align[pos_];
  remove();
  for (int k = 0; k < absorbed; ++k) remove();
  write(c, at);
}

void TextRewriter::insert(char32_t c) {
  // HF aligns an insertion at the very start to the (empty) start.
  const int64_t start = src_.align.empty() ? 0 : src_.align[0].begin;
  write(c, pos_ == 0 ? Span{start, start} : src_.align[pos_ - 1]);
}

}  // namespace tessera::model::tokenizers

// HF's NormalizedString, reduced to what tessera needs: the normalized UTF-8
// text and, for every byte of it, the byte range of the original text it
// came from. A token covering normalized bytes [b, e) has original offsets
// [align[b].begin, align[e - 1].end), as HF computes them.
//
// Normalizers and pre-tokenizers rewrite the text through TextRewriter,
// which reproduces HF's `transform` alignment rules: a character that
// replaces one takes that character's range; an inserted one (HF change +1)
// takes the range of the byte before it; removed characters are skipped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::model::tokenizers {

struct Span {
  int64_t begin;
  int64_t end;
};

struct NormalizedText {
  std::string text;
  std::vector<Span> align;  // one per byte of text

  // text[begin, end) of the original, each character aligned to itself.
  static NormalizedText original(std::string_view text, size_t begin, size_t end);
  // Bytes [begin, end) with their alignments.
  NormalizedText slice(size_t begin, size_t end) const;
  bool empty() const { return text.empty(); }
};

class TextRewriter {
 public:
  explicit TextRewriter(const NormalizedText& source) : src_(source) {
    out_.text.reserve(source.text.size());
    out_.align.reserve(source.align.size());
  }

  // The source character at the read position, or -1 at the end.
  int32_t peek(int* len = nullptr) const;
  size_t position() const { return pos_; }
  bool done() const { return pos_ >= src_.text.size(); }

  // Copies the next source character unchanged.
  void keep();
  // Skips the next source character (removed).
  void remove();
  // Writes `c` in place of the next source character (HF change 0), then
  // removes `absorbed` more (HF change -absorbed).
  void replace(char32_t c, int absorbed = 0);
  // Writes `c` as an inserted character (HF change +1).
  void insert(char32_t c);

  NormalizedText finish() { return std::move(out_); }

 private:
  void write(char32_t c, Span at);
  const NormalizedText& src_;
  size_t pos_ = 0;
  NormalizedText out_;
};

}  // namespace tessera::model::tokenizers

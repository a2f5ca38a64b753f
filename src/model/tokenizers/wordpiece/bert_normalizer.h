// The HF BertNormalizer, one input character at a time. Every step of the
// HF normalizer (clean text, Chinese-character spacing, NFD + strip marks,
// lowercase) maps a character to characters independently of its neighbours,
// so the tokenizer can run it inside its single pass over the text.
// (The one context-dependent step, NFD's canonical reordering of combining
// marks across characters, only matters for marks that survive accent
// stripping; it is not reproduced: see docs/DECISIONS.md.)
#pragma once

#include "model/tokenizer_unicode.h"

namespace tessera::model {

struct BertNormalizerOptions {
  bool clean_text = true;            // drop controls and U+FFFD, whitespace -> ' '
  bool handle_chinese_chars = true;  // a CJK ideograph is a word by itself
  bool strip_accents = true;         // NFD, then drop non-spacing marks
  bool lowercase = true;
};

// What one input character becomes.
struct NormalizedChar {
  static constexpr int kMaxCodePoints = unicode::kMaxDecomposition * unicode::kMaxLowercase;
  int count = 0;          // code points in cp[0..count); 0 when the character is dropped
  bool isolated = false;  // a Chinese character: HF puts spaces around it
  char32_t cp[kMaxCodePoints];
};

class BertNormalizer {
 public:
  BertNormalizer() = default;
  explicit BertNormalizer(const BertNormalizerOptions& options) : options_(options) {}

  void normalize(char32_t c, NormalizedChar* out) const;
  const BertNormalizerOptions& options() const { return options_; }

 private:
  BertNormalizerOptions options_;
};

}  // namespace tessera::model

// Unicode character properties as the HF `tokenizers` BERT pipeline sees them,
// answered by ICU (no hand-written tables).
//
// HF mixes Unicode versions: general categories (control, punctuation,
// non-spacing mark) come from the `unicode_categories` crate, frozen at
// Unicode 8.0; whitespace and lowercase come from Rust's std (current
// Unicode); NFD from `unicode-normalization-alignments` (pre Unicode 13). We
// reproduce each by asking ICU for today's property and the code point's age.
// tests/model/tokenizer_test.cc checks every code point against
// data/tokenizer/unicode_golden.json, made by the real library.
#pragma once

#include <cstdint>

namespace tessera::model::unicode {

// The most code points one character expands to under NFD, and under NFD
// followed by full lowercase mapping of each result (see normalize_char).
inline constexpr int kMaxDecomposition = 8;
inline constexpr int kMaxLowercase = 3;

// Rust char::is_whitespace: the White_Space property.
bool is_whitespace(char32_t c);

// HF BertNormalizer is_control: general category Cc, Cf or Co in Unicode 8.0,
// except \t \n \r (which BERT treats as whitespace).
bool is_control(char32_t c);

// HF BertPreTokenizer is_bert_punc: ASCII punctuation (including $+<=>^`|~)
// or general category P* in Unicode 8.0.
bool is_punctuation(char32_t c);

// General category Mn in Unicode 8.0 (what strip_accents removes after NFD).
bool is_nonspacing_mark(char32_t c);

// HF's "Chinese character" ranges: the CJK Unified Ideographs blocks and
// extensions A..E, and the CJK Compatibility Ideographs (and supplement).
bool is_chinese_char(char32_t c);

// Canonical decomposition (NFD, no reordering across characters) of `c` into
// out[0..n); returns n >= 1 (`c` itself when it has none).
int decompose(char32_t c, char32_t* out);

// Rust char::to_lowercase: the full (unconditional, context-free) lowercase
// mapping of `c` into out[0..n); returns n >= 1.
int to_lower(char32_t c, char32_t* out);

// Regex \w as Rust's regex crate defines it (Alphabetic, marks, decimal
// digits, connector punctuation, Join_Control): used by single_word tokens.
bool is_word_char(char32_t c);

}  // namespace tessera::model::unicode

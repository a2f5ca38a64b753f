// HF `tokenizers` pre-tokenizers for the generic pipeline (pipeline.h):
// split a normalized span into words, each keeping its alignments.
//   ByteLevel       optional prefix space, GPT-2's regex split, then every
//                   byte becomes its printable character (byte_level_map.h)
//   Metaspace       ' ' -> the replacement ('▁'), prepended per
//                   prepend_scheme (always / first / never), split before
//                   each run of replacements (HF's MergedWithNext)
//   WhitespaceSplit words between White_Space characters
//   Split           a String or Regex pattern's matches and the text between
//                   them, removed / isolated / merged with the previous or
//                   next piece / contiguous runs merged; invert swaps the two
//   Sequence        each step applied to every word of the one before
#pragma once

#include <unicode/regex.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizers/json_fields.h"
#include "model/tokenizers/normalized_text.h"
#include "tessera/status.h"

namespace tessera::model::tokenizers {

struct PreTokenizerStep {
  enum Kind : uint8_t { kByteLevel, kMetaspace, kWhitespaceSplit, kSplit };
  enum Prepend : uint8_t { kAlways, kFirst, kNever };
  // HF's SplitDelimiterBehavior, in its order.
  enum Behavior : uint8_t {
    kRemoved,
    kIsolated,
    kMergedWithPrevious,
    kMergedWithNext,
    kContiguous
  };
  Kind kind;
  bool add_prefix_space = false;  // ByteLevel
  bool use_regex = true;          // ByteLevel
  std::string replacement;        // Metaspace, UTF-8 of one character
  char32_t replacement_char = 0;
  Prepend prepend = kAlways;  // Metaspace
  bool split = true;          // Metaspace
  // Split: the pattern as tokenizer.json gives it (for describe()), compiled.
  std::string pattern;
  bool pattern_is_regex = false;
  std::shared_ptr<const icu::RegexPattern> regex;
  Behavior behavior = kIsolated;
  bool invert = false;
};

class PreTokenizer {
 public:
  // Reads root["pre_tokenizer"] (absent or null: the span is one word).
  static Status read(const JsonFields& f, const nlohmann::json& root, PreTokenizer* out);

  // Appends the words of `span` (one span between added tokens) to `words`.
  // A Split pattern that backtracks without end stops it (hf_regex.h).
  Status split(NormalizedText span, std::vector<NormalizedText>* words) const;
  std::string describe() const;

 private:
  std::vector<PreTokenizerStep> steps_;
};

// GPT-2's pattern 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// as HF's ByteLevel applies it: the byte ranges of its matches, which cover
// `text` (exposed for tests).
void byte_level_split(std::string_view text, std::vector<std::pair<size_t, size_t>>* out);

}  // namespace tessera::model::tokenizers

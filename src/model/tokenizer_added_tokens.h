// Added tokens ([CLS], [SEP], [MASK]... and user-added ones) as HF
// `tokenizers` finds them: in the raw text, before normalization, leftmost-
// longest, non-overlapping; each match becomes one token and the text between
// matches is tokenized on its own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::model {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool single_word = false;  // only when not inside a word (regex \w on both sides)
  bool lstrip = false;       // the match takes the whitespace on its left
  bool rstrip = false;       // ... and on its right
  bool special = false;      // dropped by decode(skip_special_tokens = true)
  bool normalized = false;   // matched in the normalized text (by the model)
};

class AddedTokenMatcher {
 public:
  struct Match {
    size_t begin;  // byte range of the token in the text, stripped whitespace included
    size_t end;
    int32_t id;
  };

  AddedTokenMatcher() = default;
  // Tokens with empty content are ignored, as in HF.
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  // Finds the next accepted match. `*scan` is where the search starts and is
  // moved past the match; `prev_end` is the end of the previous accepted match
  // (0 at first), which lstrip never crosses. `text` must be valid UTF-8.
  bool next(std::string_view text, size_t* scan, size_t prev_end, Match* m) const;

  bool empty() const { return tokens_.empty(); }

 private:
  // Leftmost-longest occurrence of any token at or after `pos`.
  bool find_raw(std::string_view text, size_t pos, size_t* begin, const AddedToken** tok) const;

  std::vector<AddedToken> tokens_;
  std::array<bool, 256> first_byte_{};  // bytes that start some token
};

}  // namespace tessera::model

// HF `tokenizers` post-processors: the special tokens around one sequence or
// a pair, their type ids, and how many specials truncation must leave room
// for. BertProcessing ([CLS] A [SEP] / [CLS] A [SEP] B [SEP], type ids 0 / 1),
// RobertaProcessing (<s> A </s> / <s> A </s></s> B </s>, type ids all 0, and
// its ByteLevel trim_offsets), TemplateProcessing (any single and pair
// template), ByteLevel (trim_offsets only) and a Sequence of these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizers/id_decoder.h"
#include "model/tokenizers/json_fields.h"
#include "model/tokenizers/token_span.h"
#include "tessera/status.h"

namespace tessera::model::tokenizers {

// The special ids the single template puts before and after sequence A:
// BERT [CLS] / [SEP], RoBERTa <s> / </s>, a decoder's "$A <|endoftext|>"
// nothing / <|endoftext|>, a bare "$A" nothing / nothing. Every framing of a
// text or a window goes through it (pipeline/windowing.h frame_window).
struct SequenceFrame {
  std::vector<int32_t> prefix;
  std::vector<int32_t> suffix;
  int specials() const { return static_cast<int>(prefix.size() + suffix.size()); }
};

class PostProcessor {
 public:
  // One piece of a template: a special token's ids, or sequence A (0) / B (1).
  struct Piece {
    int sequence = -1;  // -1: special tokens `ids`
    std::vector<int32_t> ids;
    uint32_t type_id = 0;
  };

  // Reads root["post_processor"] (null or absent, or ByteLevel alone: no
  // specials, as HF); a single template without exactly one $A is refused.
  static Status read(const JsonFields& f, const nlohmann::json& root, PostProcessor* out);

  // Specials added around one sequence (pair = false) or two.
  size_t added_tokens(bool pair) const { return pair ? pair_specials_ : single_specials_; }

  // HF's ByteLevel trim_offsets of one sequence's tokens (a no-op unless the
  // processor asks for it): offsets lose the leading/trailing spaces ('Ġ' or
  // White_Space) of the token's text. `text_of(i)` is token i's text: its
  // vocabulary entry, or for an added token the raw text it matched
  // (lstrip/rstrip whitespace included, as HF keeps it).
  bool trims_offsets() const { return trim_; }
  void trim_offsets(const std::function<std::string_view(size_t)>& text_of,
                    std::vector<TokenSpan>* seq) const;

  // Applies the single (b == nullptr) or pair template; specials get offsets
  // 0..0 and continues_word = false. type_ids may be null.
  void apply(const std::vector<TokenSpan>& a, const std::vector<TokenSpan>* b,
             std::vector<TokenSpan>* out, std::vector<int32_t>* type_ids) const;

  // The single template's specials before and after $A.
  const SequenceFrame& single_frame() const { return single_frame_; }
  // The first and last special id of the single template (BERT's [CLS] and
  // [SEP], RoBERTa's <s> and </s>); -1 when it has none.
  int32_t first_special() const { return first_special_; }
  int32_t last_special() const { return last_special_; }
  std::string describe() const { return description_; }

 private:
  std::vector<Piece> single_, pair_;
  size_t single_specials_ = 0, pair_specials_ = 0;
  bool trim_ = false;
  bool add_prefix_space_ = false;
  int32_t first_special_ = -1, last_special_ = -1;
  SequenceFrame single_frame_;
  std::string description_;

  friend class PostProcessorReader;
};

}  // namespace tessera::model::tokenizers

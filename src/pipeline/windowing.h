// Splitting a document's tokens into overlapping windows that fit the model.
// A window holds at most max_tokens - specials document tokens (the
// tokenizer's single template adds the specials: BERT's [CLS] and [SEP], 2;
// a decoder's "$A <|endoftext|>", 1; a bare "$A", 0) and the last one ends at
// the last token, so every token lies in some window. A document that fits
// is one window.
//
// Windows are cut between words, never before a continuation piece
// ("##ing"), so a chunk's text (the span its offsets name) tokenizes to the
// very tokens it was embedded from. Near each cut they prefer, in order, a
// paragraph break (a blank line), a line break, the end of a sentence, then
// any word boundary: a window may end up to `stride` tokens early to end on
// a better boundary, and the next one starts at the best boundary within the
// last `stride` tokens of it, so neighbours share at most `stride` tokens
// (exactly `stride` in text of plain words). Only a single word longer than
// a whole window is cut inside.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/tokenizer.h"
#include "pipeline/utf8_text.h"
#include "tessera/status.h"

namespace tessera::pipeline {

struct WindowOptions {
  int max_tokens = 256;  // per chunk, the specials included
  int stride = 32;       // most tokens shared by consecutive windows
  // Specials the model's template adds to each window
  // (model::SequenceFrame::specials(); resolve_options sets it).
  int specials = 2;
};

// [begin, end): indices into the document's token list.
struct Window {
  int64_t begin = 0;
  int64_t end = 0;
};

// How good a place to cut before token t is (t == 0 and t == n: the best).
enum class Cut : int { kInsideWord = 0, kWord, kSentence, kLine, kParagraph };

// Checks max_tokens >= specials + 1 and 0 <= stride < max_tokens - specials;
// the message names the flag (--max-tokens / --stride), the values and the
// specials.
Status check_window_options(const WindowOptions& options);

// Windows over `tokens` of `text` (their byte offsets index it); none for no
// tokens. Options must be valid.
std::vector<Window> plan_windows(const std::vector<model::TokenSpan>& tokens, std::string_view text,
                                 const WindowOptions& options);

// The same over `num_tokens` tokens that are all separate words with no
// sentence or line structure (every cut is Cut::kWord).
std::vector<Window> plan_windows(int64_t num_tokens, const WindowOptions& options);

// The sequence window `w` of `tokens` is embedded as: frame.prefix, its ids,
// frame.suffix. Every front end frames chunks and texts through here.
void frame_window(const std::vector<model::TokenSpan>& tokens, const Window& w,
                  const model::SequenceFrame& frame, std::vector<int32_t>* sequence);

// The text window `w` covers, as code point offsets [begin, end) into the
// document `cp` indexes (its tokens' byte offsets, mapped): the offsets of
// every front end's rows.
std::pair<int64_t, int64_t> window_code_points(const std::vector<model::TokenSpan>& tokens,
                                               const Window& w, const CodePointIndex& cp);

// Why a document whose tokenizer gave no tokens is skipped: "empty document",
// or, for text of only whitespace or control characters, that and its size.
std::string empty_document_problem(std::string_view text);

// "no special tokens", "1 special token", "2 special tokens": for messages.
std::string specials_phrase(int specials);

// The cut before token t of `tokens` (0 <= t <= tokens.size()).
Cut cut_before(const std::vector<model::TokenSpan>& tokens, std::string_view text, int64_t t);

}  // namespace tessera::pipeline

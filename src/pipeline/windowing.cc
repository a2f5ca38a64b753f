#include "pipeline/windowing.h"

#include <algorithm>
#include <functional>
#include <string>

namespace tessera::pipeline {

namespace {

using CutAt = std::function<Cut(int64_t)>;

// Sentence-ending punctuation: ASCII, and the full-width forms of CJK text
// (which need no space after them).
bool ends_sentence(std::string_view token, bool space_after) {
  if (token == "." || token == "!" || token == "?") return space_after;
  return token == "\u3002" || token == "\uFF01" || token == "\uFF1F";  // 。！？
}

// Where the window that starts at `begin` ends (after `min_end - 1`, so
// every window reaches further than the one before): the best cut in the
// last `stride` tokens it could hold (the latest of equals, so windows stay
// long); else the latest word boundary; else, inside a word longer than the
// window, the full window.
int64_t pick_end(int64_t begin, int64_t min_end, int64_t content, int64_t stride, int64_t n,
                 const CutAt& cut) {
  const int64_t limit = begin + content;
  if (limit >= n) return n;
  int64_t best = -1;
  Cut best_cut = Cut::kInsideWord;
  for (int64_t t = limit; t >= min_end && t >= limit - stride; --t) {
    const Cut c = cut(t);
    if (c > best_cut) best = t, best_cut = c;
  }
  if (best >= min_end) return best;
  for (int64_t t = limit - stride - 1; t >= min_end; --t) {
    if (cut(t) != Cut::kInsideWord) return t;
  }
  return limit;
}

// Where the next window starts: the best cut among the last `stride` tokens
// of [begin, end) (the earliest of equals, so the overlap stays near
// `stride`), else `end` itself (no overlap).
int64_t pick_next_begin(int64_t begin, int64_t end, int64_t stride, const CutAt& cut) {
  int64_t best = end;
  Cut best_cut = Cut::kInsideWord;
  for (int64_t t = std::max(begin + 1, end - stride); t < end; ++t) {
    const Cut c = cut(t);
    if (c > best_cut) best = t, best_cut = c;
  }
  return best;
}

std::vector<Window> plan(int64_t n, const WindowOptions& options, const CutAt& cut) {
  const int64_t content = options.max_tokens - options.specials;
  std::vector<Window> windows;
  int64_t end = 0;
  for (int64_t begin = 0; begin < n;) {
    end = pick_end(begin, end + 1, content, options.stride, n, cut);
    windows.push_back({begin, end});
    if (end == n) break;
    begin = pick_next_begin(begin, end, options.stride, cut);
  }
  return windows;
}

}  // namespace

std::pair<int64_t, int64_t> window_code_points(const std::vector<model::TokenSpan>& tokens,
                                               const Window& w, const CodePointIndex& cp) {
  return {cp.at(tokens[w.begin].begin), cp.at(tokens[w.end - 1].end)};
}

std::string empty_document_problem(std::string_view text) {
  if (text.empty()) return "empty document";
  return "empty document: no tokens (only whitespace or control characters, " +
         std::to_string(text.size()) + " bytes)";
}

std::string specials_phrase(int specials) {
  if (specials == 0) return "no special tokens";
  if (specials == 1) return "1 special token";
  return std::to_string(specials) + " special tokens";
}

Status check_window_options(const WindowOptions& options) {
  if (options.specials < 0) {
    return invalid_argument("specials = " + std::to_string(options.specials) + ": must be >= 0");
  }
  const std::string adds = "the model adds " + specials_phrase(options.specials) + " to each";
  if (options.max_tokens < options.specials + 1) {
    return invalid_option("max_tokens",
                          " = " + std::to_string(options.max_tokens) + ": must be at least " +
                              std::to_string(options.specials + 1) + " (one token; " + adds + ")");
  }
  const int content = options.max_tokens - options.specials;
  if (options.stride < 0 || options.stride >= content) {
    return invalid_option("stride", " = " + std::to_string(options.stride) + ": must be in [0, " +
                                        std::to_string(content) + ") (a window of " +
                                        std::to_string(options.max_tokens) + " tokens holds " +
                                        std::to_string(content) + " tokens of text; " + adds + ")");
  }
  return Status::Ok();
}

Cut cut_before(const std::vector<model::TokenSpan>& tokens, std::string_view text, int64_t t) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (t <= 0 || t >= n) return Cut::kParagraph;
  const model::TokenSpan& prev = tokens[t - 1];
  const model::TokenSpan& next = tokens[t];
  if (next.continues_word) return Cut::kInsideWord;
  const auto gap_begin = static_cast<size_t>(std::min<int64_t>(prev.end, next.begin));
  const std::string_view gap = text.substr(gap_begin, static_cast<size_t>(next.begin) - gap_begin);
  const auto newlines = std::count(gap.begin(), gap.end(), '\n');
  if (newlines >= 2) return Cut::kParagraph;
  if (newlines == 1) return Cut::kLine;
  const std::string_view prev_text = text.substr(prev.begin, prev.end - prev.begin);
  return ends_sentence(prev_text, !gap.empty()) ? Cut::kSentence : Cut::kWord;
}

std::vector<Window> plan_windows(const std::vector<model::TokenSpan>& tokens, std::string_view text,
                                 const WindowOptions& options) {
  return plan(static_cast<int64_t>(tokens.size()), options,
              [&](int64_t t) { return cut_before(tokens, text, t); });
}

void frame_window(const std::vector<model::TokenSpan>& tokens, const Window& w,
                  const model::SequenceFrame& frame, std::vector<int32_t>* sequence) {
  sequence->clear();
  sequence->reserve(static_cast<size_t>(w.end - w.begin + frame.specials()));
  sequence->insert(sequence->end(), frame.prefix.begin(), frame.prefix.end());
  for (int64_t t = w.begin; t < w.end; ++t) sequence->push_back(tokens[t].id);
  sequence->insert(sequence->end(), frame.suffix.begin(), frame.suffix.end());
}

std::vector<Window> plan_windows(int64_t num_tokens, const WindowOptions& options) {
  return plan(num_tokens, options, [num_tokens](int64_t t) {
    return t <= 0 || t >= num_tokens ? Cut::kParagraph : Cut::kWord;
  });
}

}  // namespace tessera::pipeline

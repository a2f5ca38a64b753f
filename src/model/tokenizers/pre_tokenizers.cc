#include "model/tokenizers/pre_tokenizers.h"

#include <unicode/uchar.h>

#include <algorithm>
#include <iterator>

#include "model/tokenizer_unicode.h"
#include "model/tokenizer_utf8.h"
#include "model/tokenizers/byte_level_map.h"
#include "model/tokenizers/hf_regex.h"
#include "runtime/json_input.h"

namespace tessera::model::tokenizers {

using nlohmann::json;

namespace {

constexpr const char* kSupportedPreTokenizers =
    "\"ByteLevel\", \"Metaspace\", \"WhitespaceSplit\", \"Split\", \"Sequence\" or null";
constexpr const char* kBehaviors[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext",
                                      "Contiguous"};

enum class Class : uint8_t { kLetter, kNumber, kSpace, kOther };

Class regex_class(char32_t c) {
  if (unicode::is_whitespace(c)) return Class::kSpace;
  const uint32_t mask = U_GET_GC_MASK(static_cast<UChar32>(c));
  if (mask & U_GC_L_MASK) return Class::kLetter;
  if (mask & U_GC_N_MASK) return Class::kNumber;
  return Class::kOther;
}

char32_t char_and_length(std::string_view s, size_t i, size_t* len) {
  int n = 0;
  const char32_t c = decode_utf8(s.data() + i, &n);
  *len = static_cast<size_t>(n);
  return c;
}

// End of the run of characters of class `k` starting at i.
size_t run_end(std::string_view s, size_t i, Class k) {
  while (i < s.size()) {
    size_t len = 0;
    if (regex_class(char_and_length(s, i, &len)) != k) break;
    i += len;
  }
  return i;
}

// The end of GPT-2's match at i (i < s.size()).
size_t byte_level_match(std::string_view s, size_t i) {
  if (s[i] == '\'' && i + 1 < s.size()) {
    const std::string_view rest = s.substr(i + 1);
    for (std::string_view c : {"s", "t", "re", "ve", "m", "ll", "d"}) {
      if (rest.starts_with(c)) return i + 1 + c.size();
    }
  }
  size_t j = i;
  if (s[i] == ' ' && i + 1 < s.size()) j = i + 1;  // the optional leading space
  size_t len = 0;
  const Class k = regex_class(char_and_length(s, j, &len));
  if (k != Class::kSpace && (j != i || regex_class(char_and_length(s, i, &len)) != Class::kSpace)) {
    return run_end(s, j, k);
  }
  // Whitespace at i: \s+(?!\S) leaves the last whitespace character before a
  // non-space to the next match; a lone one falls to \s+.
  size_t k_end = i;
  size_t last = i;
  while (k_end < s.size()) {
    if (regex_class(char_and_length(s, k_end, &len)) != Class::kSpace) break;
    last = k_end;
    k_end += len;
  }
  if (k_end == s.size() || last == i) return k_end;
  return last;
}

// HF's NormalizedString::prepend: `c` replaces the first character and
// that character is inserted after it, so both take its range.
NormalizedText prepended(const NormalizedText& t, char32_t c) {
  TextRewriter p(t);
  const auto first = static_cast<char32_t>(p.peek());
  p.replace(c);
  p.insert(first);
  while (!p.done()) p.keep();
  return p.finish();
}

// ' ' -> replacement, the prefix, then the words (Metaspace).
void metaspace(const PreTokenizerStep& step, const NormalizedText& t,
               std::vector<NormalizedText>* out) {
  TextRewriter w(t);
  for (int32_t c; (c = w.peek()) >= 0;) {
    if (c == ' ') {
      w.replace(step.replacement_char);
    } else {
      w.keep();
    }
  }
  NormalizedText r = w.finish();
  const bool starts = r.text.starts_with(step.replacement);
  const bool at_origin = !r.align.empty() && r.align.front().begin == 0;
  if (!r.empty() && !starts &&
      (step.prepend == PreTokenizerStep::kAlways ||
       (step.prepend == PreTokenizerStep::kFirst && at_origin))) {
    r = prepended(r, step.replacement_char);
  }
  if (!step.split) {
    if (!r.empty()) out->push_back(std::move(r));
    return;
  }
  // A word starts at a replacement not preceded by one.
  size_t start = 0;
  bool previous = false;
  for (size_t i = 0; i < r.text.size();) {
    size_t len = 0;
    const bool is_rep = char_and_length(r.text, i, &len) == step.replacement_char;
    if (is_rep && !previous && i > start) {
      out->push_back(r.slice(start, i));
      start = i;
    }
    previous = is_rep;
    i += len;
  }
  if (start < r.text.size()) out->push_back(r.slice(start, r.text.size()));
}

void byte_level(const PreTokenizerStep& step, NormalizedText t, std::vector<NormalizedText>* out) {
  if (step.add_prefix_space && !t.text.starts_with(' ') && !t.empty()) {
    t = prepended(t, U' ');
  }
  std::vector<std::pair<size_t, size_t>> words;
  if (step.use_regex) {
    byte_level_split(t.text, &words);
  } else if (!t.empty()) {
    words.emplace_back(0, t.text.size());
  }
  const ByteLevelMap& map = byte_level_map();
  for (const auto& [b, e] : words) {
    NormalizedText word = t.slice(b, e);
    TextRewriter w(word);
    for (size_t i = 0; i < word.text.size();) {
      const size_t len = static_cast<size_t>(utf8_length(static_cast<unsigned char>(word.text[i])));
      w.replace(map.to_char[static_cast<unsigned char>(word.text[i])]);
      for (size_t k = 1; k < len; ++k) {
        w.insert(map.to_char[static_cast<unsigned char>(word.text[i + k])]);
      }
      i += len;
    }
    out->push_back(w.finish());
  }
}

void whitespace_split(const NormalizedText& t, std::vector<NormalizedText>* out) {
  size_t start = 0;
  bool in_word = false;
  for (size_t i = 0; i < t.text.size();) {
    size_t len = 0;
    const bool space = unicode::is_whitespace(char_and_length(t.text, i, &len));
    if (space && in_word) out->push_back(t.slice(start, i));
    if (!space && !in_word) start = i;
    in_word = !space;
    i += len;
  }
  if (in_word) out->push_back(t.slice(start, t.text.size()));
}

// HF's NormalizedString::split: the matches and the text between them, each
// marked (invert swaps the marks), then joined or dropped per behavior.
Status split_by_pattern(const PreTokenizerStep& step, const NormalizedText& t,
                        std::vector<NormalizedText>* out) {
  struct Piece {
    size_t begin, end;
    bool match;
  };
  if (t.empty()) return Status::Ok();
  std::vector<std::pair<size_t, size_t>> matches;
  TESSERA_RETURN_IF_ERROR(find_matches(
      step.regex, t.text,
      "tokenizer.json pre_tokenizer Split pattern \"" + json_input::clip(step.pattern) + "\"",
      &matches));
  std::vector<Piece> pieces;
  pieces.reserve(2 * matches.size() + 1);
  size_t previous = 0;
  for (const auto& [b, e] : matches) {
    if (b != previous) pieces.push_back({previous, b, step.invert});
    pieces.push_back({b, e, !step.invert});
    previous = e;
  }
  if (previous != t.text.size()) pieces.push_back({previous, t.text.size(), step.invert});
  // The pieces to keep, marked `match` when dropped (Removed only).
  std::vector<Piece> kept;
  bool previous_match = false;
  switch (step.behavior) {
    case PreTokenizerStep::kRemoved:
      kept = std::move(pieces);
      break;
    case PreTokenizerStep::kIsolated:
      for (const Piece& p : pieces) kept.push_back({p.begin, p.end, false});
      break;
    case PreTokenizerStep::kContiguous:
      for (const Piece& p : pieces) {
        if (p.match == previous_match && !kept.empty()) {
          kept.back().end = p.end;
        } else {
          kept.push_back({p.begin, p.end, false});
        }
        previous_match = p.match;
      }
      break;
    case PreTokenizerStep::kMergedWithPrevious:
      for (const Piece& p : pieces) {
        if (p.match && !previous_match && !kept.empty()) {
          kept.back().end = p.end;
        } else {
          kept.push_back({p.begin, p.end, false});
        }
        previous_match = p.match;
      }
      break;
    case PreTokenizerStep::kMergedWithNext:
      for (size_t i = pieces.size(); i-- > 0;) {
        const Piece& p = pieces[i];
        if (p.match && !previous_match && !kept.empty()) {
          kept.back().begin = p.begin;
        } else {
          kept.push_back({p.begin, p.end, false});
        }
        previous_match = p.match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  for (const Piece& p : kept) {
    if (!p.match && p.end > p.begin) out->push_back(t.slice(p.begin, p.end));
  }
  return Status::Ok();
}

Status read_split(const JsonFields& f, const json& p, const std::string& prefix,
                  PreTokenizerStep* s) {
  s->kind = PreTokenizerStep::kSplit;
  const auto pattern = p.find("pattern");
  std::unique_ptr<const icu::RegexPattern> compiled;
  if (pattern != p.end() && pattern->is_object() && pattern->size() == 1 &&
      pattern->contains("String") && (*pattern)["String"].is_string()) {
    s->pattern = (*pattern)["String"].get<std::string>();
    TESSERA_RETURN_IF_ERROR(
        compile_hf_literal(f, prefix + "pattern.String", s->pattern, &compiled));
  } else if (pattern != p.end() && pattern->is_object() && pattern->size() == 1 &&
             pattern->contains("Regex") && (*pattern)["Regex"].is_string()) {
    s->pattern = (*pattern)["Regex"].get<std::string>();
    s->pattern_is_regex = true;
    TESSERA_RETURN_IF_ERROR(compile_hf_regex(f, prefix + "pattern.Regex", s->pattern, &compiled));
  } else {
    return f.error(prefix + "pattern", "must be {\"String\": ...} or {\"Regex\": ...}");
  }
  s->regex = std::move(compiled);
  const auto behavior = p.find("behavior");
  const json value = behavior == p.end() ? json() : *behavior;
  bool known = false;
  for (size_t i = 0; i < std::size(kBehaviors); ++i) {
    if (value.is_string() && value.get<std::string>() == kBehaviors[i]) {
      s->behavior = static_cast<PreTokenizerStep::Behavior>(i);
      known = true;
    }
  }
  if (!known) {
    return f.unsupported_value(prefix + "behavior", value,
                               "\"Removed\", \"Isolated\", \"MergedWithPrevious\", "
                               "\"MergedWithNext\" or \"Contiguous\"");
  }
  return f.get_bool(p, prefix, "invert", &s->invert);
}

Status read_pre_tokenizer_step(const JsonFields& f, const json& p, const std::string& field,
                               std::vector<PreTokenizerStep>* steps) {
  const std::string type = JsonFields::type_of(p);
  const std::string prefix = field + ".";
  PreTokenizerStep s{};
  if (type == "ByteLevel") {
    s.kind = PreTokenizerStep::kByteLevel;
    s.add_prefix_space = true;
    TESSERA_RETURN_IF_ERROR(f.get_bool(p, prefix, "add_prefix_space", &s.add_prefix_space));
    TESSERA_RETURN_IF_ERROR(f.get_bool(p, prefix, "use_regex", &s.use_regex));
  } else if (type == "Metaspace") {
    s.kind = PreTokenizerStep::kMetaspace;
    s.replacement = "\xE2\x96\x81";  // U+2581
    TESSERA_RETURN_IF_ERROR(f.get_string(p, prefix, "replacement", &s.replacement));
    if (s.replacement.empty() || find_invalid_utf8(s.replacement) != s.replacement.size() ||
        static_cast<size_t>(utf8_length(static_cast<unsigned char>(s.replacement[0]))) !=
            s.replacement.size()) {
      return f.error(prefix + "replacement",
                     "must be one character, not \"" + json_input::clip(s.replacement) + "\"");
    }
    int len = 0;
    s.replacement_char = decode_utf8(s.replacement.data(), &len);
    bool add_prefix_space = true;  // the field before prepend_scheme existed
    TESSERA_RETURN_IF_ERROR(f.get_bool(p, prefix, "add_prefix_space", &add_prefix_space));
    std::string scheme = add_prefix_space ? "always" : "never";
    TESSERA_RETURN_IF_ERROR(f.get_string(p, prefix, "prepend_scheme", &scheme));
    if (scheme == "always") {
      s.prepend = PreTokenizerStep::kAlways;
    } else if (scheme == "first") {
      s.prepend = PreTokenizerStep::kFirst;
    } else if (scheme == "never") {
      s.prepend = PreTokenizerStep::kNever;
    } else {
      return f.unsupported_value(prefix + "prepend_scheme", scheme,
                                 "\"always\", \"first\" or \"never\"");
    }
    TESSERA_RETURN_IF_ERROR(f.get_bool(p, prefix, "split", &s.split));
  } else if (type == "WhitespaceSplit") {
    s.kind = PreTokenizerStep::kWhitespaceSplit;
  } else if (type == "Split") {
    TESSERA_RETURN_IF_ERROR(read_split(f, p, prefix, &s));
  } else if (type == "Sequence") {
    const auto list = p.find("pretokenizers");
    if (list == p.end() || !list->is_array()) {
      return f.error(prefix + "pretokenizers", "must be an array");
    }
    for (size_t i = 0; i < list->size(); ++i) {
      TESSERA_RETURN_IF_ERROR(read_pre_tokenizer_step(
          f, (*list)[i], prefix + "pretokenizers[" + std::to_string(i) + "]", steps));
    }
    return Status::Ok();
  } else {
    return f.unsupported_value(field, p.is_object() ? p.value("type", json()) : p,
                               kSupportedPreTokenizers);
  }
  steps->push_back(std::move(s));
  return Status::Ok();
}

}  // namespace

void byte_level_split(std::string_view text, std::vector<std::pair<size_t, size_t>>* out) {
  for (size_t i = 0; i < text.size();) {
    const size_t end = byte_level_match(text, i);
    out->emplace_back(i, end);
    i = end;
  }
}

Status PreTokenizer::read(const JsonFields& f, const json& root, PreTokenizer* out) {
  PreTokenizer p;
  const auto it = root.find("pre_tokenizer");
  if (it != root.end() && !it->is_null()) {
    TESSERA_RETURN_IF_ERROR(read_pre_tokenizer_step(f, *it, "pre_tokenizer", &p.steps_));
  }
  *out = std::move(p);
  return Status::Ok();
}

Status PreTokenizer::split(NormalizedText span, std::vector<NormalizedText>* words) const {
  std::vector<NormalizedText> current, next;
  current.push_back(std::move(span));
  for (const PreTokenizerStep& step : steps_) {
    next.clear();
    for (NormalizedText& t : current) {
      switch (step.kind) {
        case PreTokenizerStep::kByteLevel:
          byte_level(step, std::move(t), &next);
          break;
        case PreTokenizerStep::kMetaspace:
          metaspace(step, t, &next);
          break;
        case PreTokenizerStep::kWhitespaceSplit:
          whitespace_split(t, &next);
          break;
        case PreTokenizerStep::kSplit:
          TESSERA_RETURN_IF_ERROR(split_by_pattern(step, t, &next));
          break;
      }
    }
    current.swap(next);
  }
  for (NormalizedText& t : current) {
    if (!t.empty()) words->push_back(std::move(t));
  }
  return Status::Ok();
}

std::string PreTokenizer::describe() const {
  if (steps_.empty()) return "none";
  std::string s;
  for (const PreTokenizerStep& step : steps_) {
    if (!s.empty()) s += " + ";
    switch (step.kind) {
      case PreTokenizerStep::kByteLevel:
        s += std::string("ByteLevel (add_prefix_space ") +
             (step.add_prefix_space ? "true" : "false") + ", use_regex " +
             (step.use_regex ? "true" : "false") + ")";
        break;
      case PreTokenizerStep::kMetaspace:
        s += "Metaspace (\"" + step.replacement + "\", prepend_scheme " +
             (step.prepend == PreTokenizerStep::kAlways  ? "always"
              : step.prepend == PreTokenizerStep::kFirst ? "first"
                                                         : "never") +
             ", split " + (step.split ? "true" : "false") + ")";
        break;
      case PreTokenizerStep::kWhitespaceSplit:
        s += "WhitespaceSplit";
        break;
      case PreTokenizerStep::kSplit:
        s += std::string("Split (") + (step.pattern_is_regex ? "Regex" : "String") + " \"" +
             json_input::clip(step.pattern) + "\", " + kBehaviors[step.behavior] +
             (step.invert ? ", invert" : "") + ")";
        break;
    }
  }
  return s;
}

}  // namespace tessera::model::tokenizers

#include "model/tokenizers/normalizers.h"

#include <unicode/regex.h>
#include <unicode/ubrk.h>
#include <unicode/utext.h>

#include <utility>

#include "model/tokenizer_unicode.h"
#include "model/tokenizer_utf8.h"
#include "model/tokenizers/hf_regex.h"
#include "model/tokenizers/normalizer_step.h"
#include "runtime/json_input.h"

namespace tessera::model::tokenizers {

using nlohmann::json;

namespace {

constexpr const char* kSupportedNormalizers =
    "\"NFC\", \"NFD\", \"NFKC\", \"NFKD\", \"Lowercase\", \"Strip\", \"Replace\", \"Prepend\", "
    "\"Precompiled\", \"Sequence\" or null";

}  // namespace

NormalizedText apply_changes(const NormalizedText& src, const Changes& changes) {
  TextRewriter w(src);
  for (const auto& [c, change] : changes) {
    if (change > 0) {
      w.insert(c);
    } else {
      w.replace(c, -change);
    }
  }
  return w.finish();
}

// Appends `to` as the replacement of `from_chars` source characters, the way
// HF's normalizers (and Precompiled's `replace`) spread the change.
void replace_chars(Changes* changes, int from_chars, std::u32string_view to) {
  const size_t first = changes->size();
  for (char32_t c : to) changes->emplace_back(c, 0);
  const int diff = static_cast<int>(to.size()) - from_chars;
  if (diff > 0) {
    for (int k = 0; k < diff; ++k) (*changes)[changes->size() - 1 - k].second = 1;
  } else if (diff < 0 && !changes->empty()) {
    changes->back().second += diff;  // may reach back into an earlier character, as HF does
  }
  (void)first;
}

std::u32string code_points_of(std::string_view s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    int len = 0;
    out.push_back(decode_utf8(s.data() + i, &len));
    i += static_cast<size_t>(len);
  }
  return out;
}

namespace {

class Strip final : public Normalizer::Step {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  std::string name() const override {
    return std::string("Strip(") + (left_ ? "left" : "") + (left_ && right_ ? ", " : "") +
           (right_ ? "right" : "") + ")";
  }
  Status apply(NormalizedText* t) const override {
    const std::u32string chars = code_points_of(t->text);
    size_t lead = 0, trail = 0;
    if (left_) {
      while (lead < chars.size() && unicode::is_whitespace(chars[lead])) ++lead;
    }
    if (right_) {
      while (trail < chars.size() - lead &&
             unicode::is_whitespace(chars[chars.size() - 1 - trail])) {
        ++trail;
      }
    }
    if (lead == 0 && trail == 0) return Status::Ok();
    TextRewriter w(*t);
    for (size_t i = 0; i < chars.size(); ++i) {
      if (i < lead || i >= chars.size() - trail) {
        w.remove();
      } else {
        w.keep();
      }
    }
    *t = w.finish();
    return Status::Ok();
  }

 private:
  bool left_, right_;
};

// Replace: each non-overlapping match (leftmost first) is removed and the
// content inserted, aligned to the match's last byte (HF's replace).
class Replace final : public Normalizer::Step {
 public:
  Replace(std::string pattern, std::unique_ptr<const icu::RegexPattern> regex,
          const std::string& content)
      : pattern_(std::move(pattern)), regex_(std::move(regex)), content_(code_points_of(content)) {}
  std::string name() const override { return "Replace(\"" + json_input::clip(pattern_) + "\")"; }
  Status apply(NormalizedText* t) const override {
    std::vector<std::pair<size_t, size_t>> matches;
    TESSERA_RETURN_IF_ERROR(find(t->text, &matches));
    if (matches.empty()) return Status::Ok();
    TextRewriter w(*t);
    for (const auto& [b, e] : matches) {
      while (w.position() < b) w.keep();
      while (w.position() < e) w.remove();
      for (char32_t c : content_) w.insert(c);
    }
    while (!w.done()) w.keep();
    *t = w.finish();
    return Status::Ok();
  }

 private:
  Status find(const std::string& s, std::vector<std::pair<size_t, size_t>>* out) const {
    if (!regex_) {
      if (pattern_.empty()) return Status::Ok();
      for (size_t at = s.find(pattern_); at != std::string::npos; at = s.find(pattern_, at)) {
        out->emplace_back(at, at + pattern_.size());
        at += pattern_.size();
      }
      return Status::Ok();
    }
    std::vector<std::pair<size_t, size_t>> matches;
    TESSERA_RETURN_IF_ERROR(
        find_matches(regex_, s, "tokenizer.json normalizer " + name() + "'s pattern", &matches));
    for (const auto& [b, e] : matches) {
      if (e > b) out->emplace_back(b, e);
    }
    return Status::Ok();
  }

  std::string pattern_;
  std::shared_ptr<const icu::RegexPattern> regex_;
  std::u32string content_;
};

class Prepend final : public Normalizer::Step {
 public:
  explicit Prepend(std::string s) : s_(std::move(s)), chars_(code_points_of(s_)) {}
  std::string name() const override { return "Prepend(\"" + json_input::clip(s_) + "\")"; }
  Status apply(NormalizedText* t) const override {
    if (t->empty() || chars_.empty()) return Status::Ok();
    // HF: the prefix's first character replaces the text's first, the rest
    // of it and that first character are inserted: all share its range.
    TextRewriter w(*t);
    const auto first = static_cast<char32_t>(w.peek());
    w.replace(chars_[0]);
    for (size_t k = 1; k < chars_.size(); ++k) w.insert(chars_[k]);
    w.insert(first);
    while (!w.done()) w.keep();
    *t = w.finish();
    return Status::Ok();
  }

 private:
  std::string s_;
  std::u32string chars_;
};

// A grapheme-cluster iterator per thread: opening one costs more than
// normalizing a short text, and an iterator is not thread-safe.
UBreakIterator* grapheme_iterator() {
  struct Owned {
    UBreakIterator* it = nullptr;
    ~Owned() {
      if (it) ubrk_close(it);
    }
  };
  thread_local Owned owned;
  if (owned.it == nullptr) {
    UErrorCode err = U_ZERO_ERROR;
    owned.it = ubrk_open(UBRK_CHARACTER, "", nullptr, 0, &err);
    if (U_FAILURE(err)) owned.it = nullptr;
  }
  return owned.it;
}

// sentencepiece's normalization, grapheme by grapheme as HF does it: a
// grapheme shorter than 6 bytes is looked up whole (its shortest matching
// prefix replaces all of it); otherwise, or when it has no entry, each of
// its characters is looked up on its own.
class Precompiled final : public Normalizer::Step {
 public:
  explicit Precompiled(PrecompiledCharsmap map) : map_(std::move(map)) {}
  std::string name() const override {
    return "Precompiled (" + std::to_string(map_.trie_units()) + " trie units)";
  }
  Status apply(NormalizedText* t) const override {
    const std::string& s = t->text;
    if (s.empty()) return Status::Ok();
    Changes changes;
    bool modified = false;
    const auto one = [&](std::string_view part) {
      if (const auto norm = map_.transform(part)) {
        modified = true;
        replace_chars(&changes, static_cast<int>(code_points_of(part).size()),
                      code_points_of(*norm));
        return true;
      }
      return false;
    };
    UErrorCode err = U_ZERO_ERROR;
    UBreakIterator* graphemes = grapheme_iterator();
    if (graphemes == nullptr) return Status::Ok();
    UText* text = utext_openUTF8(nullptr, s.data(), static_cast<int64_t>(s.size()), &err);
    ubrk_setUText(graphemes, text, &err);
    int32_t begin = ubrk_first(graphemes);
    for (int32_t end = ubrk_next(graphemes); end != UBRK_DONE;
         begin = end, end = ubrk_next(graphemes)) {
      const std::string_view g =
          std::string_view(s).substr(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
      if (g.size() < 6 && one(g)) continue;
      for (size_t i = 0; i < g.size();) {
        const size_t len = static_cast<size_t>(utf8_length(static_cast<unsigned char>(g[i])));
        const std::string_view part = g.substr(i, len);
        if (!one(part)) {
          int n = 0;
          changes.emplace_back(decode_utf8(part.data(), &n), 0);
        }
        i += len;
      }
    }
    utext_close(text);
    if (modified) *t = apply_changes(*t, changes);
    return Status::Ok();
  }

 private:
  PrecompiledCharsmap map_;
};

Status read_normalizer_step(const JsonFields& f, const json& n, const std::string& field,
                            std::vector<std::unique_ptr<const Normalizer::Step>>* steps) {
  const std::string type = JsonFields::type_of(n);
  const std::string prefix = field + ".";
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    std::unique_ptr<const Normalizer::Step> step;
    TESSERA_RETURN_IF_ERROR(make_unicode_form(type, &step));
    steps->push_back(std::move(step));
    return Status::Ok();
  }
  if (type == "Lowercase") {
    steps->push_back(make_lowercase());
    return Status::Ok();
  }
  if (type == "Strip") {
    bool left = true, right = true;
    TESSERA_RETURN_IF_ERROR(f.get_bool(n, prefix, "strip_left", &left));
    TESSERA_RETURN_IF_ERROR(f.get_bool(n, prefix, "strip_right", &right));
    steps->push_back(std::make_unique<Strip>(left, right));
    return Status::Ok();
  }
  if (type == "Replace") {
    const auto pattern = n.find("pattern");
    std::string content;
    TESSERA_RETURN_IF_ERROR(f.get_string(n, prefix, "content", &content));
    if (pattern != n.end() && pattern->is_object() && pattern->contains("String") &&
        (*pattern)["String"].is_string()) {
      steps->push_back(
          std::make_unique<Replace>((*pattern)["String"].get<std::string>(), nullptr, content));
      return Status::Ok();
    }
    if (pattern != n.end() && pattern->is_object() && pattern->contains("Regex") &&
        (*pattern)["Regex"].is_string()) {
      const std::string re = (*pattern)["Regex"].get<std::string>();
      std::unique_ptr<const icu::RegexPattern> compiled;
      TESSERA_RETURN_IF_ERROR(compile_hf_regex(f, prefix + "pattern.Regex", re, &compiled));
      steps->push_back(std::make_unique<Replace>(re, std::move(compiled), content));
      return Status::Ok();
    }
    return f.error(prefix + "pattern", "must be {\"String\": ...} or {\"Regex\": ...}");
  }
  if (type == "Prepend") {
    std::string s;
    TESSERA_RETURN_IF_ERROR(f.get_string(n, prefix, "prepend", &s));
    steps->push_back(std::make_unique<Prepend>(std::move(s)));
    return Status::Ok();
  }
  if (type == "Precompiled") {
    const auto map = n.find("precompiled_charsmap");
    if (map == n.end() || map->is_null()) return Status::Ok();  // HF: no charsmap, no change
    if (!map->is_string()) return f.error(prefix + "precompiled_charsmap", "must be a string");
    PrecompiledCharsmap m;
    TESSERA_RETURN_IF_ERROR(PrecompiledCharsmap::parse(
        map->get<std::string>(), f.path() + ": " + prefix + "precompiled_charsmap", &m));
    steps->push_back(std::make_unique<Precompiled>(std::move(m)));
    return Status::Ok();
  }
  if (type == "Sequence") {
    const auto list = n.find("normalizers");
    if (list == n.end() || !list->is_array()) {
      return f.error(prefix + "normalizers", "must be an array");
    }
    for (size_t i = 0; i < list->size(); ++i) {
      TESSERA_RETURN_IF_ERROR(read_normalizer_step(
          f, (*list)[i], prefix + "normalizers[" + std::to_string(i) + "]", steps));
    }
    return Status::Ok();
  }
  return f.unsupported_value(field, n.is_object() ? n.value("type", json()) : n,
                             kSupportedNormalizers);
}

}  // namespace

Normalizer::Normalizer() = default;
Normalizer::~Normalizer() = default;
Normalizer::Normalizer(Normalizer&&) noexcept = default;
Normalizer& Normalizer::operator=(Normalizer&&) noexcept = default;

Status Normalizer::read(const JsonFields& f, const json& root, Normalizer* out) {
  Normalizer n;
  const auto it = root.find("normalizer");
  if (it != root.end() && !it->is_null()) {
    TESSERA_RETURN_IF_ERROR(read_normalizer_step(f, *it, "normalizer", &n.steps_));
  }
  *out = std::move(n);
  return Status::Ok();
}

Status Normalizer::normalize(NormalizedText* text) const {
  // Every step together may grow the text at most kMaxGrowth times (plus a
  // little for short texts): HF has no bound, and a chain of Replace steps
  // that each multiply their input reached bad_alloc after 23 s. The most a
  // real normalizer makes of one character is NFKD's 18 (U+FDFA).
  constexpr size_t kMaxGrowth = 32;
  constexpr size_t kSlack = 1024;
  const size_t bound = text->text.size() * kMaxGrowth + kSlack;
  for (const auto& step : steps_) {
    TESSERA_RETURN_IF_ERROR(step->apply(text));
    if (text->text.size() > bound) {
      return invalid_argument("tokenizer.json normalizer " + step->name() + " made the text " +
                              std::to_string(text->text.size()) + " bytes, more than " +
                              std::to_string(kMaxGrowth) + "x its input: a hostile or broken " +
                              "normalizer");
    }
  }
  return Status::Ok();
}

std::string Normalizer::describe() const {
  if (steps_.empty()) return "none";
  std::string s;
  for (const auto& step : steps_) s += (s.empty() ? "" : " + ") + step->name();
  return s;
}

}  // namespace tessera::model::tokenizers

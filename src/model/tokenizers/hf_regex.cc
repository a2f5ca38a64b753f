#include "model/tokenizers/hf_regex.h"

#include <unicode/utext.h>

#include <algorithm>
#include <array>
#include <limits>

#include "runtime/json_input.h"

namespace tessera::model::tokenizers {

namespace {

// Oniguruma (its default syntax, UTF-8, as HF's onig crate compiles) and ICU
// read these escapes differently; each becomes a set with Oniguruma's
// meaning, valid inside and outside brackets:
//   \h \H  Oniguruma: a hexadecimal digit; ICU: horizontal white space
//   \v     Oniguruma: U+000B alone; ICU: any vertical white space
// Oniguruma escapes ICU would compile as something else (\K, \g<1>, \O, \y,
// \Y) are refused; other Oniguruma-only syntax ((?~...), \p{^L}) ICU refuses
// itself. What Qwen2's and GPT-2's patterns use means the same in both:
// (?i:...) with Unicode case folding ('s also matches 'ſ), \p{L}, \p{N},
// lookahead, greedy quantifiers, negated sets, and \s \S: White_Space in
// both (ICU's documentation says [\t\n\f\r\p{Z}], but ICU 72 matches
// White_Space, U+000B and U+0085 included; the goldens' code point runs check it).
constexpr std::string_view kOnigurumaOnly = "KgOyY";
constexpr size_t kCachedMatchers = 16;  // per thread

std::string_view replacement(char escape) {
  switch (escape) {
    case 'h':
      return "[0-9A-Fa-f]";
    case 'H':
      return "[^0-9A-Fa-f]";
    case 'v':
      return "\\x{0B}";
    default:
      return {};
  }
}

Status compile(const JsonFields& f, const std::string& field, const std::string& shown,
               const std::string& icu_pattern, uint32_t flags,
               std::unique_ptr<const icu::RegexPattern>* out) {
  UErrorCode err = U_ZERO_ERROR;
  UParseError pe;
  std::unique_ptr<icu::RegexPattern> compiled(
      icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(icu_pattern), flags, pe, err));
  if (U_FAILURE(err) || !compiled) {
    return f.error(field, "\"" + json_input::clip(shown) +
                              "\" is not a regular expression tessera can compile (" +
                              u_errorName(err) + ")");
  }
  *out = std::move(compiled);
  return Status::Ok();
}

// A matcher per thread and pattern, reused: making one costs more than
// matching a short word. The most recent few are kept, each holding its
// pattern alive (a tokenizer unloaded leaves at most that many behind).
icu::RegexMatcher* matcher_for(const std::shared_ptr<const icu::RegexPattern>& regex) {
  struct Entry {
    std::shared_ptr<const icu::RegexPattern> pattern;
    std::unique_ptr<icu::RegexMatcher> matcher;  // destroyed before its pattern
  };
  thread_local std::array<Entry, kCachedMatchers> cache;
  thread_local size_t next = 0;
  for (Entry& e : cache) {
    if (e.pattern == regex) return e.matcher.get();
  }
  UErrorCode err = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> m(regex->matcher(err));
  if (U_FAILURE(err) || !m) return nullptr;

  Entry& e = cache[next++ % kCachedMatchers];
  e.matcher.reset();
  e.pattern = regex;
  e.matcher = std::move(m);
  return e.matcher.get();
}

}  // namespace

bool oniguruma_to_icu(std::string_view pattern, std::string* out, std::string* refused) {
  out->clear();
  out->reserve(pattern.size());
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\' || i + 1 == pattern.size()) {
      out->push_back(pattern[i]);
      continue;
    }
    const char next = pattern[i + 1];
    if (next == 'Q') {  // \Q...\E: literal, copied as it is
      const size_t end = pattern.find("\\E", i + 2);
      const size_t stop = end == std::string_view::npos ? pattern.size() : end + 2;
      out->append(pattern.substr(i, stop - i));
      i = stop - 1;
      continue;
    }
    if (kOnigurumaOnly.find(next) != std::string_view::npos) {
      *refused = pattern.substr(i, 2);
      return false;
    }
    if (const std::string_view r = replacement(next); !r.empty()) {
      out->append(r);
    } else {
      out->append(pattern.substr(i, 2));  // any other escape, "\\" included
    }
    ++i;
  }
  return true;
}

Status compile_hf_regex(const JsonFields& f, const std::string& field, const std::string& pattern,
                        std::unique_ptr<const icu::RegexPattern>* out) {
  std::string icu_pattern, refused;
  if (!oniguruma_to_icu(pattern, &icu_pattern, &refused)) {
    return f.unsupported_field(field, "\"" + json_input::clip(pattern) + "\" uses " + refused +
                                          ", which ICU reads otherwise than Oniguruma");
  }
  return compile(f, field, pattern, icu_pattern, 0, out);
}

Status compile_hf_literal(const JsonFields& f, const std::string& field, const std::string& literal,
                          std::unique_ptr<const icu::RegexPattern>* out) {
  // ICU refuses an empty literal; the empty regex matches the same (the empty
  // string at every position).
  return compile(f, field, literal, literal, literal.empty() ? 0 : UREGEX_LITERAL, out);
}

RegexLimits regex_limits(size_t bytes) {
  // 4x the measured linear cost, plus a floor of ~0.13 s of matching.
  const size_t mb = bytes >> 20;
  const size_t steps = 1000 + 450 * mb;
  const size_t stack = (size_t{8} << 20) + 64 * bytes;
  constexpr size_t kMax = std::numeric_limits<int32_t>::max();
  return {static_cast<int32_t>(std::min(steps, kMax)), static_cast<int32_t>(std::min(stack, kMax))};
}

Status find_matches(const std::shared_ptr<const icu::RegexPattern>& regex, std::string_view text,
                    const std::string& what, std::vector<std::pair<size_t, size_t>>* out) {
  icu::RegexMatcher* m = matcher_for(regex);
  if (m == nullptr) return internal_error(what + ": ICU could not make a matcher");
  const RegexLimits limits = regex_limits(text.size());
  UErrorCode limit_err = U_ZERO_ERROR;
  m->setTimeLimit(limits.steps, limit_err);
  m->setStackLimit(limits.stack_bytes, limit_err);
  if (U_FAILURE(limit_err)) {
    return internal_error(what + ": ICU refused its limits: " + u_errorName(limit_err));
  }
  UErrorCode err = U_ZERO_ERROR;
  UText ut = UTEXT_INITIALIZER;
  utext_openUTF8(&ut, text.data(), static_cast<int64_t>(text.size()), &err);
  m->reset(&ut);
  bool matched = false;
  size_t previous_end = 0;
  // ICU goes on one character after an empty match, as Oniguruma does, but
  // also accepts an empty match where a non-empty one ended; HF does not.
  while (m->find(err) && U_SUCCESS(err)) {
    const auto b = static_cast<size_t>(m->start64(err));
    const auto e = static_cast<size_t>(m->end64(err));
    if (b == e && matched && b == previous_end) continue;
    out->emplace_back(b, e);
    matched = true;
    previous_end = e;
  }
  utext_close(&ut);
  if (err == U_REGEX_TIME_OUT || err == U_REGEX_STACK_OVERFLOW) {
    return invalid_argument(
        what + " backtracks without end on this text: ICU's " +
        (err == U_REGEX_TIME_OUT ? "time limit" : "stack limit") +
        " stopped it (Oniguruma's retry limit stops such patterns in HF tokenizers too); the "
        "tokenizer.json pattern is hostile or broken");
  }
  if (U_FAILURE(err)) return internal_error(what + ": ICU failed: " + u_errorName(err));
  return Status::Ok();
}

}  // namespace tessera::model::tokenizers

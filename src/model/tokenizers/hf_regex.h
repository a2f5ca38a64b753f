// The regular expressions of tokenizer.json (Split's and Replace's
// pattern.Regex). HF compiles them with Oniguruma; tessera with ICU, after
// rewriting the escapes whose meaning differs (hf_regex.cc lists them).
#pragma once

#include <unicode/regex.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/tokenizers/json_fields.h"
#include "tessera/status.h"

namespace tessera::model::tokenizers {

// `pattern` (Oniguruma syntax) as an ICU pattern of the same meaning in
// *out; false, the escape in *refused, for one ICU would read otherwise.
bool oniguruma_to_icu(std::string_view pattern, std::string* out, std::string* refused);

// Compiles `pattern` from tokenizer.json field `field`; a pattern ICU
// refuses is an InvalidArgument, one using an escape only Oniguruma has an
// Unsupported, each naming the field and the pattern.
Status compile_hf_regex(const JsonFields& f, const std::string& field, const std::string& pattern,
                        std::unique_ptr<const icu::RegexPattern>* out);

// A string pattern as HF compiles it (escaped: every character literal).
Status compile_hf_literal(const JsonFields& f, const std::string& field, const std::string& literal,
                          std::unique_ptr<const icu::RegexPattern>* out);

// The byte ranges of the matches in `text` (valid UTF-8), leftmost first, as
// HF's find_iter yields them: an empty match where the previous match ended
// is skipped (the search goes on one character later). A pattern that
// backtracks without end (`(a+)+$` on a run of a's) is stopped by ICU's time
// and stack limits, as Oniguruma's retry limit stops it in HF: an
// InvalidArgument naming `what` (the tokenizer.json step and pattern), never
// a hang. The limits grow with the text (regex_limits), so that a long
// legitimate match (every space of a 10 MB run under GPT-2's `\s+(?!\S)`)
// is never refused.
Status find_matches(const std::shared_ptr<const icu::RegexPattern>& regex, std::string_view text,
                    const std::string& what, std::vector<std::pair<size_t, size_t>>* out);

// ICU's limits for one find over `bytes` of text: steps of its match engine
// (10,000 operations each, ~0.13 ms on the Zen 5) and bytes of backtracking
// stack. Measured there with ICU 72: a linear match takes ~110 steps per MB
// of text and ~17 bytes of stack per byte; the limits are 4x that plus a
// floor, and `(a+)+$` on 40 a's (which never ends) is stopped in ~0.13 s.
struct RegexLimits {
  int32_t steps;
  int32_t stack_bytes;
};
RegexLimits regex_limits(size_t bytes);

}  // namespace tessera::model::tokenizers

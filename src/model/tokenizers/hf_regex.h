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
// is skipped (the search goes on one character later).
void find_matches(const std::shared_ptr<const icu::RegexPattern>& regex, std::string_view text,
                  std::vector<std::pair<size_t, size_t>>* out);

}  // namespace tessera::model::tokenizers

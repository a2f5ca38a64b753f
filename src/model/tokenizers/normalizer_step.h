// The interface of one normalizer step and the helpers the steps share
// (normalizers.cc, unicode_forms.cc): HF's transformation lists.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/tokenizers/normalized_text.h"
#include "model/tokenizers/normalizers.h"
#include "tessera/status.h"

namespace tessera::model::tokenizers {

struct Normalizer::Step {
  virtual ~Step() = default;
  virtual Status apply(NormalizedText* t) const = 0;
  virtual std::string name() const = 0;
};

// A transformation list as HF builds them: (character, change), change 0 =
// replaces the next source character, +1 = inserted, -n = replaces it and
// absorbs n more.
using Changes = std::vector<std::pair<char32_t, int>>;

// `src` rewritten by `changes`, with HF's alignments.
NormalizedText apply_changes(const NormalizedText& src, const Changes& changes);

// Appends `to` as the replacement of `from_chars` source characters, the way
// HF's Precompiled normalizer spreads the change: all 0, then the extra
// characters +1, or the last one absorbing the removed ones (which may reach
// back into an earlier character, as HF does).
void replace_chars(Changes* changes, int from_chars, std::u32string_view to);

std::u32string code_points_of(std::string_view s);

// NFC, NFD, NFKC, NFKD (`type`) and Lowercase as HF computes them.
Status make_unicode_form(const std::string& type, std::unique_ptr<const Normalizer::Step>* out);
std::unique_ptr<const Normalizer::Step> make_lowercase();

}  // namespace tessera::model::tokenizers

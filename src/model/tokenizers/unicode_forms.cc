// NFx and Lowercase normalizer steps (normalizer_step.h), kept apart from
// the others for their Unicode-version details.
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf16.h>

#include <algorithm>

#include "model/tokenizer_unicode.h"
#include "model/tokenizer_utf8.h"
#include "model/tokenizers/normalizer_step.h"

namespace tessera::model::tokenizers {
namespace {

// HF's NFx tables (the unicode-normalization-alignments crate) are Unicode
// 11.0: a character assigned later is left as it is (12.0's U+1F16C RAISED
// MR SIGN is not decomposed), as tokenizer_unicode.cc does for
// BertNormalizer's NFD. Found by the exhaustive comparison.
constexpr uint8_t kNormalizationMajor = 11;
constexpr uint8_t kNormalizationMinor = 0;

bool in_normalization_data(char32_t c) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  return age[0] < kNormalizationMajor ||
         (age[0] == kNormalizationMajor && age[1] <= kNormalizationMinor);
}

// NFC / NFD / NFKC / NFKD as HF's crate computes them, so that every output
// character carries HF's change and therefore HF's alignment: each input
// character is decomposed (first part change 0, the rest +1), runs of
// combining marks are stably sorted by combining class (changes travel with
// their characters), and for the composed forms a mark that composes with
// the last starter merges into it (the composite's change is the sum of
// both, minus one). ICU answers the decompositions, classes and pairs.
class UnicodeForm final : public Normalizer::Step {
 public:
  UnicodeForm(std::string name, const UNormalizer2* decompose, const UNormalizer2* compose,
              bool recompose)
      : name_(std::move(name)), decompose_(decompose), compose_(compose), recompose_(recompose) {}
  std::string name() const override { return name_; }

  Status apply(NormalizedText* t) const override {
    struct Item {
      char32_t c;
      int change;
      uint8_t ccc;
    };
    std::vector<Item> items;
    items.reserve(t->text.size());
    bool changed = false;
    UChar buf[2 * kMaxExpansion];
    for (size_t i = 0; i < t->text.size();) {
      int len = 0;
      const char32_t c = decode_utf8(t->text.data() + i, &len);
      i += static_cast<size_t>(len);
      if (c < 0x80 || !in_normalization_data(c)) {
        items.push_back({c, 0, 0});
        continue;
      }
      UErrorCode err = U_ZERO_ERROR;
      const int32_t n = unorm2_getDecomposition(decompose_, static_cast<UChar32>(c), buf,
                                                2 * kMaxExpansion, &err);
      if (U_FAILURE(err) || n <= 0) {
        items.push_back({c, 0, combining_class(c)});
        continue;
      }
      changed = true;
      bool first = true;
      for (int32_t k = 0; k < n;) {
        UChar32 d;
        U16_NEXT(buf, k, n, d);
        const auto dc = static_cast<char32_t>(d);
        items.push_back({dc, first ? 0 : 1, combining_class(dc)});
        first = false;
      }
    }
    // Canonical ordering: stable sort of each run of non-starters.
    for (size_t i = 0; i < items.size();) {
      if (items[i].ccc == 0) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < items.size() && items[j].ccc != 0) ++j;
      if (j - i > 1) {
        std::stable_sort(items.begin() + static_cast<std::ptrdiff_t>(i),
                         items.begin() + static_cast<std::ptrdiff_t>(j),
                         [](const Item& x, const Item& y) { return x.ccc < y.ccc; });
        changed = true;
      }
      i = j;
    }
    if (recompose_) {
      // Canonical composition (UAX #15): a character composes with the last
      // starter when nothing between them blocks it.
      std::vector<Item> out;
      out.reserve(items.size());
      ptrdiff_t starter = -1;
      for (const Item& it : items) {
        if (starter >= 0) {
          const Item& last = out.back();
          const bool adjacent = static_cast<size_t>(starter) + 1 == out.size();
          const bool blocked = !adjacent && (last.ccc == 0 || last.ccc >= it.ccc);
          if (!blocked && (it.ccc != 0 || adjacent)) {
            const UChar32 pair = unorm2_composePair(compose_, static_cast<UChar32>(out[starter].c),
                                                    static_cast<UChar32>(it.c));
            if (pair >= 0 && in_normalization_data(static_cast<char32_t>(pair))) {
              Item& s = out[static_cast<size_t>(starter)];
              s.c = static_cast<char32_t>(pair);
              s.change += it.change - 1;
              changed = true;
              continue;
            }
          }
        }
        if (it.ccc == 0) starter = static_cast<ptrdiff_t>(out.size());
        out.push_back(it);
      }
      items.swap(out);
    }
    if (!changed) return Status::Ok();
    Changes changes;
    changes.reserve(items.size());
    for (const Item& it : items) changes.emplace_back(it.c, it.change);
    *t = apply_changes(*t, changes);
    return Status::Ok();
  }

 private:
  static constexpr int kMaxExpansion = 18;  // U+FDFA's compatibility decomposition
  static uint8_t combining_class(char32_t c) {
    return in_normalization_data(c) ? u_getCombiningClass(static_cast<UChar32>(c)) : 0;
  }
  std::string name_;
  const UNormalizer2* decompose_;  // its getDecomposition: NFD or NFKD
  const UNormalizer2* compose_;    // NFC, for composePair
  bool recompose_;
};

// Rust's char::to_lowercase follows Unicode 16.0; ICU 72 knows 15.0. The
// case pairs 16.0 added (found by the exhaustive comparison in
// tokenizer_models_test.cc against HF's Lowercase).
char32_t unicode16_lowercase(char32_t c) {
  if (c >= 0x10D50 && c <= 0x10D65) return c + 0x20;  // Garay capitals
  switch (c) {
    case 0x1C89:
      return 0x1C8A;  // CYRILLIC CAPITAL LETTER TJE
    case 0xA7CB:
      return 0x0264;  // LATIN CAPITAL LETTER RAMS HORN
    case 0xA7CC:
      return 0xA7CD;  // LATIN CAPITAL LETTER S WITH DIAGONAL STROKE
    case 0xA7DA:
      return 0xA7DB;  // LATIN CAPITAL LETTER LAMBDA
    case 0xA7DC:
      return 0x019B;  // LATIN CAPITAL LETTER LAMBDA WITH STROKE
    default:
      return 0;
  }
}

class Lowercase final : public Normalizer::Step {
 public:
  static bool changes_something(const std::string& s) {
    char32_t lower[unicode::kMaxLowercase];
    for (size_t i = 0; i < s.size();) {
      const auto b = static_cast<unsigned char>(s[i]);
      if (b < 0x80) {
        if (b >= 'A' && b <= 'Z') return true;
        ++i;
        continue;
      }
      int len = 0;
      const char32_t c = decode_utf8(s.data() + i, &len);
      i += static_cast<size_t>(len);
      if (unicode16_lowercase(c) || unicode::to_lower(c, lower) != 1 || lower[0] != c) return true;
    }
    return false;
  }
  std::string name() const override { return "Lowercase"; }
  Status apply(NormalizedText* t) const override {
    if (!changes_something(t->text)) return Status::Ok();  // most text: no rewrite
    TextRewriter w(*t);
    char32_t lower[unicode::kMaxLowercase];
    for (int32_t c; (c = w.peek()) >= 0;) {
      if (const char32_t l = unicode16_lowercase(static_cast<char32_t>(c))) {
        w.replace(l);
        continue;
      }
      const int n = unicode::to_lower(static_cast<char32_t>(c), lower);
      w.replace(lower[0]);
      for (int k = 1; k < n; ++k) w.insert(lower[k]);
    }
    *t = w.finish();
    return Status::Ok();
  }
};

}  // namespace

Status make_unicode_form(const std::string& type, std::unique_ptr<const Normalizer::Step>* out) {
  const bool compatibility = type == "NFKC" || type == "NFKD";
  const bool recompose = type == "NFC" || type == "NFKC";
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* nfc = unorm2_getNFCInstance(&err);
  const UNormalizer2* decompose = compatibility ? unorm2_getNFKCInstance(&err) : nfc;
  if (U_FAILURE(err) || nfc == nullptr || decompose == nullptr) {
    return internal_error("ICU has no " + type + " data");
  }
  *out = std::make_unique<UnicodeForm>(type, decompose, nfc, recompose);
  return Status::Ok();
}

std::unique_ptr<const Normalizer::Step> make_lowercase() { return std::make_unique<Lowercase>(); }

}  // namespace tessera::model::tokenizers

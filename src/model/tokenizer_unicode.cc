#include "model/tokenizer_unicode.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>

namespace tessera::model::unicode {
namespace {

// HF's category data (the `unicode_categories` crate) is Unicode 8.0; a code
// point assigned later is unassigned (Cn) there, so none of its categories hold.
constexpr uint8_t kCategoryMajor = 8;
constexpr uint8_t kCategoryMinor = 0;
// HF's NFD tables predate Unicode 13.0, whose U+11938 is the only canonical
// decomposition added since; later code points are left undecomposed.
constexpr uint8_t kNfdMajor = 12;
constexpr uint8_t kNfdMinor = 1;

bool assigned_by(char32_t c, uint8_t major, uint8_t minor) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  return age[0] < major || (age[0] == major && age[1] <= minor);
}

bool in_category_data(char32_t c) { return assigned_by(c, kCategoryMajor, kCategoryMinor); }

// Code points assigned by Unicode 8.0 whose general category has changed
// since, so "today's category + age" gives the wrong 8.0 answer. Found by the
// exhaustive comparison in tokenizer_test.cc; any other change fails there.
struct CategoryOverride {
  char32_t c;
  bool punctuation;      // P* in Unicode 8.0
  bool nonspacing_mark;  // Mn in Unicode 8.0
};
constexpr CategoryOverride kChangedSince8[] = {
    {0x166D, true, false},   // CANADIAN SYLLABICS CHI SIGN: Po then, So now
    {0x1734, false, true},   // HANUNOO SIGN PAMUDPOD: Mn then, Mc now
    {0x1885, false, false},  // MONGOLIAN LETTER ALI GALI BALUDA: Lo then, Mn now
    {0x1886, false, false},  // MONGOLIAN LETTER ALI GALI THREE BALUDA: Lo then, Mn now
    {0xA9BD, false, false},  // JAVANESE CONSONANT SIGN KERET: Mc then, Mn now
    {0x111C9, true, false},  // SHARADA SANDHI MARK: Po then, Mn now
};

const CategoryOverride* changed_since_8(char32_t c) {
  for (const CategoryOverride& o : kChangedSince8) {
    if (o.c == c) return &o;
  }
  return nullptr;
}

const UNormalizer2* nfd_instance() {
  static const UNormalizer2* nfd = [] {
    UErrorCode err = U_ZERO_ERROR;
    const UNormalizer2* n = unorm2_getNFDInstance(&err);
    // ICU's NFD data is built into libicuuc; failure means a broken install.
    return U_SUCCESS(err) ? n : nullptr;
  }();
  return nfd;
}

// UTF-16 -> code points; returns how many were written (at most `cap`).
int to_code_points(const UChar* s, int32_t len, char32_t* out, int cap) {
  int n = 0;
  for (int32_t i = 0; i < len && n < cap;) {
    UChar32 c;
    U16_NEXT(s, i, len, c);
    out[n++] = static_cast<char32_t>(c);
  }
  return n;
}

}  // namespace

bool is_whitespace(char32_t c) { return u_isUWhiteSpace(static_cast<UChar32>(c)); }

bool is_control(char32_t c) {
  if (c == U'\t' || c == U'\n' || c == U'\r') return false;
  const uint32_t mask = U_GET_GC_MASK(static_cast<UChar32>(c));
  if ((mask & (U_GC_CC_MASK | U_GC_CF_MASK | U_GC_CO_MASK)) == 0) return false;
  return in_category_data(c);
}

bool is_punctuation(char32_t c) {
  if (c < 0x80) {
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
           (c >= 0x7B && c <= 0x7E);
  }
  if (const CategoryOverride* o = changed_since_8(c)) return o->punctuation;
  if ((U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) == 0) return false;
  return in_category_data(c);
}

bool is_nonspacing_mark(char32_t c) {
  if (c < 0x80) return false;
  if (const CategoryOverride* o = changed_since_8(c)) return o->nonspacing_mark;
  if (u_charType(static_cast<UChar32>(c)) != U_NON_SPACING_MARK) return false;
  return in_category_data(c);
}

bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

int decompose(char32_t c, char32_t* out) {
  const UNormalizer2* nfd = nfd_instance();
  if (c >= 0xC0 && nfd != nullptr && assigned_by(c, kNfdMajor, kNfdMinor)) {
    UChar buf[2 * kMaxDecomposition];
    UErrorCode err = U_ZERO_ERROR;
    const int32_t len =
        unorm2_getDecomposition(nfd, static_cast<UChar32>(c), buf, 2 * kMaxDecomposition, &err);
    if (U_SUCCESS(err) && len > 0) return to_code_points(buf, len, out, kMaxDecomposition);
  }
  out[0] = c;
  return 1;
}

int to_lower(char32_t c, char32_t* out) {
  if (c < 0x80) {
    out[0] = (c >= U'A' && c <= U'Z') ? c + 0x20 : c;
    return 1;
  }
  const auto uc = static_cast<UChar32>(c);
  if (!u_hasBinaryProperty(uc, UCHAR_CHANGES_WHEN_LOWERCASED)) {
    out[0] = c;
    return 1;
  }
  UChar src[2];
  int32_t src_len = 0;
  U16_APPEND_UNSAFE(src, src_len, uc);
  UChar dst[2 * kMaxLowercase];
  UErrorCode err = U_ZERO_ERROR;
  // The root locale ("") gives the language-independent full mapping; a lone
  // character has no context, as in Rust's per-char to_lowercase.
  const int32_t len = u_strToLower(dst, 2 * kMaxLowercase, src, src_len, "", &err);
  if (U_FAILURE(err) || len <= 0) {
    out[0] = static_cast<char32_t>(u_tolower(uc));
    return 1;
  }
  return to_code_points(dst, len, out, kMaxLowercase);
}

bool is_word_char(char32_t c) {
  const auto uc = static_cast<UChar32>(c);
  return u_hasBinaryProperty(uc, UCHAR_ALPHABETIC) ||
         (U_GET_GC_MASK(uc) & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0 ||
         u_hasBinaryProperty(uc, UCHAR_JOIN_CONTROL);
}

}  // namespace tessera::model::unicode

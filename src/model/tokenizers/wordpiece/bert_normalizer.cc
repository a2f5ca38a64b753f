#include "model/tokenizers/wordpiece/bert_normalizer.h"

namespace tessera::model {

void BertNormalizer::normalize(char32_t c, NormalizedChar* out) const {
  out->count = 0;
  out->isolated = false;
  if (options_.clean_text) {
    if (c == 0 || c == 0xFFFD || unicode::is_control(c)) return;
    // \t \n \r are controls to Unicode but whitespace to BERT.
    if (c == U'\t' || c == U'\n' || c == U'\r' || unicode::is_whitespace(c)) c = U' ';
  }
  out->isolated = options_.handle_chinese_chars && unicode::is_chinese_char(c);

  char32_t decomposed[unicode::kMaxDecomposition];
  int n = 1;
  decomposed[0] = c;
  if (options_.strip_accents) {
    const int total = unicode::decompose(c, decomposed);
    n = 0;
    for (int i = 0; i < total; ++i) {
      if (!unicode::is_nonspacing_mark(decomposed[i])) decomposed[n++] = decomposed[i];
    }
  }
  for (int i = 0; i < n; ++i) {
    if (options_.lowercase) {
      out->count += unicode::to_lower(decomposed[i], out->cp + out->count);
    } else {
      out->cp[out->count++] = decomposed[i];
    }
  }
}

}  // namespace tessera::model

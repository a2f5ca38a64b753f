#include "npy_header.h"

#include <limits>

#include "runtime/bounded_text.h"
#include "runtime/npy_writer.h"

namespace tessera::cli {

namespace {

// Characters that end a bare word (a number, True, False).
constexpr std::string_view kDelimiters = " \t\r\n,:(){}[]'\"";
// Bytes of context shown after the position of a syntax error.
constexpr size_t kContextShown = 24;

// Cursor over the header text. Every method advances by at least one byte or
// fails, so a parse is one linear pass whatever the input.
class Scanner {
 public:
  Scanner(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  Status error(const std::string& problem) const {
    return invalid_argument(file_ + ": .npy header: " + problem);
  }
  // "at byte 12: 'abc...'": where a syntax error is, and what is there.
  std::string here() const {
    const std::string_view rest = text_.substr(pos_);
    if (rest.empty()) return "at the end of the header";
    std::string shown = quote_bounded(rest.substr(0, kContextShown));
    if (rest.size() > kContextShown) shown.insert(shown.size() - 1, "...");
    return "at byte " + std::to_string(pos_) + ": " + shown;
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\n')) {
      ++pos_;
    }
  }
  bool at_end() const { return pos_ == text_.size(); }
  // Skips whitespace, then consumes `c` if it is next.
  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Status expect(char c, const std::string& after) {
    if (consume(c)) return Status::Ok();
    return error(std::string("expected '") + c + "' " + after + ", " + here());
  }
  bool at_quote() {
    skip_space();
    return pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"');
  }
  // A Python string literal without escapes ('<f4' or "<f4").
  Status string_literal(const char* what, std::string_view* out) {
    if (!at_quote()) return error(std::string("expected a quoted ") + what + ", " + here());
    const char quote = text_[pos_];
    const size_t begin = pos_ + 1;
    const size_t end = text_.find(quote, begin);
    if (end == std::string_view::npos) {
      return error(std::string("unterminated string ") + what + " " + here());
    }
    *out = text_.substr(begin, end - begin);
    if (out->find('\\') != std::string_view::npos) {
      return error(std::string(what) + " " + quote_bounded(*out) +
                   " holds an escape sequence; NumPy never writes one here");
    }
    pos_ = end + 1;
    return Status::Ok();
  }
  // A run of non-delimiter bytes (possibly empty).
  std::string_view word() {
    skip_space();
    const size_t begin = pos_;
    while (pos_ < text_.size() && kDelimiters.find(text_[pos_]) == std::string_view::npos) ++pos_;
    return text_.substr(begin, pos_ - begin);
  }

 private:
  std::string_view text_;
  const std::string& file_;
  size_t pos_ = 0;
};

// A dim as NumPy writes it: decimal digits, optionally with Python 2's long
// suffix 'L' (files written by Python 2 NumPy say (3L, 4L)).
bool parse_dim(std::string_view word, int64_t* out) {
  if (!word.empty() && word.back() == 'L') word.remove_suffix(1);
  if (word.empty()) return false;
  int64_t value = 0;
  for (char c : word) {
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, c - '0', &value)) {
      return false;
    }
  }
  *out = value;
  return true;
}

Status parse_shape(Scanner& s, std::vector<int64_t>* shape) {
  TESSERA_RETURN_IF_ERROR(s.expect('(', "to open 'shape' (a tuple)"));
  bool trailing_comma = false;
  while (!s.consume(')')) {
    const std::string index = "shape[" + std::to_string(shape->size()) + "]";
    if (shape->size() == kNpyMaxRank) {
      return s.error("'shape' has more than " + std::to_string(kNpyMaxRank) + " dims");
    }
    const std::string_view word = s.word();
    if (word.empty()) return s.error("expected " + index + " (an integer), " + s.here());
    int64_t dim = 0;
    if (!parse_dim(word, &dim)) {
      return s.error(index + " = " + quote_bounded(word) + " is not an integer in [0, 2^63)");
    }
    shape->push_back(dim);
    trailing_comma = s.consume(',');
    if (!trailing_comma && !s.consume(')')) {
      return s.error("expected ',' or ')' after " + index + ", " + s.here());
    }
    if (!trailing_comma) break;
  }
  // Python reads (5) as the integer 5: NumPy writes a 1-tuple as (5,).
  if (shape->size() == 1 && !trailing_comma) {
    return s.error("'shape' (" + std::to_string((*shape)[0]) + ") is not a tuple; (" +
                   std::to_string((*shape)[0]) + ",) is");
  }
  return Status::Ok();
}

}  // namespace

int64_t checked_numel(const std::vector<int64_t>& shape) {
  int64_t nonzero = 1;
  bool any_zero = false;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d == 0) {
      any_zero = true;
    } else if (__builtin_mul_overflow(nonzero, d, &nonzero)) {
      return -1;
    }
  }
  return any_zero ? 0 : nonzero;
}

Status parse_npy_header(std::string_view text, const std::string& file, NpyHeader* out) {
  Scanner s(text, file);
  NpyHeader h;
  bool have_descr = false, have_order = false, have_shape = false;
  TESSERA_RETURN_IF_ERROR(s.expect('{', "at the start (the header is a dict)"));
  while (!s.consume('}')) {
    std::string_view key;
    TESSERA_RETURN_IF_ERROR(s.string_literal("key", &key));
    TESSERA_RETURN_IF_ERROR(s.expect(':', "after key " + quote_bounded(key)));
    bool* seen = key == "descr"           ? &have_descr
                 : key == "fortran_order" ? &have_order
                 : key == "shape"         ? &have_shape
                                          : nullptr;
    if (seen == nullptr) {
      return s.error("unknown key " + quote_bounded(key) +
                     " (expected 'descr', 'fortran_order' and 'shape')");
    }
    if (*seen) return s.error("key " + quote_bounded(key) + " appears twice");
    *seen = true;
    if (key == "descr") {
      if (!s.at_quote()) {
        return s.error(
            "'descr' must be a dtype string such as '<f4' (structured dtypes are "
            "not supported), " +
            s.here());
      }
      std::string_view descr;
      TESSERA_RETURN_IF_ERROR(s.string_literal("'descr'", &descr));
      h.descr = descr;
    } else if (key == "fortran_order") {
      const std::string_view word = s.word();
      if (word != "True" && word != "False") {
        return s.error("'fortran_order' = " + quote_bounded(word) + " must be True or False");
      }
      h.fortran_order = word == "True";
    } else {
      TESSERA_RETURN_IF_ERROR(parse_shape(s, &h.shape));
    }
    if (!s.consume(',')) {
      TESSERA_RETURN_IF_ERROR(s.expect('}', "after the value of " + quote_bounded(key)));
      break;
    }
  }
  s.skip_space();  // NumPy pads the header with spaces and a final '\n'
  if (!s.at_end()) return s.error("unexpected text after the dict " + s.here());
  for (const auto& [have, key] :
       {std::pair{have_descr, "'descr'"}, std::pair{have_order, "'fortran_order'"},
        std::pair{have_shape, "'shape'"}}) {
    if (!have) return s.error(std::string("has no ") + key);
  }
  if (checked_numel(h.shape) < 0) {
    return s.error("'shape' " + npy::shape_text(h.shape) + " has more than 2^63 elements");
  }
  *out = std::move(h);
  return Status::Ok();
}

}  // namespace tessera::cli

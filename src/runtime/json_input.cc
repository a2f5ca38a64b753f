#include "runtime/json_input.h"

#include "runtime/regular_file.h"

namespace tessera::json_input {

namespace {

using nlohmann::json;

// Containers deeper than this are shown as "[...]" / "{...}" in messages.
constexpr int kRenderDepth = 4;

// Appends a bounded rendering of `v`; stops adding once `out` passes `limit`.
// Recursion is bounded by kRenderDepth, not by the value.
void append(const json& v, int depth, size_t limit, std::string* out) {
  if (out->size() > limit) return;
  if (v.is_array() || v.is_object()) {
    const bool array = v.is_array();
    if (depth >= kRenderDepth && !v.empty()) {
      *out += array ? "[...]" : "{...}";
      return;
    }
    *out += array ? '[' : '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (out->size() > limit) return;  // the caller cuts and adds "..."
      if (!first) *out += ',';
      first = false;
      if (!array) {
        append(json(it.key().substr(0, limit)), depth + 1, limit, out);
        *out += ':';
      }
      append(*it, depth + 1, limit, out);
    }
    *out += array ? ']' : '}';
    return;
  }
  if (v.is_string()) {
    // Cut before dumping: a 100 MB string is not rendered whole. A cut may
    // split a UTF-8 sequence; `replace` turns the fragment into U+FFFD
    // instead of throwing.
    const auto& s = v.get_ref<const std::string&>();
    const json cut = s.size() > limit ? json(s.substr(0, limit + 1)) : json();
    *out += (cut.is_null() ? v : cut)
                .dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
    return;
  }
  *out += v.dump(-1, ' ', true, json::error_handler_t::replace);  // scalars: bounded
}

}  // namespace

int nesting_depth(std::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

Status parse(std::string_view text, std::string_view source, nlohmann::json* out, int max_depth) {
  // Checked before parsing so that neither the parser nor anything that later
  // walks the value recursively (dump, comparisons, copies) meets a deep value.
  if (nesting_depth(text, max_depth) > max_depth) {
    return invalid_argument(std::string(source) + ": JSON nests deeper than " +
                            std::to_string(max_depth) + " levels of arrays/objects");
  }
  try {
    *out = json::parse(text);
  } catch (const json::parse_error& e) {
    return invalid_argument(std::string(source) + ": not valid JSON: " + e.what());
  } catch (const json::exception& e) {
    // out_of_range 406: a number literal outside the double range (1e400).
    return invalid_argument(std::string(source) + ": JSON value out of range: " + e.what());
  } catch (const std::bad_alloc&) {
    return resource_exhausted(std::string(source) + ": out of memory parsing " +
                              std::to_string(text.size()) + " bytes of JSON");
  }
  return Status::Ok();
}

Status parse_file(const std::string& path, nlohmann::json* out, int max_depth) {
  std::string text;
  TESSERA_RETURN_IF_ERROR(read_regular_file(path, kMaxFileBytes, &text));
  return parse(text, path, out, max_depth);
}

std::string render(const nlohmann::json& value, size_t max_chars) {
  std::string s;
  try {
    append(value, 0, max_chars, &s);
  } catch (const std::exception&) {
    s += "?";  // rendering is for messages only; never let it fail the caller
  }
  if (s.size() > max_chars) s = s.substr(0, max_chars) + "...";
  return s;
}

std::string clip(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  size_t n = max_chars;
  // Back off over continuation bytes (10xxxxxx) to the start of a sequence.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return std::string(text.substr(0, n)) + "...";
}

std::string describe(const nlohmann::json& value, size_t max_chars) {
  return std::string(value.type_name()) + " " + render(value, max_chars);
}

}  // namespace tessera::json_input

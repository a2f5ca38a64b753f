#include "model/tokenizers/decoder.h"

#include <string_view>
#include <utility>

#include "model/tokenizer_utf8.h"
#include "model/tokenizers/byte_level_map.h"
#include "runtime/json_input.h"

namespace tessera::model::tokenizers {
namespace {

using nlohmann::json;

constexpr const char* kSupportedDecoders =
    "\"WordPiece\", \"ByteLevel\", \"Metaspace\", \"Replace\", \"Strip\", \"Fuse\", "
    "\"ByteFallback\", \"Sequence\" or null";
constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

void replace_every(std::string* s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  size_t at = 0;
  while ((at = s->find(from, at)) != std::string::npos) {
    s->replace(at, from.size(), to);
    at += to.size();
  }
}

// One step of decode_chain, as HF's decoder of that type.
void apply_step(const DecoderStep& step, std::vector<std::string>* tokens) {
  std::vector<std::string>& t = *tokens;
  switch (step.kind) {
    case DecoderStep::kWordPiece:
      for (size_t i = 0; i < t.size(); ++i) {
        if (i != 0) {
          if (!step.a.empty() && t[i].starts_with(step.a)) {
            t[i].erase(0, step.a.size());
          } else {
            t[i].insert(0, " ");
          }
        }
        if (step.flag) wordpiece_cleanup(&t[i]);
      }
      return;
    case DecoderStep::kByteLevel: {
      // A token all of whose characters are byte characters becomes those
      // bytes; any other token stays as it is. The bytes are read lossily.
      const ByteLevelMap& map = byte_level_map();
      std::string bytes, own;
      for (const std::string& token : t) {
        own.clear();
        bool all = true;
        for (size_t i = 0; i < token.size() && all;) {
          int len = 0;
          const char32_t c = decode_utf8(token.data() + i, &len);
          i += len;
          all = c < map.to_byte.size() && map.to_byte[c] >= 0;
          if (all) own.push_back(static_cast<char>(map.to_byte[c]));
        }
        bytes += all ? own : token;
      }
      t.assign(1, utf8_lossy(bytes));
      return;
    }
    case DecoderStep::kMetaspace:
      // HF drops every replacement of the first token (not only a leading
      // one) when a prefix may have been prepended; elsewhere it is a space.
      for (size_t i = 0; i < t.size(); ++i) {
        replace_every(&t[i], step.a, i == 0 && step.flag ? "" : " ");
      }
      return;
    case DecoderStep::kReplace:
      for (std::string& token : t) replace_every(&token, step.a, step.b);
      return;
    case DecoderStep::kStrip:
      for (std::string& token : t) {
        size_t left = 0, right = 0;
        std::string_view rest = token;
        while (left < step.start && rest.starts_with(step.a)) {
          rest.remove_prefix(step.a.size());
          ++left;
        }
        while (right < step.stop && rest.ends_with(step.a)) {
          rest.remove_suffix(step.a.size());
          ++right;
        }
        token = std::string(rest);
      }
      return;
    case DecoderStep::kFuse: {
      std::string all;
      for (const std::string& token : t) all += token;
      t.assign(1, all);
      return;
    }
    case DecoderStep::kByteFallback: {
      // Runs of <0xXX> tokens become their bytes when those are valid UTF-8,
      // else one U+FFFD per byte token.
      std::vector<std::string> out;
      std::string bytes;
      size_t run = 0;
      const auto flush = [&] {
        if (run == 0) return;
        if (find_invalid_utf8(bytes) == bytes.size()) {
          out.push_back(bytes);
        } else {
          for (size_t k = 0; k < run; ++k) out.emplace_back(kReplacementChar);
        }
        bytes.clear();
        run = 0;
      };
      for (std::string& token : t) {
        unsigned value = 0;
        if (token.size() == 6 && token.starts_with("<0x") && token[5] == '>' &&
            std::sscanf(token.c_str() + 3, "%2x", &value) == 1) {
          bytes.push_back(static_cast<char>(value));
          ++run;
          continue;
        }
        flush();
        out.push_back(std::move(token));
      }
      flush();
      t = std::move(out);
      return;
    }
  }
}

Status read_decoder_step(const JsonFields& f, const json& d, const std::string& field,
                         std::vector<DecoderStep>* steps, std::string* unknown) {
  const std::string type = JsonFields::type_of(d);
  const std::string prefix = field + ".";
  DecoderStep s{};
  if (type == "WordPiece") {
    s.kind = DecoderStep::kWordPiece;
    s.a = "##";
    s.flag = true;
    TESSERA_RETURN_IF_ERROR(f.get_string(d, prefix, "prefix", &s.a));
    TESSERA_RETURN_IF_ERROR(f.get_bool(d, prefix, "cleanup", &s.flag));
  } else if (type == "ByteLevel") {
    s.kind = DecoderStep::kByteLevel;
  } else if (type == "Metaspace") {
    s.kind = DecoderStep::kMetaspace;
    s.a = "\xE2\x96\x81";  // U+2581
    TESSERA_RETURN_IF_ERROR(f.get_string(d, prefix, "replacement", &s.a));
    std::string scheme = "always";
    bool add_prefix_space = true;  // the field before prepend_scheme existed
    TESSERA_RETURN_IF_ERROR(f.get_bool(d, prefix, "add_prefix_space", &add_prefix_space));
    if (!add_prefix_space) scheme = "never";
    TESSERA_RETURN_IF_ERROR(f.get_string(d, prefix, "prepend_scheme", &scheme));
    s.flag = scheme != "never";
  } else if (type == "Replace") {
    s.kind = DecoderStep::kReplace;
    const auto pattern = d.find("pattern");
    if (pattern == d.end() || !pattern->is_object() || !pattern->contains("String") ||
        !(*pattern)["String"].is_string()) {
      return f.unsupported_value(prefix + "pattern", pattern == d.end() ? json() : *pattern,
                                 "a {\"String\": ...} pattern");
    }
    s.a = (*pattern)["String"].get<std::string>();
    TESSERA_RETURN_IF_ERROR(f.get_string(d, prefix, "content", &s.b));
  } else if (type == "Strip") {
    s.kind = DecoderStep::kStrip;
    TESSERA_RETURN_IF_ERROR(f.get_string(d, prefix, "content", &s.a));
    for (const char* key : {"start", "stop"}) {
      const auto it = d.find(key);
      if (it == d.end()) continue;
      if (!it->is_number_unsigned()) {
        return f.error(prefix + key,
                       "must be a non-negative integer, not " + json_input::render(*it));
      }
      (std::string_view(key) == "start" ? s.start : s.stop) = it->get<size_t>();
    }
  } else if (type == "Fuse") {
    s.kind = DecoderStep::kFuse;
  } else if (type == "ByteFallback") {
    s.kind = DecoderStep::kByteFallback;
  } else if (type == "Sequence") {
    const auto list = d.find("decoders");
    if (list == d.end() || !list->is_array()) {
      return f.error(prefix + "decoders", "must be an array");
    }
    for (size_t i = 0; i < list->size(); ++i) {
      TESSERA_RETURN_IF_ERROR(read_decoder_step(
          f, (*list)[i], prefix + "decoders[" + std::to_string(i) + "]", steps, unknown));
    }
    return Status::Ok();
  } else {
    if (unknown->empty()) {
      *unknown = field + " is " + json_input::render(d.is_object() ? d.value("type", json()) : d);
    }
    return Status::Ok();
  }
  steps->push_back(std::move(s));
  return Status::Ok();
}

const char* step_name(DecoderStep::Kind k) {
  switch (k) {
    case DecoderStep::kWordPiece:
      return "WordPiece";
    case DecoderStep::kByteLevel:
      return "ByteLevel";
    case DecoderStep::kMetaspace:
      return "Metaspace";
    case DecoderStep::kReplace:
      return "Replace";
    case DecoderStep::kStrip:
      return "Strip";
    case DecoderStep::kFuse:
      return "Fuse";
    case DecoderStep::kByteFallback:
      return "ByteFallback";
  }
  return "?";
}

}  // namespace

void wordpiece_cleanup(std::string* piece) {
  // HF's list, in HF's order (an earlier rule's output can feed a later one).
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_every(piece, from, to);
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  while (!bytes.empty()) {
    const size_t bad = find_invalid_utf8(bytes);
    out.append(bytes.substr(0, bad));
    if (bad == bytes.size()) break;
    // The maximal prefix of a valid sequence that starts at `bad` is one
    // error: skip the lead byte and the continuation bytes it accepts.
    const auto* s = reinterpret_cast<const unsigned char*>(bytes.data() + bad);
    const size_t left = bytes.size() - bad;
    size_t skip = 1;
    const unsigned char b = s[0];
    size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      need = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 3;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 4;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    }
    if (need > 0 && left > 1 && s[1] >= lo && s[1] <= hi) {
      skip = 2;
      while (skip < need && skip < left && (s[skip] & 0xC0) == 0x80) ++skip;
    }
    out.append(kReplacementChar);
    bytes.remove_prefix(bad + skip);
  }
  return out;
}

Decoder Decoder::wordpiece(std::string prefix, bool cleanup) {
  Decoder d;
  d.none_ = false;
  d.steps_.push_back({DecoderStep::kWordPiece, std::move(prefix), "", cleanup});
  return d;
}

Status Decoder::read(const JsonFields& f, const json& root, Decoder* out) {
  Decoder d;
  const auto it = root.find("decoder");
  if (it != root.end() && !it->is_null()) {
    if (!it->is_object()) return f.error("decoder", "must be an object or null");
    d.none_ = false;
    TESSERA_RETURN_IF_ERROR(read_decoder_step(f, *it, "decoder", &d.steps_, &d.unsupported_));
  }
  *out = std::move(d);
  return Status::Ok();
}

Status Decoder::decode(std::vector<std::string> tokens, std::string* out) const {
  out->clear();
  if (!unsupported_.empty()) {
    return unsupported("the tokenizer's " + unsupported_ + "; tessera decodes with " +
                       kSupportedDecoders);
  }
  if (none_) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i) out->push_back(' ');
      out->append(tokens[i]);
    }
    return Status::Ok();
  }
  for (const DecoderStep& step : steps_) apply_step(step, &tokens);
  for (const std::string& t : tokens) out->append(t);
  return Status::Ok();
}

std::string Decoder::describe() const {
  if (none_) return "none (tokens joined by spaces)";
  if (!unsupported_.empty()) return unsupported_ + " (decode unsupported)";
  std::string s;
  for (const DecoderStep& step : steps_) {
    s += (s.empty() ? "" : " + ") + std::string(step_name(step.kind));
  }
  return s;
}

}  // namespace tessera::model::tokenizers

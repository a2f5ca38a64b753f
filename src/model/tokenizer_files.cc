#include "model/tokenizer_files.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "model/tokenizer_unicode.h"
#include "model/tokenizer_utf8.h"
#include "runtime/json_input.h"
#include "runtime/regular_file.h"

namespace tessera::model {
namespace {

using nlohmann::json;

constexpr const char* kBertSpecialTokens[] = {"[UNK]", "[SEP]", "[CLS]", "[PAD]", "[MASK]"};

// Accessors that turn a missing or mistyped field into an error naming it.
class Fields {
 public:
  explicit Fields(const std::string& path) : path_(path) {}

  Status error(const std::string& field, const std::string& problem) const {
    return invalid_argument(path_ + ": " + field + " " + problem);
  }
  Status unsupported_value(const std::string& field, const json& value,
                           const std::string& supported) const {
    return unsupported(path_ + ": " + field + " is " + json_input::render(value) +
                       "; tessera supports " + supported);
  }
  Status unsupported_field(const std::string& field, const std::string& problem) const {
    return unsupported(path_ + ": " + field + " " + problem);
  }
  Status get_bool(const json& obj, const std::string& prefix, const char* key, bool* out) const {
    const auto it = obj.find(key);
    if (it == obj.end()) return Status::Ok();  // keep the default
    if (!it->is_boolean()) {
      return error(prefix + key, "must be true or false, not " + json_input::render(*it));
    }
    *out = it->get<bool>();
    return Status::Ok();
  }
  Status get_string(const json& obj, const std::string& prefix, const char* key,
                    std::string* out) const {
    const auto it = obj.find(key);
    if (it == obj.end()) return Status::Ok();
    if (!it->is_string()) {
      return error(prefix + key, "must be a string, not " + json_input::render(*it));
    }
    *out = it->get<std::string>();
    return Status::Ok();
  }
  Status get_id(const json& value, const std::string& field, int32_t* out) const {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
        value.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return error(
          field, "must be a token id (an integer in [0, 2^31)), not " + json_input::render(value));
    }
    *out = static_cast<int32_t>(value.get<int64_t>());
    return Status::Ok();
  }

 private:
  const std::string& path_;
};

Status read_model(const Fields& f, const json& model, TokenizerSpec* out) {
  if (!model.is_object()) return f.error("model", "must be an object");
  const auto type = model.find("type");
  if (type == model.end() || *type != "WordPiece") {
    return f.unsupported_value("model.type", type == model.end() ? json() : *type,
                               "\"WordPiece\" (BERT-family tokenizers)");
  }
  const auto vocab = model.find("vocab");
  if (vocab == model.end() || !vocab->is_object()) {
    return f.error("model.vocab", "must be an object mapping tokens to ids");
  }
  out->vocab.reserve(vocab->size());
  for (const auto& [token, id] : vocab->items()) {
    int32_t value = 0;
    TESSERA_RETURN_IF_ERROR(
        f.get_id(id, "model.vocab[\"" + json_input::clip(token) + "\"]", &value));
    out->vocab.emplace_back(token, value);
  }
  TESSERA_RETURN_IF_ERROR(f.get_string(model, "model.", "unk_token", &out->wordpiece.unk_token));
  TESSERA_RETURN_IF_ERROR(f.get_string(model, "model.", "continuing_subword_prefix",
                                       &out->wordpiece.continuing_subword_prefix));
  if (const auto it = model.find("max_input_chars_per_word"); it != model.end()) {
    if (!it->is_number_unsigned()) {
      return f.error("model.max_input_chars_per_word",
                     "must be a non-negative integer, not " + json_input::render(*it));
    }
    out->wordpiece.max_input_chars_per_word = it->get<size_t>();
  }
  return Status::Ok();
}

Status read_normalizer(const Fields& f, const json& root, BertNormalizerOptions* out) {
  const auto it = root.find("normalizer");
  if (it == root.end() || it->is_null()) {
    *out = {false, false, false, false};  // no normalizer: text as is
    return Status::Ok();
  }
  const json& n = *it;
  if (!n.is_object() || n.value("type", "") != "BertNormalizer") {
    return f.unsupported_value("normalizer", n.is_object() ? n.value("type", json()) : n,
                               "\"BertNormalizer\" or null");
  }
  *out = {};
  TESSERA_RETURN_IF_ERROR(f.get_bool(n, "normalizer.", "clean_text", &out->clean_text));
  TESSERA_RETURN_IF_ERROR(
      f.get_bool(n, "normalizer.", "handle_chinese_chars", &out->handle_chinese_chars));
  TESSERA_RETURN_IF_ERROR(f.get_bool(n, "normalizer.", "lowercase", &out->lowercase));
  // strip_accents: null means "same as lowercase" (BERT's rule).
  out->strip_accents = out->lowercase;
  const auto strip = n.find("strip_accents");
  if (strip != n.end() && !strip->is_null()) {
    TESSERA_RETURN_IF_ERROR(f.get_bool(n, "normalizer.", "strip_accents", &out->strip_accents));
  }
  return Status::Ok();
}

Status read_pre_tokenizer(const Fields& f, const json& root) {
  const auto it = root.find("pre_tokenizer");
  const json value = it == root.end() ? json() : *it;
  if (!value.is_object() || value.value("type", "") != "BertPreTokenizer") {
    return f.unsupported_value("pre_tokenizer",
                               value.is_object() ? value.value("type", json()) : value,
                               "\"BertPreTokenizer\"");
  }
  return Status::Ok();
}

// The id of special token `name` of a TemplateProcessing post-processor.
Status template_special_id(const Fields& f, const json& pp, const json& piece,
                           const std::string& field, int32_t* out) {
  const auto special = piece.find("SpecialToken");
  if (!piece.is_object() || special == piece.end() || !special->contains("id")) {
    return f.error(field,
                   "must be a SpecialToken for [CLS] A [SEP], not " + json_input::render(piece));
  }
  const std::string name = special->value("id", "");
  const json* entry = nullptr;
  if (const auto st = pp.find("special_tokens"); st != pp.end() && st->contains(name)) {
    entry = &(*st)[name];
  }
  if (entry == nullptr || !entry->contains("ids") || !(*entry)["ids"].is_array() ||
      (*entry)["ids"].size() != 1) {
    return f.error("post_processor.special_tokens[\"" + json_input::clip(name) + "\"].ids",
                   "must hold exactly one id");
  }
  return f.get_id((*entry)["ids"][0],
                  "post_processor.special_tokens[\"" + json_input::clip(name) + "\"].ids[0]", out);
}

Status read_post_processor(const Fields& f, const json& root, TokenizerSpec* out) {
  const auto it = root.find("post_processor");
  const json pp = it == root.end() ? json() : *it;
  const std::string type = pp.is_object() ? pp.value("type", "") : "";
  if (type == "TemplateProcessing") {
    const auto single = pp.find("single");
    if (single == pp.end() || !single->is_array() || single->size() != 3 ||
        !(*single)[1].contains("Sequence")) {
      return f.unsupported_value("post_processor.single", single == pp.end() ? json() : *single,
                                 "the template [CLS] $A [SEP]");
    }
    int32_t cls = 0, sep = 0;
    TESSERA_RETURN_IF_ERROR(
        template_special_id(f, pp, (*single)[0], "post_processor.single[0]", &cls));
    TESSERA_RETURN_IF_ERROR(
        template_special_id(f, pp, (*single)[2], "post_processor.single[2]", &sep));
    out->cls_id = cls;
    out->sep_id = sep;
    return Status::Ok();
  }
  if (type == "BertProcessing") {
    int32_t ids[2] = {0, 0};
    const char* keys[2] = {"cls", "sep"};
    for (int i = 0; i < 2; ++i) {
      const auto pair = pp.find(keys[i]);
      if (pair == pp.end() || !pair->is_array() || pair->size() != 2) {
        return f.error(std::string("post_processor.") + keys[i], "must be [token, id]");
      }
      TESSERA_RETURN_IF_ERROR(
          f.get_id((*pair)[1], std::string("post_processor.") + keys[i] + "[1]", &ids[i]));
    }
    out->cls_id = ids[0];
    out->sep_id = ids[1];
    return Status::Ok();
  }
  return f.unsupported_value("post_processor", pp.is_object() ? pp.value("type", json()) : pp,
                             "\"TemplateProcessing\" ([CLS] $A [SEP]) or \"BertProcessing\"");
}

Status read_added_tokens(const Fields& f, const json& root, std::vector<AddedToken>* out) {
  const auto it = root.find("added_tokens");
  if (it == root.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return f.error("added_tokens", "must be an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const json& t = (*it)[i];
    const std::string field = "added_tokens[" + std::to_string(i) + "]";
    if (!t.is_object() || !t.contains("id") || !t.contains("content")) {
      return f.error(field, "must be an object with id and content");
    }
    AddedToken token;
    TESSERA_RETURN_IF_ERROR(f.get_id(t["id"], field + ".id", &token.id));
    TESSERA_RETURN_IF_ERROR(f.get_string(t, field + ".", "content", &token.content));
    TESSERA_RETURN_IF_ERROR(f.get_bool(t, field + ".", "single_word", &token.single_word));
    TESSERA_RETURN_IF_ERROR(f.get_bool(t, field + ".", "lstrip", &token.lstrip));
    TESSERA_RETURN_IF_ERROR(f.get_bool(t, field + ".", "rstrip", &token.rstrip));
    TESSERA_RETURN_IF_ERROR(f.get_bool(t, field + ".", "special", &token.special));
    bool normalized = false;
    TESSERA_RETURN_IF_ERROR(f.get_bool(t, field + ".", "normalized", &normalized));
    if (normalized) {
      // HF matches these in the normalized text; no BERT model we know needs it.
      return f.unsupported_field(field + ".normalized",
                                 "is true for \"" + json_input::clip(token.content) +
                                     "\"; tessera supports added tokens matched in the raw text "
                                     "(normalized: false) only");
    }
    out->push_back(std::move(token));
  }
  return Status::Ok();
}

// The decoder, read only for decode(): a type tessera cannot decode with is
// kept by name, so loading still works and decode() says why it cannot.
Status read_decoder(const Fields& f, const json& root, WordPieceDecoderOptions* out) {
  const auto it = root.find("decoder");
  if (it == root.end() || it->is_null()) {
    out->type.clear();
    return Status::Ok();
  }
  if (!it->is_object()) return f.error("decoder", "must be an object or null");
  TESSERA_RETURN_IF_ERROR(f.get_string(*it, "decoder.", "type", &out->type));
  if (out->type != "WordPiece") return Status::Ok();
  TESSERA_RETURN_IF_ERROR(f.get_string(*it, "decoder.", "prefix", &out->prefix));
  return f.get_bool(*it, "decoder.", "cleanup", &out->cleanup);
}

// Rust str::trim_end: drops trailing White_Space characters.
std::string_view trim_end(std::string_view line) {
  while (!line.empty()) {
    size_t start = line.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(line[start]) & 0xC0) == 0x80) --start;
    int len = 0;
    if (!unicode::is_whitespace(decode_utf8(line.data() + start, &len))) break;
    line.remove_suffix(line.size() - start);
  }
  return line;
}

}  // namespace

Status read_tokenizer_json(const std::string& path, TokenizerSpec* out) {
  std::string text;
  TESSERA_RETURN_IF_ERROR(read_regular_file(path, json_input::kMaxFileBytes, &text));
  json root;
  TESSERA_RETURN_IF_ERROR(json_input::parse(text, path, &root));
  const Fields f(path);
  if (!root.is_object()) return f.error("the top level", "must be a JSON object");
  TokenizerSpec spec;
  try {
    const auto model = root.find("model");
    if (model == root.end()) return f.error("model", "is missing");
    TESSERA_RETURN_IF_ERROR(read_model(f, *model, &spec));
    TESSERA_RETURN_IF_ERROR(read_normalizer(f, root, &spec.normalizer));
    TESSERA_RETURN_IF_ERROR(read_pre_tokenizer(f, root));
    TESSERA_RETURN_IF_ERROR(read_post_processor(f, root, &spec));
    TESSERA_RETURN_IF_ERROR(read_added_tokens(f, root, &spec.added_tokens));
    TESSERA_RETURN_IF_ERROR(read_decoder(f, root, &spec.decoder));
    if (const auto pad = root.find("padding"); pad != root.end() && pad->is_object()) {
      int32_t id = 0;
      if (pad->contains("pad_id")) {
        TESSERA_RETURN_IF_ERROR(f.get_id((*pad)["pad_id"], "padding.pad_id", &id));
        spec.pad_id = id;
      }
    }
  } catch (const json::exception& e) {
    // A field of an unexpected JSON type that the checks above did not foresee.
    return invalid_argument(path + ": unexpected content (" + e.what() + ")");
  }
  *out = std::move(spec);
  return Status::Ok();
}

Status read_vocab_txt(const std::string& path, TokenizerSpec* out) {
  std::string text;
  TESSERA_RETURN_IF_ERROR(read_regular_file(path, json_input::kMaxFileBytes, &text));
  if (const size_t bad = find_invalid_utf8(text); bad != text.size()) {
    size_t line = 1;
    for (size_t i = 0; i < bad; ++i) line += text[i] == '\n';
    return invalid_argument(path + ": invalid UTF-8 at byte offset " + std::to_string(bad) +
                            " (line " + std::to_string(line) + ")");
  }
  TokenizerSpec spec;
  std::string_view rest = text;
  int32_t id = 0;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    spec.vocab.emplace_back(std::string(trim_end(line)), id++);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  }
  if (spec.vocab.empty()) return invalid_argument(path + ": the vocabulary is empty");
  // Later duplicates win, as in the WordPiece map; the added tokens use the
  // same ids.
  for (const char* special : kBertSpecialTokens) {
    for (auto it = spec.vocab.rbegin(); it != spec.vocab.rend(); ++it) {
      if (it->first == special) {
        spec.added_tokens.push_back({.content = special, .id = it->second, .special = true});
        break;
      }
    }
  }
  *out = std::move(spec);
  return Status::Ok();
}

}  // namespace tessera::model
